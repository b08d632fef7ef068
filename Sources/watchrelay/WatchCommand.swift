import CLIArguments
import Foundation
import LineProtocol
import Primitives
import RelayClient
import RelayCommand
import RelayProtocol
import RelayServer
import SQLite
import TestClock
import WatchApp

/// `watchrelay watch`: the headless Apple Watch.
enum WatchCommand {
    static let help = """
        USAGE: watchrelay watch --relay URL [--pair CODE] [--state DIR] [options]

        The headless watch: pairs by code, stores every favorites snapshot, reloads its widgets
        (WidgetKit semantics: timelines, reload policies, a rolling 24 h budget) and shows a
        profile's repos from the phone.

        OPTIONS:
          --relay URL          the relay (ws://127.0.0.1:8765/v1)
          --pair CODE          join the phone showing this 6-digit code
          --state DIR          state directory (default ./watch-state)
          --name NAME          device name (default "Apple Watch")
          --background         start with the watch app in the background (not reachable)
          --no-budget          debug switch: widget reloads cost no budget
          --budget N           daily reload budget of every widget (default 70, 75 on the face)
          --manual-clock MS    the widget clock starts at MS (milliseconds since 1970) and moves
                               only with the `advance SECONDS` command (for scripts and tests)
          --once               show the newest state the relay holds for this watch, then exit:
                               handle (store and ack) what the relay has, or wait for a first
                               snapshot if there is none (up to --wait-s); print the widgets.
                               A watch that is not paired (and no --pair CODE) fails at once
                               (exit 1). With --json every failure is one line on stdout,
                               {"error":{"code":…,"message":…}}: not_paired, timeout, the
                               relay's code (pairing_code_invalid…), or failed
          --wait-s S           how long --once waits for the relay (default 5); a relay
                               that can't be reached fails it after S (exit 1)
          --json               print JSON instead of the watch-like text frames: standard
                               output is JSON only, one object per line; events, answers
                               and errors go to standard error
          --machine            the line protocol for programs (Simulator/README.md): one JSON
                               object per stdout line (`ready`, a `response` per request, `event`s:
                               snapshot, reloaded, stale, rendered, profile, deleteAccepted,
                               deleteCompleted, paired, activated, disconnected, reachability,
                               companionAppInstalled, error); requests are the commands below or
                               {"id":1,"command":"open","args":["octocat"]}; bad input answers
                               ok=false code=bad_request; end of stdin stops the watch
          --snapshot DIR       write SVG pictures of the widgets, the favorites (and the repo
                               list) into DIR
          --console            publish the widget faces (SVG) to the relay's console whenever
                               they may have changed (`faces` frames; shown by `serve --console`)
          --reconnect-backoff LIST  seconds between reconnect attempts, the last one
                               repeating (default 0.05,0.2,0.5,1,2,5), e.g. 0.05,0.1,0.2
          --log-level LEVEL    debug, info, warn, error (default info)
          -h, --help           show this help

        COMMANDS (stdin lines in interactive mode):
        \(WatchConsoleCommand.helpText.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "background", "no-budget", "once", "json", "machine", "console"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        // Required, but said after the unknown options (`watch --bogus` is not missing --relay).
        let relayOption = try args.string("relay")
        let code = try args.string("pair")
        if let code { try CLI.requirePairingCode(code) }
        let state = try args.string("state") ?? "watch-state"
        let name = try args.string("name") ?? "Apple Watch"
        let background = args.flag("background")
        let noBudget = args.flag("no-budget")
        let once = args.flag("once")
        let json = args.flag("json")
        let machine = args.flag("machine")
        let svgDirectory = try args.string("snapshot")
        // Before connecting: `--once` would show the widgets first, then fail on the pictures.
        if let svgDirectory { try DirectoryError.check(svgDirectory, option: "--snapshot") }
        let publishesFaces = args.flag("console")
        let waitText = try args.string("wait-s")
        guard let wait = Double(waitText ?? "5"), wait.isFinite, (0...3600).contains(wait) else {
            throw Arguments.UsageError(description: "--wait-s must be a number of seconds in 0...3600, not '\(waitText ?? "")'")
        }
        if waitText != nil && !once { throw Arguments.UsageError(description: "--wait-s is for --once") }
        if machine && (once || json) { throw Arguments.UsageError(description: "--machine speaks JSON lines itself: not with --once or --json") }
        var rules = WidgetRules()
        if let budget = try args.int("budget", in: WatchMachineLimits.budget) {
            rules = WidgetRules(smartStackBudget: budget, watchFaceBudget: budget)
        }
        let manualClock = try args.int("manual-clock", in: 0...Int(Int64.max / 2)).map {
            ManualClock(Timestamp(millisecondsSinceEpoch: Int64($0)))
        }
        let backoff = try CLI.reconnectBackoff(&args)
        let log = try CLI.logger(&args, component: "watch")
        try args.rejectUnknown()
        guard let relay = relayOption else { throw Arguments.UsageError(description: "--relay URL is required") }
        try CLI.requireWebSocketURL(relay)

        let watch = try HeadlessWatch(
            relayURL: relay, stateDirectory: state, deviceName: name, foreground: !background, rules: rules,
            clock: manualClock.map { Clock.manual($0) } ?? .system, relayClock: manualClock.map { _ in .system },
            publishesFaces: publishesFaces,
            reconnectBackoff: backoff)
        if noBudget { try await watch.setNoBudget(true) }
        // Before `ready`: a driver that sends SIGTERM as soon as it reads that line is heard.
        let termination = once ? nil : await TerminationSignal.install()
        if machine, let termination {
            // Like the phone: a relay that cannot be reached is said in `ready` (`activated`
            // false) and an `error` event, and the watch keeps trying (`activated` follows).
            var activationError: (any Error)?
            do { try await watch.start() } catch { activationError = error }
            let paired = await watch.session.status().isPaired
            StandardOutput.writeLine(
                MachineProtocol.ready(
                    role: "watch",
                    [
                        "state": .string(state), "pid": .int(Int64(getpid())), "paired": .bool(paired),
                        "activated": .bool(activationError == nil),
                        "nowMs": .int(watch.clock.now().millisecondsSinceEpoch), "manualClock": .bool(manualClock != nil),
                    ]))
            if let activationError {
                StandardOutput.writeLine(WatchMachine.line(.error(.relay(activationError, "relay")), now: watch.clock.now()))
            }
            if let code {
                let request = MachineProtocol.Request(id: nil, words: ["pair", code])
                StandardOutput.writeLine(await WatchMachine.run(request, on: watch, clock: manualClock).0)
            }
            await WatchMachine.run(watch, manualClock: manualClock, until: termination)
            return 0
        }
        // With --once --json, stdout says every failure as one JSON object (a script reading it
        // got nothing when the relay could not be reached or a code was refused).
        func rest() async throws -> Int32 {
            if once {
                // Nothing can ever arrive for a watch that is not paired: said now, not after
                // --wait-s with an empty state and exit 0.
                if code == nil, await !watch.session.status().isPaired { throw WatchNotPaired(state: state) }
                try await startOnce(watch, within: wait)
            } else if code == nil {
                // Like the phone: a relay that cannot be reached yet is said, and the watch keeps
                // trying (`activated` follows when it gets through).
                do { try await watch.start() } catch {
                    log.warning("relay: \(error): the watch keeps trying and says 'activated' when it gets through")
                }
            } else {
                // Joining with a code needs the relay now: without it, say so and exit 1.
                try await watch.start()
            }
            if let code, await watch.session.status().isPaired {
                // Running the README's command again: the watch joined with this code already.
                log.warning("already paired: --pair \(code) is ignored (to join another phone, start with a new --state directory)")
            } else if let code {
                try await watch.pair(code: code)
                // --once prints no events, so it says it here (with --json, stdout is JSON only).
                // The live view says `paired with PEER` itself, in the order it happened: a line
                // printed here came before the events it prints once it starts, and read
                // `paired`, `activated (paired: false)`, `paired with iPhone`.
                if once { if json { log.info("paired") } else { StandardOutput.writeLine("paired") } }
            } else if await !watch.session.status().isPaired {
                // The relay ended the pair while the watch was away (its token is revoked).
                if once { throw WatchNotPaired(state: state) }
                log.warning(
                    "not paired: start the phone with --pair (or type 'pair' there), then pass its code with --pair CODE"
                        + (once ? "" : " or type 'pair CODE'"))
            }
            let printer = WatchPrinter(json: json, svgDirectory: svgDirectory)
            if once {
                await showNewest(watch, seconds: wait, manualClock: manualClock != nil)
                try await printer.show(watch)
                await watch.stop()
                return 0
            }
            log.info("watch running", ("relay", relay), ("state", state))
            if let termination { await interactive(watch, printer: printer, clock: manualClock, until: termination) }
            await watch.stop()
            return 0
        }
        do {
            return try await rest()
        } catch {
            if once && json { StandardOutput.writeLine(Self.onceErrorLine(error)) }
            throw error
        }
    }

    /// `{"error":{"code":…,"message":…}}`: a `--once --json` run's failure, on stdout. The code is
    /// `not_paired`, the relay's or the session's (``RelaySessionError/code``: `timeout`,
    /// `pairing_code_invalid`, …), or `failed`.
    static func onceErrorLine(_ error: any Error) -> String {
        let code: String
        switch error {
        case is WatchNotPaired: code = "not_paired"
        case let session as RelaySessionError: code = session.code
        default: code = "failed"
        }
        return MachineProtocol.line(["error": ["code": .string(code), "message": .string("\(error)")]])
    }

    /// `--once`: activates, giving up once `seconds` passed and a connection attempt failed
    /// (the relay can't be reached), with the error the request timeout would have ended it
    /// with; until then an activation that timed out because the relay can't be reached is tried
    /// again (a `--wait-s` longer than the request timeout gave up at the request timeout). A
    /// relay that is reached but slow to welcome gets the request timeout, as without --once.
    private static func startOnce(_ watch: HeadlessWatch, within seconds: Double) async throws {
        let (outcomes, outcome) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        let giveUp = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        // Not a task group: leaving one waits for its children, and `start()` for the timeout.
        let starting = Task {
            var tries = 0
            while true {
                do {
                    // A started watch's session activates on its own; asking again waits for it.
                    if tries == 0 { try await watch.start() } else { try await watch.session.activate() }
                    outcome.yield(.success(()))
                } catch {
                    tries += 1
                    let unreachable = await watch.session.status().lastConnectFailure != nil
                    if unreachable && ContinuousClock.now < giveUp && !Task.isCancelled { continue }
                    outcome.yield(.failure(error))
                }
                return
            }
        }
        let deadline = Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            while !Task.isCancelled {
                if let failure = await watch.session.status().lastConnectFailure {
                    let error = RelaySessionError.timeout("the relay's welcome (the last connection attempt: \(failure))")
                    outcome.yield(.failure(error))
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { deadline.cancel() }
        for await result in outcomes {
            if case .failure = result { starting.cancel() }
            return try result.get()
        }
    }

    /// `--once`: handles what the relay holds for this watch (so the newest snapshot is stored
    /// and acked), or waits for a first snapshot if none is stored; at most `seconds` in all.
    /// Then runs the widget work due within a second (the reload's debounce).
    private static func showNewest(_ watch: HeadlessWatch, seconds: Double, manualClock: Bool) async {
        let events = watch.events
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await watch.caughtUp()
                } catch {
                    // Not connected: show what is stored (or wait for a first snapshot).
                }
                if await watch.current.favorites.snapshot != nil { return }
                for await event in events {
                    if case .snapshotStored = event { return }
                }
            }
            group.addTask { try? await Task.sleep(for: .milliseconds(Int(seconds * 1000))) }
            await group.next()
            group.cancelAll()
        }
        if manualClock {
            await watch.flush()
        } else {
            await watch.settle(within: .seconds(1))
        }
    }

    /// Until `quit`, the end of standard input, SIGINT, SIGTERM or SIGHUP.
    private static func interactive(
        _ watch: HeadlessWatch, printer: WatchPrinter, clock: ManualClock?, until termination: TerminationSignal
    ) async {
        let lines = CLI.standardInputLines()
        // One snapshot reloads every widget at once: the faces are printed once the burst is
        // over (nothing new for 100 ms, at most a second), not once per reload.
        let redraws = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let changes = LockedState((seen: 0, printed: 0))
        await withTaskGroup(of: Void.self) { group in
            // The live view: every reload, stale report and delete shows as it happens.
            group.addTask {
                for await event in watch.events {
                    if let line = WatchPrinter.describe(event) { printer.say(line) }
                    if case .widget(let w) = event, w.reload != nil || w.staleReport != nil {
                        changes.withLock { $0.seen += 1 }
                        redraws.continuation.yield()
                    }
                }
                redraws.continuation.finish()
            }
            group.addTask {
                for await _ in redraws.stream {
                    var settled = false
                    var waits = 0
                    while !settled && waits < 10 {  // a steady stream of reloads still shows each second
                        waits += 1
                        let before = changes.withLock { $0.seen }
                        try? await Task.sleep(for: .milliseconds(100))
                        settled = changes.withLock { $0.seen } == before
                    }
                    let due = changes.withLock { state -> Bool in
                        defer { state.printed = state.seen }
                        return state.printed != state.seen
                    }
                    if due { try? await printer.show(watch) }
                }
            }
            group.addTask {
                for await line in lines {
                    if await !command(line, watch: watch, printer: printer, clock: clock) { break }
                }
            }
            group.addTask { await termination.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Runs one stdin command; false on `quit`.
    private static func command(
        _ line: String, watch: HeadlessWatch, printer: WatchPrinter, clock: ManualClock?
    ) async -> Bool {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first, !first.hasPrefix("#") else { return true }
        let command: WatchConsoleCommand
        switch WatchConsoleCommand.parse(words) {
        case .success(let c): command = c
        case .failure(let e):
            printer.say("error: \(e)")
            return true
        }
        do {
            switch command {
            case .quit: return false
            case .pair(let code):
                try await watch.pair(code: code)
                printer.say("paired")
            case .delete(let login):
                // A login the watch does not list: the watch's error, said below.
                if await watch.current.favorites.isPendingDelete(login) {
                    printer.say("delete \(login): already sent, waiting for the phone")
                } else {
                    try await watch.delete(login)
                }
            case .open(let login):
                if let screen = await watch.open(login) {
                    let now = watch.clock.now()
                    StandardOutput.writeLine(
                        printer.json
                            ? String(decoding: JSONWriter.encode(JSONRenderer.json(screen, now: now)), as: UTF8.self)
                            : TextRenderer.render(screen, now: now))
                    try printer.writeProfile(screen, now: watch.clock.now())
                }
            case .select(let login):
                try await watch.select(login)
                let favorites = await watch.current.favorites
                if let login, !favorites.contains(login) {
                    printer.say("note: \(login) is not a favorite: the rectangular widget shows the first favorite instead")
                }
            case .foreground(let on): await watch.setForeground(on)
            case .advance(let seconds):
                guard let clock else {
                    printer.say("error: advance needs a watch started with --manual-clock")
                    return true
                }
                clock.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
                await watch.flush()
                printer.say("clock: \(watch.clock.now().iso8601)")
            case .reload: await watch.requestReload()
            case .flush: await watch.flush()
            case .widget: try await printer.show(watch)
            case .status where printer.json, .state:  // with --json, status is the state
                StandardOutput.writeLine(JSONRenderer.render(await watch.current, now: watch.clock.now()))
            case .status:
                let current = await watch.current
                let favorites = current.favorites
                let pending = favorites.pendingDeletes
                printer.say(
                    "favorites r\(favorites.snapshot?.revision ?? 0): "
                        + (favorites.users.isEmpty ? "none" : favorites.users.map(\.login).joined(separator: ", "))
                        + (favorites.omittedNote.map { "; \($0)" } ?? "")
                        + (pending.isEmpty ? "" : "; pending delete: \(pending.joined(separator: ", "))"))
                printer.say("\(current.widgets.isAppForeground ? "foreground" : "background"); clock \(watch.clock.now().iso8601)")
            case .sync:
                printer.say(await watch.caughtUpIfConnected() ? "caught up" : "not connected: nothing to wait for")
            case .uninstall:
                let told = try await watch.uninstall()
                printer.say(
                    (told
                        ? "uninstalled: the phone sees the watch app gone"
                        : "uninstalled, but the relay was not told (not connected): the phone still sees the watch app installed")
                        + "; its favorites went with it (start the watch again on this --state to install it again)")
                return false
            case .help: for line in WatchConsoleCommand.helpText.split(separator: "\n") { printer.say(String(line)) }
            }
        } catch {
            printer.say("error: \(error)")
        }
        return true
    }
}

/// Prints the watch as text or JSON and writes SVG pictures.
struct WatchPrinter: Sendable {
    /// A line for people (an event, a command's answer, an error): standard output, or
    /// standard error with `--json`, whose standard output is JSON only. Logins, names and
    /// messages in it come from the phone (`status` lists its logins, an error names them):
    /// their control characters and bidi overrides show as `�`, as in the frames (a newline
    /// would split the line, an escape sequence would reach the terminal).
    func say(_ line: String) {
        let line = TextMetrics.printable(line)
        if json {
            StandardError.write((line + "\n"))
        } else {
            StandardOutput.writeLine(line)
        }
    }

    var json: Bool
    var svgDirectory: String?

    func show(_ watch: HeadlessWatch) async throws {
        let state = await watch.current
        let now = watch.clock.now()
        StandardOutput.writeLine(json ? JSONRenderer.render(state, now: now) : TextRenderer.render(state, now: now))
        if let dir = svgDirectory {
            try DirectoryError.create(dir, option: "--snapshot")
            try SVGRenderer.render(state.widgets, now: now).write(toFile: dir + "/widgets.svg", atomically: true, encoding: .utf8)
            try SVGRenderer.render(state.favorites).write(toFile: dir + "/favorites.svg", atomically: true, encoding: .utf8)
            if let profile = state.profile {
                try writeProfile(profile, now: now)
            }
        }
    }

    func writeProfile(_ profile: ProfileDetail, now: Timestamp) throws {
        guard let dir = svgDirectory else { return }
        try DirectoryError.create(dir, option: "--snapshot")
        try SVGRenderer.render(profile, now: now).write(toFile: dir + "/repos-\(profile.login).svg", atomically: true, encoding: .utf8)
    }

    /// One line for the live view, or nil for events the frames already show (``say(_:)``
    /// makes the phone's text in it printable).
    static func describe(_ event: WatchEvent) -> String? {
        switch event {
        case .activated(let paired): return "activated (paired: \(paired))"
        case .disconnected: return "disconnected from the relay (reconnecting)"
        case .paired(let peer): return "paired with \(peer)"
        case .reachability(let r): return "phone \(r ? "reachable" : "not reachable")"
        case .companionAppInstalled(let installed):
            return installed
                ? "iPhone app installed again"
                : "iPhone app uninstalled: deletes fail (companion_app_not_installed) until it runs again"
        case .snapshotStored(let revision, let logins, let omitted):
            return "snapshot r\(revision) stored: \(logins.joined(separator: ", "))" + (omitted > 0 ? " (+\(omitted) more on iPhone)" : "")
        case .deleteAccepted(let login): return "delete \(login): accepted by the relay (pending)"
        case .deleteCompleted(let login): return "delete \(login): done"
        case .profile: return nil
        case .error(let failure): return "error: \(failure.message)"
        case .widget(let w):
            if let r = w.reload {
                let latency = r.latencyMilliseconds.map { " latency=\($0)ms" } ?? ""
                return "reload \(r.widgetID) gen=\(r.generation) reason=\(r.reason.rawValue) entries=\(r.entries.count)\(latency) budget=\(r.budgetLeft)"
            }
            if let s = w.staleReport { return "STALE \(s.widgetID): reload refused (no budget left)" }
            return nil
        }
    }
}

/// `watch --once` on a state directory that is not paired: nothing can arrive for it.
struct WatchNotPaired: Error, CustomStringConvertible {
    let state: String

    var description: String {
        "the watch in \(state) is not paired, so nothing can arrive for --once to show: pass the code the phone shows "
            + "with --pair CODE, or pair the two directories with "
            + "'watchrelay pair --relay URL --phone-state PHONE-DIR --watch-state \(state)'"
    }
}
