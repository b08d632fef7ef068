import Primitives
import RelayProtocol

/// The requests whose reply timed out lately: a `reply` to one of them raced the relay's
/// `replyTimeoutMs` (the receiver's clock starts at the `deliver`, the relay's at the `send`)
/// and is refused without counting as an error (PROTOCOL.md §4.2).
///
/// Kept by time, not by count: a burst of any size times out together, and its late replies
/// all come within a moment; ``prune(before:)`` (before every event) lets them go once that
/// moment is past, so the memory shrinks back to nothing when no requests time out.
struct RecentTimeouts: Sendable {
    private var order = FIFOArray<(key: RelayState.ReplyKey, at: Timestamp)>()
    /// How many entries of ``order`` each key has (a retried id may time out twice).
    private var counts: [RelayState.ReplyKey: Int] = [:]

    var count: Int { order.count }

    mutating func insert(_ key: RelayState.ReplyKey, at now: Timestamp) {
        order.append((key, now))
        counts[key, default: 0] += 1
    }

    func contains(_ key: RelayState.ReplyKey) -> Bool { counts[key] != nil }

    /// Forgets the requests that timed out before `cutoff`.
    mutating func prune(before cutoff: Timestamp) {
        guard let first = order.first, first.at < cutoff else { return }
        while let oldest = order.first, oldest.at < cutoff {
            order.removeFirst()
            if let n = counts[oldest.key], n > 1 { counts[oldest.key] = n - 1 } else { counts[oldest.key] = nil }
        }
        if order.isEmpty { self = RecentTimeouts() }  // the storage goes too
    }
}
