import CLIArguments
import Foundation

/// The settings of one `watchrelay bench` invocation.
struct BenchOptions: Sendable {
    /// The scenarios a run can contain, in run order.
    enum Scenario: String, CaseIterable, Sendable {
        case throughput, latency, pairs, curve, connections, durable, queued, backlog
    }

    var runs = 1
    /// Most pairs of the pairs and curve scenarios: two descriptors a pair in the relay and in
    /// the generator, each process under a 20,000-descriptor limit (`ulimit -Hn` of the machines
    /// this ran on) with room for its own. 9,970 pairs connected there, but the generator then
    /// had no descriptor left to read the relay's CPU and RSS; 9,940 measured in full.
    static let maxPairs = 9_950
    /// The table's scenarios; `curve` and `backlog` (minutes each) only when asked for.
    var scenarios = Set(Scenario.allCases).subtracting([.curve, .backlog])
    var peers = BenchTarget.peers
    /// Measured seconds of each throughput and durable point.
    var seconds = 2.0
    /// Warm-up before each measurement.
    var warmup = 0.5
    var latencySeconds = 3.0
    var latencyRates = [1000, 10_000]
    /// Payload of the latency and many-pairs messages.
    var latencyBytes = 256
    var throughputSizes = [64, 1024, 16 * 1024, 65536]
    var pairs = 1000
    var pairSeconds = 10.0
    var connections = 10_000
    var durableBytes = 1024
    /// Pair counts of the cost curve, all at ``curveRate`` messages/s in all.
    var curvePairs = [1, 10, 100, 1000, 5000]
    var curveRate = 1000
    /// Stored items of the backlog scenario.
    var backlogItems = [10_000, 100_000, 1_000_000]
    /// Backlogs of the queued-memory scenario, in MiB.
    var queuedMebibytes = [100, 1024]
    /// SQLite synchronous mode of `watchrelay serve` outside the durable scenario.
    var relaySync = "full"
    /// `--rx-buffer-bytes` of our relay and the C relay (nil: their default).
    var relayRxBufferBytes: Int?
    var relayCPU = 0
    /// A point during which other processes used more CPU than this (percent of one core) is
    /// measured again, up to ``retries`` times; the least disturbed attempt is kept.
    var maxOtherCPU = 30.0
    var retries = 2
    var generatorCPU = 1
    var output = "Benchmarks/results/latest.json"
    /// Where the fixed-rate scenarios write their per-message stamps, if anywhere.
    var latencyTrace: String?

