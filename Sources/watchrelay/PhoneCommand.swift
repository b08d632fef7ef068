import CLIArguments
import Foundation
import GitHubAPI
import LineProtocol
import PhoneApp
import Primitives
import RelayCommand
import RelayServer
import WatchConnectivity

/// `watchrelay phone`: the phone companion (interactive), or one edit of a companion's state.
enum PhoneCommand {
    static let help = """
        USAGE: watchrelay phone --relay URL [options]        run the companion; commands on stdin
               watchrelay phone <command> [--state DIR]      edit the state of a (running) companion

        Runs GitExplorer's phone side: favorites in SQLite (--state DIR/phone.db), fetched from
        GitHub and pushed to the watch as favorites.snapshot contexts. Prints `github: URL`,
        `state: DIR`, then `ok start activated=… paired=… favorites=N revision=R`; with --pair,
        `pairing code: 123456`. Then reads commands on stdin, one per line, answering each with
        one `ok|throttled|error <command> key=value…` line (type `help`). Errors from GitHub,
        the relay and the store are logged as logfmt on stderr. SIGINT, SIGTERM, SIGHUP or `quit` stop it.

        Snapshots fit the contextBytes the relay announces (PROTOCOL.md §12.2): long names and URLs
        are cut for the watch; `add` fails with code=too_many_favorites past the most that always
        fit (438 at the default 262144 bytes); a list still too large goes cut short, answered
        sync=partial omitted=N and logged as snapshot_truncated; `status` shows omitted= and
        push_error= until the whole list is sent.

        COMMANDS (stdin lines, or subcommands against --state; a running companion on the same
        state picks a change up at once (inotify), fetches new users and pushes a snapshot; as
        subcommands, only add makes a state directory that does not exist yet):
          add <login>            add a favorite at the end (as a subcommand: no limit check)
          remove <login>         remove a favorite (also rm, delete)
          move <login> <index>   move a favorite to a 0-based place (also reorder)
          list [--json]          the favorites in order, with their last known data
          refresh                refresh from GitHub now (throttled; as a subcommand: a request)
          repos <login>, pair, status, quit   (stdin only)
          uninstall              (stdin only) the iPhone app is uninstalled: every watch of
                                 the phone sees it gone (deletes fail with
                                 companion_app_not_installed; not_told names a watch the relay
                                 was not told of) and the companion exits; its favorites stay;
                                 start it again on the same --state to install it again (for
                                 its --watch only)

        OPTIONS:
          --relay URL              the relay, e.g. ws://127.0.0.1:8765/v1 (required to run)
          --state DIR              state directory (default ./phone-state)
          --pair                   ask for a pairing code at start and print it
          --name NAME              the device name the watch sees (default iPhone)
          --watch ID               several watches: talk to watch ID, whose pair is kept in
                                   DIR/watches/ID (pair it with --pair; `default` is the watch
                                   paired without an id, in DIR); the favorites stay the
                                   phone's, and the latest snapshot goes to the watch at start
          --github URL             GitHub API root (default: start the built-in fixture server on
                                   a free loopback port; https://api.github.com for the real one)
          --fixtures DIR           fixtures for the built-in server (default: the catalog of
                                   Simulator/fixtures/github compiled into the binary)
          --github-token TOKEN     bearer token for GitHub
          --refresh-interval S     seconds between periodic refreshes, 1 or more (default 30)
          --refresh-throttle S     manual refresh throttle window in seconds (default 10)
          --concurrency N          GitHub fetches in flight during a refresh (default 4)
          --repos-max-age S        seconds a repo list answers the watch without asking GitHub
                                   again (default 30; 0: ask every time); past it, when GitHub
                                   fails, the watch gets the older list marked stale
          --json                   list: print JSON (`phone list --json`; not for the running
                                   companion, whose JSON mode is --machine)
          --machine                the line protocol for programs (Simulator/README.md): one JSON
                                   object per stdout line (`ready`, then a `response` per request
                                   and `event`s: activated, paired, reachability, snapshotPushed,
                                   refreshed, deletedByWatch, pairingCode, error, disconnected…);
                                   requests are console lines or {"id":1,"command":"add","args":["x"]};
                                   bad input answers ok=false code=bad_request; end of stdin stops it
                                   (so does it without --machine, after the commands read)
          --reconnect-backoff LIST seconds between reconnect attempts, e.g. 0.05,0.1,0.2
          --request-timeout-s S    relay request timeout, more than 0 (default 10)
          --external-poll-s S      without inotify only: how often the state is checked for other
                                   processes' edits, 0.01 or more (default 0.1; with inotify
                                   each edit wakes it)
          --log-level LEVEL        debug, info, warn, error (default info)
          -h, --help               show this help
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json", "pair", "machine"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let state = try args.string("state") ?? "./phone-state"
        if !args.positionals.isEmpty {
            return try editState(&args, state: state)
        }
        return try await runCompanion(&args, state: state)
    }

    // MARK: - Editing the state

    /// One command against the state directory, without the companion (which, if running, picks it up).
    private static func editState(_ args: inout Arguments, state: String) throws -> Int32 {
        var words = args.positionals
        if args.flag("json") { words.append("--json") }
        try args.rejectUnknown(allowingPositionals: true)
        let command: PhoneConsoleCommand
        switch PhoneConsoleCommand.parse(words) {
        case .success(let c): command = c
        case .failure(let e): throw Arguments.UsageError(description: e.description)
        }
        let verb = command.verb
        switch command {
        case .repos, .pair, .status, .uninstall, .help, .quit:
            throw Arguments.UsageError(description: "'\(verb)' needs the running companion: type it on its stdin")
        default: break
        }
        // A watch's directory is not a phone's: nothing is written into it.
        try DeviceStateDirectory.require(state, option: "--state", holds: .phone)
        // Only `add` may make a state directory (favorites chosen before the first run); a
        // misspelt --state must not turn into an empty one that lists "(no favorites)".
        if case .add = command {
        } else if !FileManager.default.fileExists(atPath: state + "/" + PhoneStore.fileName) {
            throw NoPhoneState(directory: state, verb: verb)
        }
        let store = try PhoneStore(directory: state)
        do throws(PhoneError) {
            switch command {
            case .add(let login):
                guard Favorite.isValidLogin(login) else { throw .invalidLogin(login) }
                let added = try store.addFavorite(login)
                StandardOutput.writeLine(PhoneConsole.ok(verb, [("login", login), ("added", "\(added)")]))
            case .remove(let login):
                let removed = try store.removeFavorite(login)
                StandardOutput.writeLine(PhoneConsole.ok(verb, [("login", login), ("removed", "\(removed)")]))
            case .move(let login, let index):
                guard let move = try store.moveFavorite(login, to: index) else { throw .notAFavorite(login) }
                StandardOutput.writeLine(PhoneConsole.ok(verb, [("login", login), ("index", "\(move.index)"), ("moved", "\(move.moved)")]))
            case .list(let json):
                for line in PhoneConsole.listing(try store.favorites(), json: json) { StandardOutput.writeLine(line) }
            case .refresh:
                try store.enqueueRequest("refresh")
                StandardOutput.writeLine(PhoneConsole.ok(verb, [("requested", "true")]))
            case .repos, .pair, .status, .uninstall, .help, .quit:
                break
            }
        } catch {
            StandardOutput.writeLine(PhoneConsole.errorLine(verb, error))
            return 1
        }
        return 0
    }

    // MARK: - Running the companion

    private static func runCompanion(_ args: inout Arguments, state: String) async throws -> Int32 {
        // Required, but said after the unknown options (`phone --bogus` is not missing --relay).
        let relayOption = try args.string("relay")
        var configuration = PhoneConfiguration(
            relayURL: relayOption ?? "", stateDirectory: state, deviceName: try args.string("name") ?? "iPhone")
        // At least a second: 0 refreshed in a tight loop, every favorite asked of GitHub ~1,000
        // times a second.
        configuration.refreshInterval = try seconds(&args, "refresh-interval", atLeast: 1) ?? configuration.refreshInterval
        configuration.refreshThrottle = try seconds(&args, "refresh-throttle") ?? configuration.refreshThrottle
        configuration.concurrency = try args.int("concurrency", in: 1...64) ?? configuration.concurrency
        configuration.reposMaxAge = try seconds(&args, "repos-max-age") ?? configuration.reposMaxAge
        configuration.externalPollInterval =
            try seconds(&args, "external-poll-s", atLeast: 0.01) ?? configuration.externalPollInterval
        if let timeout = try seconds(&args, "request-timeout-s", atLeast: 0.001) {
            configuration.session.requestTimeoutSeconds = Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18
        }
        if let backoff = try CLI.reconnectBackoff(&args) { configuration.session.backoff = backoff }
        if let watch = try args.string("watch") {
            let allowed = watch.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
            guard (1...64).contains(watch.count), allowed, watch != ".", watch != ".." else {
                throw Arguments.UsageError(description: "--watch: '\(watch)' is not a watch id (1-64 of A-Z a-z 0-9 . _ -)")
            }
            // `default` is the watch paired without --watch-id, kept at the top of DIR (as
            // `pair` and `switch-watch` name it), not a DIR/watches/default of its own.
            configuration.useWatch(watch == PhoneWatches.defaultID ? nil : watch)
        }
        let machine = args.flag("machine")
        let pairAtStart = args.flag("pair")
        let githubURL = try args.string("github")
        let fixtures = try args.string("fixtures")
        let token = try args.string("github-token")
        let json = args.flag("json")
        let log = try CLI.logger(&args, component: "phone")
        try args.rejectUnknown()
        // `list --json` is typed on the running companion's stdin; on its command line, --json
        // changed nothing, and a script reading stdout for JSON got the console's text lines.
        if json {
            throw Arguments.UsageError(
                description: "--json is for `phone list --json --state DIR` (or `list --json` typed on the companion's stdin); "
                    + "a program driving the companion uses --machine (one JSON object per stdout line)")
        }
        guard let relay = relayOption else { throw Arguments.UsageError(description: "--relay URL is required") }
        try CLI.requireWebSocketURL(relay)

        // Before `ready` and the start lines: a driver that sends SIGTERM as soon as it reads
        // them is heard.
        let termination = await TerminationSignal.install()
        var stub: GitHubStubServer?
        let baseURL: URL
        if let githubURL {
            guard let url = URL(string: githubURL), url.scheme != nil else {
                throw Arguments.UsageError(description: "--github must be a URL, not '\(githubURL)'")
            }
            baseURL = url
        } else {
            let server = try GitHubStubServer.start(catalog: try GitHubStubCommand.catalog(fixtures))
            stub = server
            baseURL = server.baseURL
        }
        let companion = try PhoneCompanion(configuration: configuration, github: .live(baseURL: baseURL, token: token))
        if machine {
            return await runMachine(
                companion, github: baseURL, state: state, pairAtStart: pairAtStart, stub: stub, log: log, until: termination)
        }
        let reporters = PhoneReporters.start(companion, log: log)
        StandardOutput.writeLine("github: \(baseURL.absoluteString)")
        StandardOutput.writeLine("state: \(state)")
        await companion.start()
        let status = await companion.status()
        StandardOutput.writeLine(
            PhoneConsole.ok(
                "start",
                [
                    ("activated", "\(status.activated)"), ("paired", "\(status.paired)"),
                    ("favorites", "\(status.favorites)"), ("revision", "\(status.revision)"),
                ]))
        if pairAtStart {
            for line in await PhoneConsole.run(.pair, on: companion).lines { StandardOutput.writeLine(line) }
        } else if !status.paired {
            log.info("not paired: type 'pair' (or start with --pair) and enter the code on the watch")
        }

        let lines = CLI.standardInputLines()
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await termination.wait()
                return true
            }
            group.addTask {
                _ = await console(companion, lines: lines)
                return true
            }
            // Stop on a signal, `quit` or the end of stdin (`echo add x | watchrelay phone …`),
            // after the commands read so far finished.
            _ = await group.next()
            group.cancelAll()
        }
        await companion.shutdown()
        await reporters.finish()
        await stub?.stop()
        return 0
    }

    /// `--machine`: the line protocol; stops on a signal, `quit` or the end of stdin.
    private static func runMachine(
        _ companion: PhoneCompanion, github: URL, state: String, pairAtStart: Bool, stub: GitHubStubServer?, log: Logger,
        until termination: TerminationSignal
    ) async -> Int32 {
        // `ready` is the first line (Simulator/README.md): what start() reports waits for it.
        let (readyLine, readyPrinted) = AsyncStream.makeStream(of: Void.self)
        let reporters = PhoneMachine.reporters(companion, log: log, after: Task { for await _ in readyLine {} })
        await companion.start()
        let status = await companion.status()
        StandardOutput.writeLine(
            MachineProtocol.ready(
                role: "phone",
                [
                    "github": .string(github.absoluteString), "state": .string(state), "pid": .int(Int64(getpid())),
                    "activated": .bool(status.activated), "paired": .bool(status.paired),
                    "favorites": .int(Int64(status.favorites)), "revision": .int(status.revision),
                ]))
        readyPrinted.finish()
        if pairAtStart {
            let request = MachineProtocol.Request(id: nil, words: ["pair"])
            StandardOutput.writeLine(await PhoneMachine.run(request, on: companion).0)
        }
        let lines = CLI.standardInputLines()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await termination.wait() }
            group.addTask { _ = await PhoneMachine.console(companion, lines: lines) }
            await group.next()
            group.cancelAll()
        }
        await companion.shutdown()
        for task in reporters { await task.value }
        await stub?.stop()
        return 0
    }

    /// Runs stdin commands until `quit` (true) or the end of input (false).
    private static func console(_ companion: PhoneCompanion, lines: AsyncStream<String>) async -> Bool {
        for await line in lines {
            guard let parsed = PhoneConsoleCommand.parse(line: line) else { continue }
            switch parsed {
            case .failure(let e):
                StandardOutput.writeLine(PhoneConsole.line("error", "input", [("code", "usage"), ("msg", e.description)]))
            case .success(let command):
                let output = await PhoneConsole.run(command, on: companion)
                for out in output.lines { StandardOutput.writeLine(out) }
                if output.quit { return true }
            }
        }
        return false
    }

    /// `--name S` as a duration in (possibly fractional) seconds, `lowest` or more (a timeout
    /// of 0 would fail every request at once).
    private static func seconds(_ args: inout Arguments, _ name: String, atLeast lowest: Double = 0) throws -> Duration? {
        guard let text = try args.string(name) else { return nil }
        guard let value = Double(text), value >= lowest, value <= 86_400 else {
            let range = (lowest == lowest.rounded() ? String(Int(lowest)) : String(lowest)) + "...86400"
            throw Arguments.UsageError(description: "--\(name) must be seconds in \(range), not '\(text)'")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }
}

/// The tasks printing the companion's merged error stream and its activity as logfmt on stderr.
private struct PhoneReporters {
    let tasks: [Task<Void, Never>]

    static func start(_ companion: PhoneCompanion, log: Logger) -> PhoneReporters {
        let errors = Task {
            for await error in companion.errors {
                var line = log
                line.fields += [("source", error.source), ("code", error.code)]
                line.warning(error.description)
            }
        }
        let activity = Task {
            for await event in companion.activity {
                // The user waits for this one at the terminal: say it on stdout too.
                if case .paired(let peer) = event { StandardOutput.writeLine(PhoneConsole.line("event", "paired", [("peer", peer)])) }
                let (message, fields) = event.logLine
                var line = log
                line.fields += fields
                line.info(message)
            }
        }
        return PhoneReporters(tasks: [errors, activity])
    }

    /// Waits until both streams ended (``PhoneCompanion/shutdown()`` finishes them).
    func finish() async {
        for task in tasks { await task.value }
    }
}

/// A subcommand other than `add` named a directory that holds no phone state.
struct NoPhoneState: Error, CustomStringConvertible {
    let directory: String
    let verb: String

    var description: String {
        "\(verb): no phone state in '\(directory)' (no \(PhoneStore.fileName)); check --state, "
            + "or create it with 'watchrelay phone add LOGIN --state \(directory)' or a first run of the phone"
    }
}
