import Primitives
import RelayProtocol

/// The `message`s with `wantsReply` waiting for their `reply`: by key, by pair, by deadline.
///
/// Before every event the relay expires the requests that are due, and its service loop asks
/// for the next deadline once per turn; a close or an unpair fails or drops the requests of one
/// pair. None of that may walk every pending request: one pair whose phone floods its own
/// (never replying) watch with requests holds tens of thousands of them for `replyTimeoutMs`,
/// and a walk per event made the relay's one service thread slow for every pair (other pairs'
/// round trips went from 0.3 ms to over 300 ms at 70,000 pending). Here expiry pops a heap,
/// the next deadline is its top, and a pair's requests are found through its own set.
struct PendingReplies: Sendable {
    typealias Key = RelayState.ReplyKey

    private struct Entry: Sendable {
        var pending: RelayState.PendingReply
        /// Which heap entry is this one's (a key sent again gets a new entry; the old is stale).
        var order: UInt64
    }

    private struct Due: Sendable, Comparable {
        var deadline: Timestamp
        var order: UInt64
        var key: Key

        /// By deadline, then order of insertion.
        static func < (a: Due, b: Due) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order
        }
    }

    private var byKey: [Key: Entry] = [:]
    private var byPair: [PairID: Set<Key>] = [:]
    /// A binary min-heap by deadline, then order of insertion. Entries whose request was answered
    /// or dropped stay until they reach the top and are skipped there; the top is always live.
    private var heap = MinHeap<Due>()
    private var nextOrder: UInt64 = 0

    var count: Int { byKey.count }
    var isEmpty: Bool { byKey.isEmpty }

    subscript(key: Key) -> RelayState.PendingReply? { byKey[key]?.pending }

    /// The earliest deadline of a pending request.
    var nextDeadline: Timestamp? { heap.first?.deadline }

    /// How many requests of `pair` are pending.
    func count(of pair: PairID) -> Int { byPair[pair]?.count ?? 0 }

    /// The keys of `pair`'s pending requests.
    func keys(of pair: PairID) -> Set<Key> { byPair[pair] ?? [] }

    /// Adds (or replaces) the request `key`.
    mutating func insert(_ key: Key, _ pending: RelayState.PendingReply) {
        let order = nextOrder
        nextOrder += 1
        byKey[key] = Entry(pending: pending, order: order)
        byPair[key.pair, default: []].insert(key)
        heap.insert(Due(deadline: pending.deadline, order: order, key: key))
        dropStaleTop()
        // Answered requests leave their entries in the heap until they reach its top: at a high
        // rate of prompt replies that was rate × `replyTimeoutMs` of garbage. Rebuilt from the
        // live entries when it holds more than twice as many (and 1,024 more), the heap's work stays
        // amortized O(log n).
        if heap.count > 2 * byKey.count + 1024 { rebuildHeap() }
    }

    /// Removes the request `key`; returns it.
    @discardableResult
    mutating func remove(_ key: Key) -> RelayState.PendingReply? {
        guard let entry = byKey.removeValue(forKey: key) else { return nil }
        if byPair[key.pair]?.remove(key) != nil, byPair[key.pair]?.isEmpty == true { byPair[key.pair] = nil }
        dropStaleTop()
        return entry.pending
    }

    /// Forgets the requester of `key` (its connection closed): a reply is then dropped.
    mutating func forgetRequester(_ key: Key) {
        byKey[key]?.pending.requester = nil
    }

    /// Removes every request of `pair`.
    mutating func removeAll(of pair: PairID) {
        guard let keys = byPair.removeValue(forKey: pair) else { return }
        for key in keys { byKey[key] = nil }
        dropStaleTop()
    }

    /// Removes and returns the requests due at `now`, earliest deadline first.
    mutating func removeDue(at now: Timestamp) -> [(key: Key, pending: RelayState.PendingReply)] {
        var due: [(key: Key, pending: RelayState.PendingReply)] = []
        while let top = heap.first, top.deadline <= now {
            heap.removeFirst()
            guard let entry = byKey[top.key], entry.order == top.order else { continue }
            byKey[top.key] = nil
            if byPair[top.key.pair]?.remove(top.key) != nil, byPair[top.key.pair]?.isEmpty == true {
                byPair[top.key.pair] = nil
            }
            due.append((top.key, entry.pending))
        }
        dropStaleTop()
        return due
    }

    // MARK: - Heap

    /// The heap's live entries only, ordered again (bottom-up, O(n)).
    private mutating func rebuildHeap() {
        let live = byKey
        heap.retain { live[$0.key]?.order == $0.order }
    }

    /// Heap entries, live or stale (for tests of the rebuild).
    var heapCount: Int { heap.count }

    private func isLive(_ due: Due) -> Bool {
        byKey[due.key]?.order == due.order
    }

    /// Pops entries of answered or dropped requests off the top, so the top's deadline is a live one.
    private mutating func dropStaleTop() {
        if byKey.isEmpty {
            heap.removeAll(keepingCapacity: heap.count < 1024)
            return
        }
        while let top = heap.first, !isLive(top) { heap.removeFirst() }
    }
}
