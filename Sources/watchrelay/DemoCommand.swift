import CLIArguments
import Foundation
import GitHubAPI
import PhoneApp
import Primitives
import RelayProtocol
import RelayConsole
import RelayServer
import SQLite
import WatchApp

/// `watchrelay demo`: the whole story on loopback, in a few seconds (what `make run` runs).
enum DemoCommand {
    static let help = """
        USAGE: watchrelay demo [--fixtures DIR] [--out DIR] [--console]

        Starts a relay, the fixture GitHub server, a phone and a headless watch on free loopback
        ports with state in a temporary directory; pairs them; adds favorites on the phone;
        shows the watch's widgets; deletes a user from the watch; shows the widgets refreshed
        and a profile's repo list; writes SVG pictures; exits 0.

        OPTIONS:
          --fixtures DIR   GitHub fixtures (default: the compiled-in Simulator/fixtures/github)
          --out DIR        where the SVG pictures go (default .build/demo)
          --console        serve the relay's browser console, print its URL, and keep the relay,
                           phone and watch running after the story (the watch's faces show on
                           the page; type add/remove/delete LOGIN or quit)
          -h, --help       show this help

        SIGINT, SIGTERM or SIGHUP during the story stop it at once: its temporary directory is
        removed and the exit code is 128 + the signal. After the story, `--console` stops
        cleanly on them (exit 0), as on `quit`.
        """

