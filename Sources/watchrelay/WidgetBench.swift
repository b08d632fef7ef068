import CLIArguments
import Foundation
import GitHubAPI
import PhoneApp
import Primitives
import RelayCommand
import RelayProtocol
import RelayServer
import SQLite
import WatchApp

/// `watchrelay bench-widget`: phone favorites change → watch widget reloaded, in-process on
/// loopback with the real relay (fsync on), fixture GitHub, PhoneCompanion and HeadlessWatch.
///
/// Each sample removes or re-adds a favorite on the phone and waits for the rectangular
/// widget's reload on the watch. With `--debounce-ms 0` it measures the pipeline alone;
/// the default 100 ms is the watch's coalescing window.
enum WidgetBench {
    static let help = """
        USAGE: watchrelay bench-widget [--samples N] [--debounce-ms MS] [--relay-sync full|normal] [--gap-ms MS] [--json]

        Measures phone favorites change → watch widget reloaded (p50/p99, ms).

        OPTIONS:
          --samples N                changes measured (default 200)
          --debounce-ms MS           the watch's reload coalescing window; without it, both
                                     0 (the pipeline alone) and 100 (the watch's default)
          --relay-sync full|normal   the relay store's SQLite synchronous mode (default full,
                                     the relay's default: one fsync per group commit; normal
                                     fsyncs only at checkpoints, for comparison)
          --gap-ms MS                idle time before each change (default 0: back to back,
                                     so a change may wait for the relay's commit of the
                                     previous change's ack; 20 measures isolated changes)
          --json                     print the results as JSON
          -h, --help                 show this help
        """

    struct Result: Sendable {
        var samples: [Double]
        var debounceMs: Int
        var relaySync: SQLiteDatabase.Synchronous
        func percentile(_ p: Double) -> Double {
            let sorted = samples.sorted()
            guard !sorted.isEmpty else { return .nan }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
    }

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let samples = try args.int("samples", in: 1...10_000) ?? 200
        let debounce = try args.int("debounce-ms", in: 0...10_000)
        var relaySync = SQLiteDatabase.Synchronous.full
        if let sync = try args.string("relay-sync") {
            guard let s = SQLiteSynchronousName(sync), s != .off else {
                throw Arguments.UsageError(description: "--relay-sync must be full or normal")
            }
            relaySync = s
        }
        let gapMs = try args.int("gap-ms", in: 0...10_000) ?? 0
        let json = args.flag("json")
        try args.rejectUnknown()
        let syncName = relaySync.rawValue.lowercased()
        for d in debounce.map({ [$0] }) ?? [0, 100] {
            let r = try await measure(samples: samples, debounceMs: d, relaySync: relaySync, gapMs: gapMs)
            let gap = gapMs == 0 ? "" : ", \(gapMs) ms apart"
            let line =
                "widget refresh (debounce \(d) ms, relay sync \(syncName)\(gap)): "
                + String(
                    format: "p50 %.2f ms, p99 %.2f ms over %d changes", r.percentile(0.5), r.percentile(0.99),
                    r.samples.count)
            if json {
                StandardOutput.writeLine(
                    #"{"scenario":"widget","debounceMs":\#(d),"relaySync":"\#(syncName)","gapMs":\#(gapMs),"p50Ms":\#(r.percentile(0.5)),"p99Ms":\#(r.percentile(0.99)),"samples":\#(r.samples.count)}"#)
            } else {
                StandardOutput.writeLine(line)
            }
        }
        return 0
    }

    static func measure(
        samples: Int, debounceMs: Int, relaySync: SQLiteDatabase.Synchronous = .full, gapMs: Int = 0
    ) async throws -> Result {
        let dir = NSTemporaryDirectory() + "watchrelay-widget-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var relayConfig = RelayServerConfiguration()
        relayConfig.port = 0
        relayConfig.databasePath = dir + "/relay.db"
        relayConfig.synchronous = relaySync
        let relay = try await RelayServer.start(relayConfig, log: .silent)
        let github = try GitHubStubServer.start(catalog: try GitHubFixtureCatalog.embedded())
        let phone = try PhoneCompanion(
            configuration: PhoneConfiguration(relayURL: relay.url, stateDirectory: dir + "/phone"),
            github: .live(baseURL: github.baseURL))
        await phone.start()
        let rules = WidgetRules(noBudget: true, debounce: .milliseconds(debounceMs))
        let watch = try HeadlessWatch(relayURL: relay.url, stateDirectory: dir + "/watch", rules: rules)
        let events = DemoEvents(watch.events)
        try await watch.start()
        let code = try await phone.pair()
        try await watch.pair(code: code.code)
        for login in ["octocat", "torvalds", "gaearon"] { _ = try await phone.add(login) }
        _ = try await events.wait("the first snapshot") {
            if case .snapshotStored(_, let logins, _) = $0, logins.count == 3 { return true } else { return nil }
        }
        _ = try await events.wait("the first reload") { $0.rectangularReload }
        var latencies: [Double] = []
        let clock = ContinuousClock()
        for i in 0..<samples {
            if gapMs > 0 { try await Task.sleep(for: .milliseconds(gapMs)) }
            let start = clock.now
            if i % 2 == 0 { _ = try await phone.remove("gaearon") } else { _ = try await phone.add("gaearon") }
            _ = try await events.wait("the reload") { $0.rectangularReload }
            let elapsed = clock.now - start
            latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        await watch.stop()
        await phone.shutdown()
        await github.stop()
        await relay.shutdown()
        return Result(samples: latencies, debounceMs: debounceMs, relaySync: relaySync)
    }
}

extension WatchEvent {
    /// The reload of the rectangular widget.
    var rectangularReload: WidgetReload? {
        if case .widget(let w) = self, let r = w.reload, r.widgetID == "stack.rectangular" { return r }
        return nil
    }
}
