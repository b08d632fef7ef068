import Primitives

/// The messages waiting for their reply, by id, in the order the relay accepted them.
///
/// Their deadlines grow in that order (each is its `accepted` instant plus one connection's
/// fixed reply timeout), so the earliest deadline is the first still waiting, and expiry and
/// failure go front to back. The session asks for the next deadline after every input, and
/// WatchConnectivity, which does not wait for one reply before the next message, may have
/// thousands waiting: a scan of them all per input made a burst of 10,000 messages take
/// 5 s of the session's time (debug build), against 0.1 s without replies.
struct ReplyWaiters {
    typealias Instant = ContinuousClock.Instant

    private var byID: [String: (ticket: SessionTicket, deadline: Instant)] = [:]
    /// Ids in the order added; those answered meanwhile stay until they reach the front, where
    /// they are dropped, so the front is always a waiting one.
    private var order = FIFOArray<String>()

    var isEmpty: Bool { byID.isEmpty }
    var count: Int { byID.count }

    /// The earliest deadline of a waiting message.
    var earliestDeadline: Instant? { order.first.flatMap { byID[$0]?.deadline } }

    mutating func add(_ id: String, ticket: SessionTicket, deadline: Instant) {
        if byID.updateValue((ticket, deadline), forKey: id) == nil { order.append(id) }
    }

    /// Takes message `id`'s waiter out; nil if it is not waiting.
    mutating func remove(_ id: String) -> SessionTicket? {
        guard let waiter = byID.removeValue(forKey: id) else { return nil }
        dropAnsweredFront()
        return waiter.ticket
    }

    /// Takes out the waiters due at `now`, earliest first.
    mutating func removeDue(at now: Instant) -> [SessionTicket] {
        var due: [SessionTicket] = []
        while let id = order.first, let waiter = byID[id], waiter.deadline <= now {
            byID[id] = nil
            due.append(waiter.ticket)
            dropAnsweredFront()
        }
        return due
    }

    /// Takes every waiter out, in the order they were added.
    mutating func removeAll() -> [SessionTicket] {
        let tickets = order.compactMap { byID[$0]?.ticket }
        self = ReplyWaiters()
        return tickets
    }

    private mutating func dropAnsweredFront() {
        while let id = order.first, byID[id] == nil { order.removeFirst() }
    }
}
