/// The received messages this device may still answer: each message with `wantsReply`, from
/// its `deliver` until its first reply, its reply timeout, or the end of the connection it came on.
///
/// The relay answers any other `reply` with `unknown_id` (PROTOCOL.md §8.2), and every error
/// counts against the connection's budget of 100 a minute (§4.2), past which the relay closes
/// the connection and fails every reply it still owed with `not_reachable`. Apps make such
/// replies in the ordinary course: a reply handler called twice, a reply that comes after the
/// sender's timeout (WatchConnectivity ignores both). The session drops them instead of sending.
struct OwedReplies: Sendable {
    private var owed = DeadlinesByID<Void>()

    /// Message `id` was delivered: it may be answered until `deadline`.
    mutating func insert(_ id: String, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        _ = owed.removeDue(at: now)
        owed.add(id, (), deadline: deadline)
    }

    /// Whether message `id` may be answered now; if so it may not be again.
    mutating func take(_ id: String, now: ContinuousClock.Instant) -> Bool {
        _ = owed.removeDue(at: now)
        return owed.remove(id) != nil
    }

    /// The connection the messages came on is gone: the relay failed them to their senders.
    mutating func removeAll() {
        owed = DeadlinesByID()
    }
}
