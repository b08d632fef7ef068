import Foundation
import Primitives
import Synchronization
import WebSocketTransport

/// Counters shared by the tasks of one scenario point (atomics: the consumers run on the
/// cooperative pool, the orchestrator samples them).
final class BenchTally: Sendable {
    /// Messages delivered to watches.
    let delivered = Atomic<Int>(0)
    /// `accepted` frames the phones received.
    let accepted = Atomic<Int>(0)
    /// Messages sent in total (set by the pacer when it is done).
    let sentTotal = Atomic<Int>(-1)
    /// Deliveries out of sequence, plus error frames from the relay.
    let anomalies = Atomic<Int>(0)
    /// Set when the load should stop: consumers drain what is in flight, then finish.
    let stopping = Atomic<Bool>(false)
    /// Consumers that finished.
    let finished = Atomic<Int>(0)
    /// The first error frame or unexpected close, for the report.
    let firstProblem = Mutex<String?>(nil)

    /// Counts an anomaly and keeps the first description.
    func problem(_ text: @autoclosure () -> String) {
        anomalies.add(1, ordering: .relaxed)
        firstProblem.withLock { first in
            if first == nil { first = text() }
        }
    }
}

/// The generator's lws client contexts for one scenario point.
///
/// The generator spreads connections over several contexts (each with its own service thread,
/// all on the generator core); pair `n` uses context `n % count`, both of its connections on
/// the same one. This began when the contexts ran on lws's poll() loop, which scans every socket
/// of a context on each wake-up; on libev (epoll), as they run now, that cost is gone, and one
/// context for 1,000 and 5,000 pairs measured no flatter relay curve (BENCHMARKS.md,
/// 2026-12-06), so the split stayed.
final class BenchClients: Sendable {
    /// Connections per context the generator aims for.
    static let connectionsPerContext = 256
    /// Upper bound on contexts (service threads).
    static let maximumContexts = 16

    let contexts: [WebSocketClientContext]

    /// Client settings for the generator: no TLS, no UTF-8 check (the relay's bytes are ours),
    /// keepalive well past any scenario.
    static let configuration = ClientConfiguration(
        pingAfterSeconds: 600, hangupAfterSeconds: 660, connectTimeoutSeconds: 10,
        shutdownGracePeriod: .seconds(2), validatesUTF8: false, enablesTLS: false)

    /// Creates enough contexts for `connections`.
    init(connections: Int) throws {
        let count = min(Self.maximumContexts, max(1, (connections + Self.connectionsPerContext - 1) / Self.connectionsPerContext))
        contexts = try (0..<count).map { _ in try WebSocketClientContext(configuration: Self.configuration) }
    }

    /// The context of pair `index`.
    func context(forPair index: Int) -> WebSocketClientContext {
        contexts[index % contexts.count]
    }

    /// Shuts every context down (closing its connections and finishing their event streams).
    func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            for context in contexts { group.addTask { await context.shutdown() } }
        }
    }
}

/// What every scenario point shares: where relays run, which cores, how to report progress.
struct BenchRunner: Sendable {
    let options: BenchOptions
    let paths: BenchPaths
    /// Scratch directory for databases, configs and child logs.
    let directory: String

