import CLIArguments
import Foundation
import Primitives
import Synchronization

/// `watchrelay bench-cluster`: the cost of the cluster (docs/REDIS.md "Several nodes"), pair
/// throughput and delivery latency side by side: one SQLite node, one node on Redis, a
/// two-node cluster with both devices on the leader, and with the watch on the other node.
public enum BenchClusterCommand {
    static let help = """
        USAGE: watchrelay bench-cluster [--pairs N] [--seconds S] [--window W] [--payload B]
                                        [--mode message|userInfo] [--relay-cpu CPU]

        Each setup gets fresh state. N pairs each keep W sends in flight (a new one per delivery)
        for S seconds after 1 s of warm-up; userInfo watches ack every 16 deliveries. Prints one
        line per setup: deliveries/s, p50/p99 send-to-delivery latency, CPU seconds per 1,000
        deliveries of the leader, the other node and redis-server. Relays and redis-server run
        on CPU `--relay-cpu` (default 1), the generator where the OS puts it.

        OPTIONS:
          --pairs N          pairs (1–5000, default 1)
          --seconds S        measured seconds per setup (1–600, default 10)
          --window W         sends in flight per pair (1–1024, default 16)
          --payload B        payload bytes (16–65536, default 256)
          --mode M           message or userInfo (default userInfo)
          --relay-cpu CPU    the CPU the relays and redis-server run on (default 1)
          -h, --help         show this help

        SETUPS:
          sqlite       one node, SQLite (--sync full)
          redis        one node on Redis (--single-node; appendfsync always)
          same-node    two nodes on one Redis, phone and watch on the leader
          cross-node   two nodes on one Redis, phone on the leader, watch on the other node
        """

    /// Runs it; returns the exit code.
    public static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        let pairs = try args.int("pairs", in: 1...5000) ?? 1
        let seconds = try args.int("seconds", in: 1...600) ?? 10
        let window = try args.int("window", in: 1...1024) ?? 16
        let payload = try args.int("payload", in: 16...65536) ?? 256
        let mode = try args.string("mode") ?? "userInfo"
        guard mode == "message" || mode == "userInfo" else {
            throw Arguments.UsageError(description: "--mode must be message or userInfo")
        }
        let cpu = try args.int("relay-cpu", in: 0...1023) ?? 1
        try args.rejectUnknown()
        let signalSources = await BenchChildren.killOnTermination()
        defer { withExtendedLifetime(signalSources) {} }
        _ = BenchSystem.raiseOpenFileLimit()
        let directory = NSTemporaryDirectory() + "watchrelay-bench-cluster-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let load = BenchSystem.loadAverage().map { String($0) }.joined(separator: " ")
        StandardOutput.writeLine("bench-cluster: \(pairs) pairs × window \(window), \(mode) \(payload) B, \(seconds) s; load \(load)")
        let bench = ClusterBench(
            pairs: pairs, seconds: seconds, window: window, factory: BenchFrameFactory(mode: mode, payloadBytes: payload),
            ackEvery: mode == "userInfo" ? 16 : nil, cpu: cpu, directory: directory, watchrelay: BenchPaths().watchrelay)
        var failed = false
        for setup in ClusterBench.Setup.allCases {
            do {
                StandardOutput.writeLine(try await bench.measure(setup))
            } catch {
                failed = true
                StandardOutput.writeLine("\(setup.rawValue): failed: \(error)")
            }
        }
        return failed ? 1 : 0
    }
}

/// One point of ``BenchClusterCommand`` per setup.
struct ClusterBench: Sendable {
    enum Setup: String, CaseIterable, Sendable {
        case sqlite, redis, sameNode = "same-node", crossNode = "cross-node"
    }

    let pairs: Int
    let seconds: Int
    let window: Int
    let factory: BenchFrameFactory
    let ackEvery: Int?
    let cpu: Int
    let directory: String
    let watchrelay: String