    static let favorites = ["octocat", "torvalds", "gaearon", "mattt"]

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "console"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let fixtures = try args.string("fixtures")
        let out = URL(fileURLWithPath: try args.string("out") ?? ".build/demo").standardizedFileURL.path
        let console = args.flag("console")
        try args.rejectUnknown()
        // Before the story, not after it: the pictures are its last step.
        try DirectoryError.check(out, option: "--out")
        // Before the story's first line and its relay: fixtures that do not load are a usage error.
        let catalog = try GitHubStubCommand.catalog(fixtures)
        let started = Date()
        let dir = NSTemporaryDirectory() + "watchrelay-demo-" + UUID().uuidString
        // A signal during the story removes its directory (the relay's database, the phone's and
        // the watch's state) and exits 128 + the signal: its default action left it in TMPDIR.
        // After the story, `--console` stops cleanly on the first signal (`stops`) and at once
        // on a second. One handler for the whole run, installed before the directory is made: a
        // second dispatch source for the same signals would race this one for each signal.
        let phase = LockedState((storyRunning: true, signals: 0))
        let (stops, stop) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingOldest(1))
        let interruptions = await SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
            let (story, count) = phase.withLock { phase in
                phase.signals += 1
                return (phase.storyRunning, phase.signals)
            }
            if !story && count == 1 {
                stop.yield()
                return
            }
            try? FileManager.default.removeItem(atPath: dir)
            if story { StandardError.write("demo: interrupted (signal \(number)); its temporary directory removed\n") }
            exit(128 + number)
        }
        defer { withExtendedLifetime(interruptions) {} }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        say("WatchRelay demo — the iPhone ↔ Apple Watch link of GitExplorer, headless, on loopback")
        var relayConfig = RelayServerConfiguration()
        relayConfig.port = 0
        relayConfig.databasePath = dir + "/relay.db"
        if console { relayConfig.console = ConsoleConfiguration() }
        let relay = try await RelayServer.start(relayConfig, log: Logger(level: .warning))
        let github = try GitHubStubServer.start(catalog: catalog)
        say("relay         \(relay.url)   (SQLite in \(dir))")
        if let url = relay.consoleURL { say("console       \(url)") }
        say("GitHub        \(github.baseURL.absoluteString)   (fixture server, \(fixtures ?? "compiled-in catalog"))")

        let phone = try PhoneCompanion(
            configuration: PhoneConfiguration(relayURL: relay.url, stateDirectory: dir + "/phone", deviceName: "Jiwoo's iPhone"),
            github: .live(baseURL: github.baseURL))
        await phone.start()
        // With --console the watch publishes its faces to the console over its own connection.
        let watch = try HeadlessWatch(
            relayURL: relay.url, stateDirectory: dir + "/watch", deviceName: "Jiwoo's Watch", publishesFaces: console)
        let events = DemoEvents(watch.events)
        try await watch.start()

        step("1. Pair the watch")
        let code = try await phone.pair()
        say("phone shows pairing code \(code.code); typing it on the watch…")
        try await watch.pair(code: code.code)
        say("paired: the watch and the phone each got their device token")

        step("2. Add favorites on the phone")
        for login in favorites {
            let change = try await phone.add(login)
            say("phone: add \(login) → \(change.sync)")
        }
        let stored = try await events.wait("the snapshot with every favorite") {
            if case .snapshotStored(_, let logins, _) = $0, logins.count == favorites.count { return logins } else { return nil }
        }
        say("watch: stored the snapshot (\(stored.joined(separator: ", "))), then asked WidgetKit to reload")
        let firstReload = try await events.wait("the widget reload") { $0.rectangularReload }
        // The other widgets' reloads of this snapshot, if any is still due (awaited at its time).
        await watch.settle(within: .seconds(1))
        say(reloadLine(firstReload))
        StandardOutput.writeLine(TextRenderer.render(await watch.current.widgets, now: watch.clock.now()))

        step("3. Delete torvalds from the watch")
        try await watch.delete("torvalds")
        say("watch: favorites.delete sent by userInfo; the relay accepted it (pending until the phone confirms)")
        _ = try await events.wait("the snapshot without torvalds") {
            if case .deleteCompleted(let login) = $0, login == "torvalds" { return login } else { return nil }
        }
        let secondReload = try await events.wait("the widget reload") { $0.rectangularReload }
        await watch.settle(within: .seconds(1))
        say("phone: removed torvalds, pushed a new snapshot; watch: delete confirmed")
        say(reloadLine(secondReload))
        StandardOutput.writeLine(TextRenderer.render(await watch.current.widgets, now: watch.clock.now()))

        step("4. Open a profile on the watch")
        let profile = await watch.open("octocat")
        if let profile { StandardOutput.writeLine(TextRenderer.render(profile, now: watch.clock.now())) }

        step("5. Pictures")
        try DirectoryError.create(out, option: "--out")
        let state = await watch.current
        try SVGRenderer.render(state.widgets, now: watch.clock.now()).write(toFile: out + "/widgets.svg", atomically: true, encoding: .utf8)
        if let profile {
            try SVGRenderer.render(profile, now: watch.clock.now()).write(toFile: out + "/repos-octocat.svg", atomically: true, encoding: .utf8)
        }
        say("SVG pictures: \(out)/widgets.svg, \(out)/repos-octocat.svg")
        if console {
            phase.withLock { $0.storyRunning = false }
            await DemoConsole.run(relay: relay, phone: phone, watch: watch, until: stops)
        }

        await watch.stop()
        await phone.shutdown()
        await github.stop()
        await relay.shutdown()
        say(String(format: "done in %.1f s", Date().timeIntervalSince(started)))
        return 0
    }

    private static func reloadLine(_ r: WidgetReload) -> String {
        let latency = r.latencyMilliseconds.map { ", \($0) ms after the phone sent it" } ?? ""
        return "widget \(r.widgetID) reloaded: generation \(r.generation), reason \(r.reason.rawValue)\(latency)"
    }

    private static func step(_ title: String) {
        StandardOutput.writeLine("\n── \(title) " + String(repeating: "─", count: max(0, 60 - title.count)))
    }

    private static func say(_ line: String) {
        StandardOutput.writeLine("  " + line)
    }

    /// A path relative to the current directory, else to the source tree this binary came from.
    static func locate(_ relative: String) -> String {
        if FileManager.default.fileExists(atPath: relative) { return relative }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(relative).path
    }
}

struct DemoError: Error, CustomStringConvertible {
    var description: String
}