    static let help = """
        USAGE: watchrelay bench [options]

        Measures the relay (`watchrelay-relay`, the same as `watchrelay serve`) and its peers with one
        load generator: each relay runs as a child process pinned to --relay-cpu with taskset; this
        process (the generator, on the lws client) re-executes itself pinned to --generator-cpu.
        Every point gets a fresh relay. Progress goes to standard error; the table of results (medians over --runs),
        the ratios to each peer and the relay's targets (met, missed, or not measured by the scenarios run) to
        standard output; JSON with every run to --output. See BENCHMARKS.md.

        SCENARIOS (--scenarios, comma-separated; default all but curve and backlog):
          throughput   1 pair, phone → watch `message`, window of outstanding messages,
                       payloads 64 B, 1 KiB, 16 KiB, 65536 B (the limit; --sizes): messages/s, CPU-s/1k
          latency      1 pair at fixed rates (--latency-rates): p50/p99 send → deliver, timed
                       on the lws client's service thread (phone frame written → watch
                       frame complete); sends paced from a thread of their own
          pairs        --pairs pairs, 1 message/s each, --pair-seconds: p50/p99 and relay RSS
          curve        --curve-pairs pairs sharing --curve-rate messages/s, --pair-seconds: relay
                       CPU per message as the number of connections grows
          connections  --connections idle connections (paired): relay RSS per connection
          durable      `userInfo` with a window of outstanding sends, --sync full and normal (ours)
          queued       relay RSS with --queued-mib of `userInfo` (65,000-byte payloads) queued for
                       an absent watch, and after a restart on that store (ours)
          backlog      --backlog-items small `userInfo` stored for an absent watch: the relay's
                       start time and RSS on that store, then the drain rate to the watch (ours)

        OPTIONS:
          --runs N                repeat everything N times, report medians (default 1)
          --scenarios LIST        see above (default all but curve and backlog)
          --peers LIST            lws-c,python-websockets,mosquitto or none (default all three)
          --seconds S             measured seconds per throughput/durable point (default 2)
          --warmup S              warm-up before each measurement (default 0.5)
          --latency-seconds S     measured seconds per latency point (default 3)
          --sizes LIST            payload bytes of the throughput points (default 64,1024,16384,65536)
          --latency-rates LIST    messages/s of the latency points (default 1000,10000)
          --latency-bytes N       payload of latency and many-pairs messages (default 256)
          --pairs N               pairs of the many-pairs scenario (default 1000)
          --pair-seconds S        length of the many-pairs scenario (default 10)
          --connections N         idle connections of the scale scenario (default 10000)
          --queued-mib LIST       backlogs of the queued scenario in MiB (default 100,1024)
          --curve-pairs LIST      pair counts of the curve scenario (default 1,10,100,1000,5000)
          --curve-rate N          messages/s of every curve point, in all (default 1000)
          --backlog-items LIST    stored items of the backlog scenario (default 10000,100000,1000000)
          --relay-sync MODE       `watchrelay serve --sync` outside the durable scenario (default full)
          --relay-rx-buffer-bytes N   `--rx-buffer-bytes` of watchrelay serve and the C relay
                                  (default: theirs, 16384)
          --relay-cpu N           core of the relay processes (default 0)
          --max-other-cpu PCT     re-measure a point if other processes used more CPU than this
                                  during it, in % of one core (default 30; the machine is shared)
          --retries N             at most this many re-measurements per point (default 2)
          --generator-cpu N       core of this process (default 1)
          --output PATH           JSON results (default Benchmarks/results/latest.json)
          --latency-trace DIR     write each latency and many-pairs point's per-message stamps
                                  (posted, written, received; ns) to a .tsv file in DIR
          --watchrelay PATH       the relay to measure, run as `PATH serve …` (default watchrelay-relay
                                  beside this executable, else this one; another build's, to compare
                                  before and after a change)
          --c-relay PATH          the C relay (default Benchmarks/baseline/build/relay)
          --python-relay PATH     the Python relay (default Benchmarks/python/relay.py)
          --mosquitto PATH        mosquitto (default /usr/sbin/mosquitto)
          --quick                 smoke test: 0.5 s windows, 100 pairs for 3 s, 1000 connections,
                                  10 MiB queued
          -h, --help              show this help
        """

