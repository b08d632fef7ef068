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

        mutating func add(_ seconds: Double) {
            for (i, bound) in RelayMetrics.buckets.enumerated() where seconds <= bound { counts[i] += 1 }
            sum += seconds
            count += 1
        }

        mutating func reset() {
            for i in counts.indices { counts[i] = 0 }
            sum = 0
            count = 0
        }

        mutating func merge(_ other: Histogram) {
            for i in counts.indices { counts[i] += other.counts[i] }
            sum += other.sum
            count += other.count
        }
    }

    struct State {
        var connections: [String: Int] = ["phone": 0, "watch": 0]
        var pairs = 0
        var queued: [String: Int] = ["context": 0, "userInfo": 0, "complication": 0]
        var received: [String: Int] = [:]
        /// `deliver` and `accepted` frames sent, counted apart from ``sent``: no hash of a
        /// type's name per engine step.
        var delivers = 0
        var accepted = 0
        /// Every other frame type sent.
        var sent: [String: Int] = [:]
        var errors: [String: Int] = [:]
        var closes: [String: Int] = [:]
        /// By mode, in the order of `DeliveryMode.all`.
        var latency = [Histogram?](repeating: nil, count: DeliveryMode.all.count)
        var commits = 0
        var committedMutations = 0
    }

    private let state = LockedState(State())

    public init() {}

    /// Applies the counts the engine gathered during one step, under one lock.
    func record(_ batch: MetricsBatch) {
        guard !batch.isEmpty else { return }
        state.withLock { s in
            s.delivers += batch.delivers
            s.accepted += batch.accepted
            for (type, n) in batch.otherSent { s.sent[type.rawValue, default: 0] += n }
            for (code, n) in batch.errors { s.errors[code.rawValue, default: 0] += n }
            for (i, h) in batch.latency.enumerated() where h.count > 0 {
                if s.latency[i] == nil { s.latency[i] = Histogram() }
                s.latency[i]!.merge(h)
            }
        }
    }

    /// A WebSocket connection ended: the close code of its handshake (the peer's if it closed
    /// first, else the relay's), or `none` when it was lost without one (e.g. a ping hang-up).
    func closed(code: UInt16?) {
        state.withLock { $0.closes[code.map(String.init) ?? "none", default: 0] += 1 }
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
        var sent = s.sent
        if s.delivers > 0 { sent[FrameType.deliver.rawValue] = s.delivers }
        if s.accepted > 0 { sent[FrameType.accepted.rawValue] = s.accepted }
        labelled("watchrelay_frames_sent_total", "type", sent)
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
        let byMode = zip(DeliveryMode.all, s.latency).compactMap { mode, h in h.map { (mode.rawValue, $0) } }
        for (mode, h) in byMode.sorted(by: { $0.0 < $1.0 }) {
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
/// to ``RelayMetrics/record(_:)`` at once instead of one lock per frame. Kept so that a step of
/// `deliver`s and `accepted`s costs no hash of a name (perf at 64 KiB, 2026-12-03: building and
/// merging name-keyed counts was 1.8 % of a message that is relayed alone in its step); other
/// frame types and errors are rare and still counted by name.
struct MetricsBatch {
    /// `deliver` and `accepted`, every transfer's, counted apart.
    fileprivate(set) var delivers = 0
    fileprivate(set) var accepted = 0
    fileprivate(set) var otherSent: [FrameType: Int] = [:]
    var errors: [ErrorCode: Int] = [:]
    /// First-delivery latencies by mode, in the order of `DeliveryMode.all` (reset in place
    /// between steps, not reallocated).
    fileprivate(set) var latency = [RelayMetrics.Histogram](repeating: RelayMetrics.Histogram(), count: DeliveryMode.all.count)
    private var isClear = true

    var isEmpty: Bool { isClear && errors.isEmpty }

    /// Counts a frame sent.
    mutating func countSent(_ frame: RelayFrame) {
        isClear = false
        switch frame {
        case .deliver: delivers += 1
        case .accepted: accepted += 1
        default: otherSent[frame.type, default: 0] += 1
        }
    }

    /// Counts a frame of `type` sent (one a console fault held, sent later).
    mutating func countSent(_ type: FrameType) {
        isClear = false
        switch type {
        case .deliver: delivers += 1
        case .accepted: accepted += 1
        default: otherSent[type, default: 0] += 1
        }
    }

    /// A first delivery's latency. A mode protocol v1 does not know (the core sends none) is not
    /// counted.
    mutating func addLatency(_ seconds: Double, mode: DeliveryMode) {
        guard let i = DeliveryMode.all.firstIndex(of: mode) else { return }
        isClear = false
        latency[i].add(seconds)
    }

    mutating func removeAll() {
        delivers = 0
        accepted = 0
        otherSent.removeAll(keepingCapacity: true)
        errors.removeAll(keepingCapacity: true)
        for i in latency.indices where latency[i].count > 0 { latency[i].reset() }
        isClear = true
    }
}
