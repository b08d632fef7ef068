import Primitives
import RelayProtocol

/// The requests whose reply timed out lately: a `reply` to one of them raced the relay's
/// `replyTimeoutMs` (the receiver's clock starts at the `deliver`, the relay's at the `send`)
/// and is refused without counting as an error (PROTOCOL.md §4.2).
///
/// Kept by time: a burst times out together, and its late replies all come within a moment;
/// ``prune(before:)`` (before every event) lets them go once that moment is past, so the memory
/// shrinks back to nothing when no requests time out. And capped by count: senders holding the
/// pending-reply quota full of requests that all time out would otherwise keep three quotas'
/// worth (the time kept is two reply timeouts); past the cap the oldest go first, and a late
/// reply to one of those counts as an error again.
struct RecentTimeouts: Sendable {
    private var order = FIFOArray<(key: RelayState.ReplyKey, at: Timestamp)>()
    /// How many entries of ``order`` each key has (a retried id may time out twice).
    private var counts: [RelayState.ReplyKey: Int] = [:]

    var count: Int { order.count }

    /// Remembers `key`, first forgetting the oldest while `limit` are held.
    mutating func insert(_ key: RelayState.ReplyKey, at now: Timestamp, limit: Int) {
        while order.count >= max(1, limit) { forgetOldest() }
        order.append((key, now))
        counts[key, default: 0] += 1
    }

    func contains(_ key: RelayState.ReplyKey) -> Bool { counts[key] != nil }

    /// Forgets the requests that timed out before `cutoff`.
    mutating func prune(before cutoff: Timestamp) {
        guard let first = order.first, first.at < cutoff else { return }
        while let oldest = order.first, oldest.at < cutoff { forgetOldest() }
        if order.isEmpty { self = RecentTimeouts() }  // the storage goes too
    }

    private mutating func forgetOldest() {
        guard let oldest = order.first else { return }
        order.removeFirst()
        if let n = counts[oldest.key], n > 1 { counts[oldest.key] = n - 1 } else { counts[oldest.key] = nil }
    }
}
