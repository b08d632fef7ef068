import Primitives

/// Values by message id, each with a deadline, in the order they were added.
///
/// Deadlines grow in that order (each is an arrival instant plus one connection's fixed reply
/// timeout), so the earliest is the first still held, and expiry goes front to back. The
/// session asks for the next deadline after every input, and WatchConnectivity, which does not
/// wait for one reply before the next message, may have thousands held: a scan of them all per
/// input made a burst of 10,000 messages take 5 s of the session's time (debug build), against
/// 0.1 s without replies.
struct DeadlinesByID<Value: Sendable>: Sendable {
    typealias Instant = ContinuousClock.Instant

    private var byID: [String: (value: Value, deadline: Instant)] = [:]
    /// Ids in the order added; those removed meanwhile stay until they reach the front, where
    /// they are dropped, so the front is always a held one.
    private var order = FIFOArray<String>()

    var isEmpty: Bool { byID.isEmpty }
    var count: Int { byID.count }

    /// The earliest deadline held.
    var earliestDeadline: Instant? { order.first.flatMap { byID[$0]?.deadline } }

    /// Holds `value` for `id` until `deadline` (an id held already keeps its place).
    mutating func add(_ id: String, _ value: Value, deadline: Instant) {
        if byID.updateValue((value, deadline), forKey: id) == nil { order.append(id) }
    }

    /// Takes `id`'s value out; nil if it is not held.
    mutating func remove(_ id: String) -> Value? {
        guard let held = byID.removeValue(forKey: id) else { return nil }
        dropRemovedFront()
        return held.value
    }

    /// Takes out the values due at `now`, earliest first.
    mutating func removeDue(at now: Instant) -> [Value] {
        var due: [Value] = []
        while let id = order.first, let held = byID[id], held.deadline <= now {
            byID[id] = nil
            due.append(held.value)
            dropRemovedFront()
        }
        return due
    }

    /// Takes every value out, in the order they were added.
    mutating func removeAll() -> [Value] {
        let values = order.compactMap { byID[$0]?.value }
        self = DeadlinesByID()
        return values
    }

    private mutating func dropRemovedFront() {
        while let id = order.first, byID[id] == nil { order.removeFirst() }
    }
}

/// The messages waiting for their reply, in the order the relay accepted them.
typealias ReplyWaiters = DeadlinesByID<SessionTicket>