    /// Parses the command line (after `bench`); throws a usage error naming the bad option.
    init(_ args: inout Arguments, paths: inout BenchPaths) throws {
        if args.flag("quick") {
            (seconds, warmup, latencySeconds, pairs, pairSeconds, connections) = (0.5, 0.2, 1, 100, 3, 1000)
            queuedMebibytes = [10]
            (curvePairs, backlogItems) = ([1, 10, 100], [10_000])
        }
        runs = try args.int("runs", in: 1...100) ?? runs
        if let list = try args.string("scenarios") {
            scenarios = try Set(Self.list(list, "scenarios", allowed: Scenario.allCases.map(\.rawValue).joined(separator: ", ")) { Scenario(rawValue: $0) })
        }
        if let list = try args.string("peers") {
            peers = list == "none" ? [] : try Self.list(list, "peers", allowed: (BenchTarget.peers.map(\.rawValue) + ["none"]).joined(separator: ", ")) { name in
                BenchTarget(rawValue: name).flatMap { BenchTarget.peers.contains($0) ? $0 : nil }
            }
        }
        seconds = try Self.seconds(&args, "seconds") ?? seconds
        warmup = try Self.seconds(&args, "warmup", allowZero: true) ?? warmup
        latencySeconds = try Self.seconds(&args, "latency-seconds") ?? latencySeconds
        if let list = try args.string("latency-rates") {
            latencyRates = try Self.list(list, "latency-rates", allowed: "integers in 1...1000000") { Int($0).flatMap { (1...1_000_000).contains($0) ? $0 : nil } }
        }
        latencyBytes = try args.int("latency-bytes", in: BenchFrameFactory.minimumPayloadBytes...65536) ?? latencyBytes
        if let list = try args.string("sizes") {
            throughputSizes = try Self.list(list, "sizes", allowed: "byte counts in \(BenchFrameFactory.minimumPayloadBytes)...65536") {
                Int($0).flatMap { (BenchFrameFactory.minimumPayloadBytes...65536).contains($0) ? $0 : nil }
            }
        }
        if let list = try args.string("queued-mib") {
            queuedMebibytes = try Self.list(list, "queued-mib", allowed: "integers in 1...16384") { Int($0).flatMap { (1...16384).contains($0) ? $0 : nil } }
        }
        if let list = try args.string("curve-pairs") {
            curvePairs = try Self.list(list, "curve-pairs", allowed: "integers in 1...\(Self.maxPairs)") { Int($0).flatMap { (1...Self.maxPairs).contains($0) ? $0 : nil } }
        }
        curveRate = try args.int("curve-rate", in: 1...100_000) ?? curveRate
        if let list = try args.string("backlog-items") {
            backlogItems = try Self.list(list, "backlog-items", allowed: "integers in 1...10000000") { Int($0).flatMap { (1...10_000_000).contains($0) ? $0 : nil } }
        }
        pairs = try args.int("pairs", in: 1...Self.maxPairs) ?? pairs
        pairSeconds = try Self.seconds(&args, "pair-seconds") ?? pairSeconds
        connections = try args.int("connections", in: 2...18000) ?? connections
        if let sync = try args.string("relay-sync") {
            guard ["full", "normal", "off"].contains(sync) else {
                throw Arguments.UsageError(description: "--relay-sync must be full, normal or off")
            }
            relaySync = sync
        }
        relayCPU = try args.int("relay-cpu", in: 0...1023) ?? relayCPU
        relayRxBufferBytes = try args.int("relay-rx-buffer-bytes", in: 512...32768) ?? relayRxBufferBytes
        if let text = try args.string("max-other-cpu") {
            guard let value = Double(text), value >= 0 else {
                throw Arguments.UsageError(description: "--max-other-cpu must be a percentage, not '\(text)'")
            }
            maxOtherCPU = value
        }
        retries = try args.int("retries", in: 0...10) ?? retries
        generatorCPU = try args.int("generator-cpu", in: 0...1023) ?? generatorCPU
        output = try args.string("output") ?? output
        latencyTrace = try args.string("latency-trace")
        paths.watchrelay = try args.string("watchrelay") ?? paths.watchrelay
        paths.cRelay = try args.string("c-relay") ?? paths.cRelay
        paths.pythonRelay = try args.string("python-relay") ?? paths.pythonRelay
        paths.mosquitto = try args.string("mosquitto") ?? paths.mosquitto
    }

    /// Whether `scenario` is part of the run.
    func includes(_ scenario: Scenario) -> Bool {
        scenarios.contains(scenario)
    }

    private static func seconds(_ args: inout Arguments, _ name: String, allowZero: Bool = false) throws -> Double? {
        guard let text = try args.string(name) else { return nil }
        guard let value = Double(text), value.isFinite, allowZero ? value >= 0 : value > 0, value <= 3600 else {
            throw Arguments.UsageError(
                description: "--\(name) must be a number of seconds, \(allowZero ? "0" : "above 0") to 3600, not '\(text)'")
        }
        return value
    }

    private static func list<T>(_ text: String, _ name: String, allowed: String, _ parse: (String) -> T?) throws -> [T] {
        try text.split(separator: ",").map { item in
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            guard let value = parse(trimmed) else {
                throw Arguments.UsageError(description: "--\(name): '\(trimmed)' is not one of: \(allowed) (comma-separated)")
            }
            return value
        }
    }
}
