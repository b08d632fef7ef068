import Primitives

/// The received messages this device may still answer: each message with `wantsReply`, from
/// its `deliver` until its first reply, its reply timeout, or the end of the connection it came on.
///
/// The relay answers any other `reply` with `unknown_id` (PROTOCOL.md §8.2), and every error
/// counts against the connection's budget of 100 a minute (§4.2), past which the relay closes
/// the connection and fails every reply it still owed with `not_reachable`. Apps make such
/// replies in the ordinary course: a reply handler called twice, a reply that comes after the
/// sender's timeout (WatchConnectivity ignores both). The session drops them instead of sending.
///
/// Deadlines come in the order the deliveries came (one reply timeout per connection), so the
/// expired ones leave from the front: no walk over every owed reply.
struct OwedReplies: Sendable {
    private var deadlines: [String: ContinuousClock.Instant] = [:]
    /// Ids in the order they were delivered (answered ones stay until they reach the front).
    private var order = FIFOArray<String>()

    /// Message `id` was delivered: it may be answered until `deadline`.
    mutating func insert(_ id: String, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        forgetExpired(now)
        if deadlines.updateValue(deadline, forKey: id) == nil { order.append(id) }
    }

    /// Whether message `id` may be answered now; if so it may not be again.
    mutating func take(_ id: String, now: ContinuousClock.Instant) -> Bool {
        forgetExpired(now)
        return deadlines.removeValue(forKey: id) != nil
    }

    /// The connection the messages came on is gone: the relay failed them to their senders.
    mutating func removeAll() {
        deadlines = [:]
        order = FIFOArray()
    }

    private mutating func forgetExpired(_ now: ContinuousClock.Instant) {
        while let id = order.first {
            if let deadline = deadlines[id] {
                guard deadline <= now else { break }
                deadlines[id] = nil
            }
            order.removeFirst()
        }
    }
}