    /// Starts the setup's processes, runs the load, stops everything; returns the report line.
    func measure(_ setup: Setup) async throws -> String {
        var children: [BenchChild] = []
        defer {
            let all = children
            Task { for child in all { await child.kill() } }
        }
        var redisURL: String?
        if setup != .sqlite {
            let port = try BenchPorts.free()
            let redis = try BenchChild(
                name: "redis-\(setup.rawValue)", executable: "/usr/bin/redis-server",
                arguments: [
                    "--bind", "127.0.0.1", "--port", String(port), "--dir", directory, "--appendonly", "yes",
                    "--appendfsync", "always", "--save", "", "--appendfilename", "\(setup.rawValue).aof",
                ], cpu: cpu, directory: directory)
            children.append(redis)
            try await redis.waitForPort(port)
            redisURL = "redis://127.0.0.1:\(port)/0"
        }
        let nodeNames = setup == .sameNode || setup == .crossNode ? ["leader", "edge"] : ["single"]
        var urls: [String] = []
        for name in nodeNames {
            var arguments = [
                "serve", "--host", "127.0.0.1", "--port", "0",
                "--log-level", "warn", "--quota-connections", "1000000", "--quota-connections-per-address", "1000000",
            ]
            if let redisURL {
                arguments += ["--store", redisURL]
                arguments += setup == .redis ? ["--single-node"] : ["--node-id", name]
            } else {
                arguments += ["--db", "\(directory)/\(setup.rawValue).db", "--sync", "full"]
            }
            let node = try BenchChild(
                name: "\(setup.rawValue)-\(name)", executable: watchrelay, arguments: arguments, cpu: cpu, directory: directory)
            children.append(node)
            urls.append(try await node.firstLine())
        }
        let clients = try BenchClients(connections: 2 * pairs)
        let connector = BenchConnector(
            clients: clients, dialect: .watchRelay, url: urls[0], watchURL: setup == .crossNode ? urls[1] : nil)
        var opened: [BenchPair] = []
        for index in 0..<pairs { opened.append(try await connector.open(index)) }
        let tally = BenchTally()
        let latencies = BenchLatencies()
        let pids = children.map(\.pid)
        let (factory, window, ackEvery) = (factory, window, ackEvery)
        let line = try await withThrowingTaskGroup(of: Void.self) { group in
            for pair in opened {
                group.addTask { await BenchRunner.drainPhone(pair, tally: tally) }
                group.addTask {
                    await BenchRunner.windowConsumer(
                        pair, factory: factory, window: window, tally: tally, ackEvery: ackEvery, latencies: latencies)
                }
            }
            try await Task.sleep(for: .seconds(1))
            latencies.values.withLock { $0.removeAll() }
            let before = (tally.delivered.load(ordering: .relaxed), pids.map { BenchSystem.cpuSeconds(pid: $0) ?? 0 })
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(seconds))
            let after = (tally.delivered.load(ordering: .relaxed), pids.map { BenchSystem.cpuSeconds(pid: $0) ?? 0 })
            let wall = BenchRunner.seconds(ContinuousClock.now - start)
            let sample = latencies.values.withLock { $0 }
            tally.stopping.store(true, ordering: .relaxed)
            _ = await BenchRunner.waitUntil(timeout: .seconds(5)) { tally.finished.load(ordering: .relaxed) >= opened.count }
            await clients.shutdown()
            group.cancelAll()
            let delivered = after.0 - before.0
            return report(setup, delivered: delivered, wall: wall, latencies: sample, cpu: zip(after.1, before.1).map(-))
                + (tally.firstProblem.withLock { $0 }.map { "; \($0)" } ?? "")
        }
        for child in children.reversed() { await child.stop() }
        children = []
        return line
    }

    /// `setup: N/s, p50 … ms, p99 … ms, CPU s per 1,000: …`.
    private func report(_ setup: Setup, delivered: Int, wall: Double, latencies: [Double], cpu: [Double]) -> String {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            return String(format: "%.2f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        let per1000 = { (seconds: Double) in String(format: "%.3f", seconds / max(1, Double(delivered)) * 1000) }
        // Children in start order: redis-server first when there is one, then the nodes.
        var names = setup == .sqlite ? [] : ["redis"]
        names += setup == .sameNode || setup == .crossNode ? ["leader", "edge"] : ["relay"]
        let cpuText = zip(names, cpu).map { "\($0) \(per1000($1))" }.joined(separator: ", ")
        return "\(setup.rawValue): \(Int(Double(delivered) / max(wall, 1e-9)))/s, p50 \(percentile(0.5)) ms, "
            + "p99 \(percentile(0.99)) ms; CPU s per 1,000: \(cpuText)"
    }
}

/// Send-to-delivery times in milliseconds, appended by the consumers of one point.
final class BenchLatencies: Sendable {
    let values = Mutex<[Double]>([])
}