    /// Runs `body` against a fresh relay of `target` and fresh client contexts (one per
    /// ``BenchClients/connectionsPerContext`` of the `connections` the scenario opens), then
    /// shuts both down, whatever happens. After `limit` the contexts are shut down anyway,
    /// which ends every event stream, so a stuck scenario fails instead of hanging.
    func withRelay<T: Sendable>(
        _ target: BenchTarget, tag: String, sync: String? = nil, database: String? = nil,
        startTimeout: Duration = .seconds(15), connections: Int = 2, limit: Duration,
        _ body: (BenchRelay, BenchClients, BenchConnector) async throws -> T
    ) async throws -> T {
        let relay = try await BenchRelay.start(
            target, paths: paths, cpu: options.relayCPU, directory: directory, tag: tag, sync: sync ?? options.relaySync,
            database: database, startTimeout: startTimeout, rxBufferBytes: options.relayRxBufferBytes)
        let clients: BenchClients
        do {
            clients = try BenchClients(connections: connections)
        } catch {
            await relay.stop()
            throw error
        }
        let watchdog = Task {
            try await Task.sleep(for: limit)
            BenchProgress.note("time limit (\(limit)) reached: closing every connection")
            await clients.shutdown()
        }
        let connector = BenchConnector(clients: clients, dialect: target.dialect, url: relay.url)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body(relay, clients, connector))
        } catch {
            outcome = .failure(error)
        }
        watchdog.cancel()
        await clients.shutdown()
        if relay.child.exitedUnexpectedly {
            await relay.stop()
            if case .success = outcome {
                throw BenchError.scenario("\(target.rawValue) exited during the scenario\(relay.child.failureDetail())")
            }
        }
        await relay.stop()
        return try outcome.get()
    }

    /// Opens `count` pairs, at most `concurrency` handshakes at a time, reporting progress.
    func openPairs(
        _ count: Int, with connector: BenchConnector, probe: Bool = true, concurrency: Int = 64, what: String
    ) async throws -> [BenchPair] {
        var pairs: [BenchPair] = []
        pairs.reserveCapacity(count)
        var lastReport = ContinuousClock.now
        try await withThrowingTaskGroup(of: BenchPair.self) { group in
            var next = 0
            while next < min(count, concurrency) {
                let index = next
                group.addTask { try await connector.open(index, probe: probe) }
                next += 1
            }
            while let pair = try await group.next() {
                pairs.append(pair)
                if next < count {
                    let index = next
                    group.addTask { try await connector.open(index, probe: probe) }
                    next += 1
                }
                if count >= 100, ContinuousClock.now - lastReport > .seconds(2) {
                    lastReport = .now
                    BenchProgress.note("\(what): \(pairs.count)/\(count) pairs open")
                }
            }
        }
        return pairs.sorted { $0.index < $1.index }
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    static func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Drains a WatchRelay phone's events (`accepted` and the odd `peer` frame), counting
    /// `accepted` frames and anything that is an `error` as a problem.
    static func drainPhone(_ pair: BenchPair, tally: BenchTally) async {
        for await event in pair.phone.events {
            guard case .message(let bytes) = event else { continue }
            if BenchDelivery.isRelayFrame(bytes, type: .accepted) {
                tally.accepted.add(1, ordering: .relaxed)
            } else if BenchDelivery.isRelayFrame(bytes, type: .error) {
                tally.problem("relay error to the phone: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// Fills the CPU and rate figures of `result` from two samples around a window in which
    /// `messages` were delivered.
    static func fill(
        _ result: inout BenchResult, from start: BenchCPUSample, to end: BenchCPUSample, messages: Int
    ) {
        let seconds = max(end.seconds(since: start), 1e-9)
        let relayCPU = end.relay - start.relay
        result.messagesPerSecond = Double(messages) / seconds
        result.relayCPUPercent = relayCPU / seconds * 100
        result.generatorCPUPercent = (end.generator - start.generator) / seconds * 100
        let others = (end.machine - start.machine) - relayCPU - (end.generator - start.generator)
        result.otherCPUPercent = max(0, others) / seconds * 100
        result.relayCPUSecondsPer1k = messages > 0 ? relayCPU / Double(messages) * 1000 : nil
        result.count = messages
    }

    /// Converts a Double number of seconds to a Duration.
    static func duration(_ seconds: Double) -> Duration {
        .nanoseconds(Int64(seconds * 1e9))
    }
}

/// Progress lines on standard error (stdout carries only the results table).
enum BenchProgress {
    /// Writes one line to standard error, prefixed with the seconds since the run began.
    static func note(_ line: String) {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        let elapsed = Double(seconds) + Double(attoseconds) / 1e18
        StandardError.write((String(format: "[%6.1fs] ", elapsed) + line + "\n"))
    }

    private static let start = ContinuousClock.now
}
