import Primitives
import RelayProtocol
import Synchronization

/// The relay's Prometheus metrics: updated by the engine, rendered by `/metrics`.
///
/// Thread-safe (a `LockedState`: a Mutex TSan can see): `/metrics` is served on the lws service thread while the
/// engine updates counters on its own executor.
public final class RelayMetrics: Sendable {
    /// Upper bounds of the delivery-latency histogram, in seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Histogram {
        var counts = [Int](repeating: 0, count: RelayMetrics.buckets.count)
        var sum = 0.0
        var count = 0
    }

    struct State {
        var connections: [String: Int] = ["phone": 0, "watch": 0]
        var pairs = 0
        var queued: [String: Int] = ["context": 0, "userInfo": 0, "complication": 0]
        var received: [String: Int] = [:]
        var sent: [String: Int] = [:]
        var errors: [String: Int] = [:]
        var closes: [String: Int] = [:]
        var latency: [String: Histogram] = [:]
        var commits = 0
        var committedMutations = 0
    }

    private let state = LockedState(State())

    public init() {}

    /// Applies the counts the engine gathered during one step, under one lock.
    func record(_ batch: MetricsBatch) {
        guard !batch.isEmpty else { return }
        state.withLock { s in
            for (type, n) in batch.sent { s.sent[type.rawValue, default: 0] += n }
            for (code, n) in batch.errors { s.errors[code.rawValue, default: 0] += n }
            for (mode, seconds) in batch.latencies { Self.add(seconds, to: &s.latency[mode.rawValue, default: Histogram()]) }
        }
    }

    /// A WebSocket connection ended: the close code of its handshake (the peer's if it closed
    /// first, else the relay's), or `none` when it was lost without one (e.g. a ping hang-up).
    func closed(code: UInt16?) {
        state.withLock { $0.closes[code.map(String.init) ?? "none", default: 0] += 1 }
    }

    private static func add(_ seconds: Double, to h: inout Histogram) {
        for (i, bound) in buckets.enumerated() where seconds <= bound { h.counts[i] += 1 }
        h.sum += seconds
        h.count += 1
    }

    func committed(mutations: Int) {
        state.withLock {
            $0.commits += 1
            $0.committedMutations += mutations
        }
    }

    func gauges(
        connections: [Role: Int], pairs: Int, queued: [DeliveryMode: Int], received: [FrameType: Int]
    ) {
        state.withLock { s in
            for (role, n) in connections { s.connections[role.rawValue] = n }
            s.pairs = pairs
            for (mode, n) in queued { s.queued[mode.rawValue] = n }
            s.received = Dictionary(uniqueKeysWithValues: received.map { ($0.key.rawValue, $0.value) })
        }
    }

    /// A value of the current state (tests, scenarios).
    public var snapshot: (pairs: Int, queued: Int, connections: Int, errors: [String: Int]) {
        state.withLock { s in
            (s.pairs, s.queued.values.reduce(0, +), s.connections.values.reduce(0, +), s.errors)
        }
    }

    /// WebSocket connections ended so far, by close code (`none`: lost without a close handshake).
    public var closes: [String: Int] {
        state.withLock { $0.closes }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func render() -> String {
        let s = state.withLock { $0 }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func labelled(_ name: String, _ label: String, _ values: [String: Int]) {
            for (k, v) in values.sorted(by: { $0.key < $1.key }) { out += "\(name){\(label)=\"\(k)\"} \(v)\n" }
        }
        family("watchrelay_connections", "gauge", "Live authenticated connections.")
        labelled("watchrelay_connections", "role", s.connections)
        family("watchrelay_pairs", "gauge", "Pairs.")
        out += "watchrelay_pairs \(s.pairs)\n"
        family("watchrelay_frames_received_total", "counter", "Client frames decoded, by type.")
        labelled("watchrelay_frames_received_total", "type", s.received)
        family("watchrelay_frames_sent_total", "counter", "Relay frames sent, by type.")
        labelled("watchrelay_frames_sent_total", "type", s.sent)
        family("watchrelay_errors_total", "counter", "Error frames sent, by code.")
        labelled("watchrelay_errors_total", "code", s.errors)
        family(
            "watchrelay_closed_connections_total", "counter",
            "WebSocket connections ended, by close code (none: lost without a close handshake).")
        labelled("watchrelay_closed_connections_total", "code", s.closes)
        family("watchrelay_queued_items", "gauge", "Durable items stored and not yet acked.")
        labelled("watchrelay_queued_items", "mode", s.queued)
        family("watchrelay_store_commits_total", "counter", "Store transactions (group commits).")
        out += "watchrelay_store_commits_total \(s.commits)\n"
        family("watchrelay_store_mutations_total", "counter", "Store mutations committed.")
        out += "watchrelay_store_mutations_total \(s.committedMutations)\n"
        family(
            "watchrelay_delivery_latency_seconds", "histogram",
            "From accepted to deliver sent (first delivery on a connection).")
        for (mode, h) in s.latency.sorted(by: { $0.key < $1.key }) {
            for (i, bound) in Self.buckets.enumerated() {
                out += "watchrelay_delivery_latency_seconds_bucket{mode=\"\(mode)\",le=\"\(bound)\"} \(h.counts[i])\n"
            }
            out += "watchrelay_delivery_latency_seconds_bucket{mode=\"\(mode)\",le=\"+Inf\"} \(h.count)\n"
            out += "watchrelay_delivery_latency_seconds_sum{mode=\"\(mode)\"} \(h.sum)\n"
            out += "watchrelay_delivery_latency_seconds_count{mode=\"\(mode)\"} \(h.count)\n"
        }
        return out
    }
}

/// Counter updates of one engine step (frames sent, errors, first-delivery latencies), handed
/// to ``RelayMetrics/record(_:)`` at once instead of one lock per frame.
struct MetricsBatch {
    /// `deliver` and `accepted`, every transfer's, counted apart: no hash of a type's name per message.
    private var delivers = 0
    private var accepted = 0
    private var otherSent: [FrameType: Int] = [:]
    var errors: [ErrorCode: Int] = [:]
    var latencies: [(DeliveryMode, Double)] = []

    var isEmpty: Bool { delivers == 0 && accepted == 0 && otherSent.isEmpty && errors.isEmpty && latencies.isEmpty }

    /// Counts a frame sent.
    mutating func countSent(_ frame: RelayFrame) {
        switch frame {
        case .deliver: delivers += 1
        case .accepted: accepted += 1
        default: otherSent[frame.type, default: 0] += 1
        }
    }

    /// Frames sent, by type.
    var sent: [FrameType: Int] {
        var all = otherSent
        if delivers > 0 { all[.deliver] = delivers }
        if accepted > 0 { all[.accepted] = accepted }
        return all
    }

    mutating func removeAll() {
        delivers = 0
        accepted = 0
        otherSent.removeAll(keepingCapacity: true)
        errors.removeAll(keepingCapacity: true)
        latencies.removeAll(keepingCapacity: true)
    }
}
