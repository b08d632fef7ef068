import Primitives
import RelayProtocol

/// The durable traffic of one direction of a pair (named by the sender's role).
///
/// Invariants: `sent` holds items with a `seq`, in seq order, not yet acked; `unsent`
/// holds items never sent, complications first, then the rest in acceptance order;
/// the first `inFlight` items of `sent` went out on the receiver's current connection.
struct DirectionQueue: Sendable {
    var sent = FIFOArray<QueuedItem>()
    /// Items held (sent, unsent and unsent complications) by mode: the `/metrics` gauge reads it
    /// twice a second, and counting a million items each time took most of the relay's core.
    private(set) var heldByMode: [DeliveryMode: Int] = [:]
    var unsentComplications = FIFOArray<QueuedItem>()
    var unsent = FIFOArray<QueuedItem>()
    /// Items of `sent` (from the front) already sent on the receiver's current connection.
    var inFlight = 0
    var inFlightBytes = 0
    /// Payload bytes (§3.6 sizes) of every held item, sent or not: what the quotas count.
    private(set) var queuedBytes = 0
    /// The last seq handed out (messages included).
    var lastSeq: Int64 = 0
    /// Seqs up to this are reserved in the store, or being reserved: up to ``seqDurable`` the
    /// reservation is committed.
    var seqReserved: Int64 = 0
    /// Seqs up to this are reserved in a committed batch (the driver says so through
    /// ``RelayState/seqReservationCommitted(_:direction:upTo:)``). A seq above it waits for the
    /// commit of its reservation: sent before, it could be handed out again after a crash.
    var seqDurable: Int64 = 0
    /// The size of the block in use (0 before the first reservation) and when it was reserved
    /// (milliseconds since the epoch): see ``advanceSeq(block:now:)``.
    private var seqBlock: Int64 = 0
    private var seqBlockReservedAt: Int64 = 0
    /// The last context sent in this direction (for `welcome.context`).
    var lastSentContext: Deliver? {
        get { lastSentContextBox?.deliver }
        set { lastSentContextBox = newValue.map(SentContext.init) }
    }
    /// Held by reference: a `Deliver` is 129 bytes, and every pair holds two of these queues in
    /// the relay's pair table, whether it ever sent a context or not.
    private var lastSentContextBox: SentContext?
    var pendingTransferred: [String] = []
    /// Finished (acked or cancelled) durable send ids, most recent last.
    var finished = FIFOArray<String>()
    var finishedSet: Set<ExactID> = []
    /// Cancelled send ids (a repeated `cancel` is answered `cancelled` again, also after a
    /// restart: ``StoreMutation/recordCancelled(_:direction:sendID:)``); pruned with `finished`.
    var cancelled: Set<ExactID> = []
    /// Recent message ids (for `cancel` → `not_supported`), most recent last.
    var recentMessages = RecentIDs(capacity: 256)
    /// Context send ids, so a `cancel` of one is `not_supported` even once it was replaced
    /// or acked; kept in memory only, and pruned with `finished`.
    var contexts: Set<ExactID> = []
    /// Acceptance rank of each held item: `outstanding` lists sent and unsent items
    /// interleaved, and several may share a millisecond, so `acceptedAt` cannot order them.
    var ranks: [ExactID: Int64] = [:]
    var nextRank: Int64 = 0
    /// Unsent items whose payload is in memory, and their payload bytes (see
    /// `DirectionQueue+Payloads`: at most the hot budget when payloads load on demand).
    var hotUnsent = 0
    var hotUnsentBytes = 0
    /// Unsent items whose payload only the store holds.
    var coldUnsent = 0
    /// A read of payloads from the store was asked for and has not come back.
    var loadPending = false

    init() {}

    init(snapshot s: DirectionSnapshot) {
        var sentItems: [QueuedItem] = []
        for item in s.items {
            heldByMode[item.mode, default: 0] += 1
            ranks[ExactID(item.sendID)] = nextRank  // the store keeps acceptance order
            nextRank += 1
            queuedBytes += item.size
            // A held context is one `cancel` answers `not_supported` from the set.
            if item.mode == .context { contexts.insert(ExactID(item.sendID)) }
            if item.seq != nil {
                sentItems.append(item)
                continue
            }
            count(item, by: 1)
            if item.mode == .complication {
                unsentComplications.append(item)
            } else {
                unsent.append(item)
            }
        }
        sent = FIFOArray(sentItems.sorted { ($0.seq ?? 0) < ($1.seq ?? 0) })
        // Every seq up to the reservation may have been used before the restart.
        lastSeq = max(s.seqReserved, sent.last?.seq ?? 0)
        seqReserved = lastSeq
        seqDurable = lastSeq
        lastSentContext = s.lastSentContext
        pendingTransferred = s.pendingTransferred
        finished = FIFOArray(s.finishedIDs)
        finishedSet = Set(s.finishedIDs.map(ExactID.init))
        let finishedSet = finishedSet
        cancelled = Set(s.cancelledIDs.lazy.map(ExactID.init).filter { finishedSet.contains($0) })
    }

    /// Durable sends not yet acked, cancelled or replaced, in acceptance order.
    ///
    /// `unsent` is already in that order (FIFO): only the sent items (at most a delivery window)
    /// and the unsent complications (at most a day's budget) are sorted, then merged into it.
    /// Sorting all of them (10,000 per direction, two id hashes per comparison) took 166 ms of
    /// the relay's one service thread per `outstanding` in a debug build.
    var outstanding: [QueuedItem] {
        func rank(_ item: QueuedItem) -> Int64 { ranks[ExactID(item.sendID), default: .max] }
        let few = (Array(sent) + unsentComplications).map { (rank: rank($0), item: $0) }.sorted { $0.rank < $1.rank }
        guard !few.isEmpty else { return Array(unsent) }
        var merged: [QueuedItem] = []
        merged.reserveCapacity(few.count + unsent.count)
        var next = 0
        for item in unsent {
            if next < few.count {
                let r = rank(item)
                while next < few.count, few[next].rank < r {
                    merged.append(few[next].item)
                    next += 1
                }
            }
            merged.append(item)
        }
        while next < few.count {
            merged.append(few[next].item)
            next += 1
        }
        return merged
    }

    var queuedCount: Int { sent.count + unsentComplications.count + unsent.count }

    /// The held contexts a new context replaces (latest wins): the unsent one and the sent ones.
    var replaceableContexts: [QueuedItem] {
        Array(unsent.first { $0.mode == .context }.map { [$0] } ?? []) + sent.filter { $0.mode == .context }
    }

    /// Whether `id` is a durable send this direction still holds.
    /// (Every held item has a rank, and only held items: O(1).)
    /// Whether a send with `id` was accepted before (queued, finished, or a recent message):
    /// a retry, answered `accepted` again and not queued twice.
    func alreadyAccepted(_ id: String) -> Bool {
        // An empty table is not asked: a lookup hashes the id first, even then (a message's
        // check, with nothing durable held, was three hashes of its id).
        (!ranks.isEmpty && holds(id)) || (!finishedSet.isEmpty && finishedSet.contains(ExactID(id))) || recentMessages.contains(id)
    }

    func holds(_ id: String) -> Bool {
        ranks[ExactID(id)] != nil
    }

    /// Queues a newly accepted item (a complication ahead of the other unsent items); with a
    /// `window`, its payload stays in memory only if it fits the window (see ``keepsPayload``).
    mutating func enqueue(_ item: QueuedItem, window: PayloadWindow? = nil, receiverOnline: Bool = true) {
        let keeps = window.map { keepsPayload(of: item, $0, receiverOnline: receiverOnline) } ?? true
        let item = keeps ? item : item.withoutPayload()
        count(item, by: 1)
        heldByMode[item.mode, default: 0] += 1
        ranks[ExactID(item.sendID)] = nextRank
        nextRank += 1
        queuedBytes += item.size
        if item.mode == .context { contexts.insert(ExactID(item.sendID)) }
        if item.mode == .complication { unsentComplications.append(item) } else { unsent.append(item) }
    }

    /// Hands out the next seq, and says what the store must learn about reservations first.
    ///
    /// Seqs are reserved in the store in blocks so they never repeat after a crash. The first
    /// block is reserved when needed (frames wait for that commit). The next one is reserved
    /// ahead, when half of the current block is left, without holding any frame. A seq waits
    /// (`awaits`) only while the commit of its reservation has not been reported
    /// (``seqDurable``): in the steady state the ahead block's commit has long happened when
    /// its first seq is handed out, so no send stalls behind an fsync.
    ///
    /// Blocks follow the traffic: the first is `block` seqs; the next one is twice the size
    /// (up to ``maxSeqBlockFactor`` × `block`) when the current one was half used within
    /// ``fastSeqBlockMs`` of its reservation, and half the size (at least `block`) when that
    /// took longer. At a steady rate a block lasts between about 0.3 and 3 seconds. A direction
    /// relaying 140,000 messages a second then writes a reservation about twice a second
    /// instead of 140 times (each a commit with an fsync on the relay's core: 5.9 % of its CPU
    /// at 64 B, perf 2026-12-03), and a restart skips at most a few seconds of seqs, never more
    /// than 1.5 × the largest block (PROTOCOL.md §8.6). `block` is taken within
    /// 1...``largestBaseBlock`` (below 1 no seq would be covered; above, doubling overflows).
    mutating func advanceSeq(block: Int64, now: Timestamp) -> SeqStep {
        let block = min(max(block, 1), Self.largestBaseBlock)
        lastSeq += 1
        let at = now.millisecondsSinceEpoch
        if lastSeq > seqReserved {
            seqBlock = block
            seqBlockReservedAt = at
            seqReserved = lastSeq + block - 1
            return SeqStep(seq: lastSeq, reservation: .now(seqReserved), awaits: false)
        }
        // Behind a reservation not yet reported committed: the frames after it wait for it,
        // even on a connection that opened since (per-connection order does not cover that).
        let awaits = lastSeq > seqDurable
        // Once a block is reserved ahead, what is left (the rest of the current block and all
        // of the new one) is more than half the new block: the next reservation comes when
        // half of the new block is used, and none before.
        let current = max(seqBlock, block)
        if seqReserved - lastSeq < current / 2 {
            let fast = at - seqBlockReservedAt < Self.fastSeqBlockMs
            seqBlock = fast ? min(current * 2, block * Self.maxSeqBlockFactor) : max(current / 2, block)
            seqBlockReservedAt = at
            seqReserved += seqBlock
            return SeqStep(seq: lastSeq, reservation: .ahead(seqReserved), awaits: awaits)
        }
        return SeqStep(seq: lastSeq, reservation: nil, awaits: awaits)
    }

    /// The reservation up to `upTo` is committed.
    mutating func seqReservationCommitted(upTo: Int64) {
        seqDurable = max(seqDurable, min(upTo, seqReserved))
    }

    /// The largest seq block, in base blocks (``advanceSeq(block:now:)``).
    static let maxSeqBlockFactor: Int64 = 64
    /// A block half used within this many milliseconds is followed by a larger one.
    static let fastSeqBlockMs: Int64 = 1000
    /// The largest `block` ``advanceSeq(block:now:)`` takes: twice the largest block fits in an `Int64`.
    static let largestBaseBlock = Int64.max / (4 * maxSeqBlockFactor)

    /// Takes the next never-sent item (complications first).
    mutating func popUnsent() -> QueuedItem? {
        let item: QueuedItem
        if !unsentComplications.isEmpty {
            item = unsentComplications.removeFirst()
        } else if !unsent.isEmpty {
            item = unsent.removeFirst()
        } else {
            return nil
        }
        count(item, by: -1)
        return item
    }

    /// Removes an unsent item by id; `nil` if it is not unsent.
    mutating func removeUnsent(_ id: String) -> QueuedItem? {
        ranks[ExactID(id)] = nil
        var removed: QueuedItem?
        if let i = unsentComplications.firstIndex(where: { sameID($0.sendID, id) }) {
            removed = unsentComplications.remove(at: i)
        } else if let i = unsent.firstIndex(where: { sameID($0.sendID, id) }) {
            removed = unsent.remove(at: i)
        }
        queuedBytes -= removed?.size ?? 0
        if let removed {
            count(removed, by: -1)
            heldByMode[removed.mode, default: 0] -= 1
        }
        return removed
    }

    /// Removes a sent (unacked) item by id, keeping the in-flight counters right.
    mutating func removeSent(_ id: String) -> QueuedItem? {
        guard let i = sent.firstIndex(where: { sameID($0.sendID, id) }) else { return nil }
        ranks[ExactID(id)] = nil
        let item = sent.remove(at: i)
        heldByMode[item.mode, default: 0] -= 1
        queuedBytes -= item.size
        if i < inFlight {
            inFlight -= 1
            inFlightBytes -= item.size
        }
        return item
    }

    /// Removes every sent item with seq ≤ `seq`; returns them.
    mutating func ack(through seq: Int64) -> [QueuedItem] {
        var n = 0
        while n < sent.count, let s = sent[n].seq, s <= seq { n += 1 }
        guard n > 0 else { return [] }
        let done = Array(sent[0..<n])
        sent.removeFirst(n)
        for item in done {
            ranks[ExactID(item.sendID)] = nil
            queuedBytes -= item.size
            heldByMode[item.mode, default: 0] -= 1
        }
        let flown = min(n, inFlight)
        inFlight -= flown
        inFlightBytes -= done[0..<flown].reduce(0) { $0 + $1.size }
        if inFlight == 0 { inFlightBytes = 0 }
        return done
    }

    /// Forgets what went out on the receiver's previous connection.
    mutating func resetInFlight() {
        inFlight = 0
        inFlightBytes = 0
    }

    mutating func remember(finished ids: [String], keep: Int) {
        for id in ids where finishedSet.insert(ExactID(id)).inserted { finished.append(id) }
        if finished.count > keep {
            for id in finished.prefix(finished.count - keep) {
                let key = ExactID(id)
                finishedSet.remove(key)
                cancelled.remove(key)
                contexts.remove(key)
            }
            finished.removeFirst(finished.count - keep)
        }
    }

    mutating func remember(message id: String) {
        recentMessages.insert(id)
    }
}

/// A pair in memory: its record and both directions.
struct PairState: Sendable {
    var record: PairRecord
    var toWatch = DirectionQueue()  // sent by the phone
    var toPhone = DirectionQueue()  // sent by the watch
    var complicationUses: [Timestamp] = []

    init(record: PairRecord) {
        self.record = record
    }

    init(snapshot s: PairSnapshot) {
        record = s.record
        toWatch = DirectionQueue(snapshot: s.directions[.phone] ?? DirectionSnapshot())
        toPhone = DirectionQueue(snapshot: s.directions[.watch] ?? DirectionSnapshot())
        complicationUses = s.complicationUses.sorted()
    }

    /// The queue of items sent by `sender`.
    ///
    /// `_modify` lets `pairs[id]?[sender].f()` mutate the queue in place; with only a setter,
    /// every such call would copy the queue out and its arrays on write (O(queue) per item).
    /// `_read` lets a lookup borrow the queue instead of copying it.
    subscript(sender: Role) -> DirectionQueue {
        _read {
            if sender == .phone { yield toWatch } else { yield toPhone }
        }
        _modify {
            if sender == .phone { yield &toWatch } else { yield &toPhone }
        }
    }

    /// Whether `sender` already had `id` accepted (``DirectionQueue/alreadyAccepted(_:)``), read
    /// from the queue where it lies: through the subscript, the optimizer copied the queue out.
    func alreadyAccepted(_ id: String, from sender: Role) -> Bool {
        sender == .phone ? toWatch.alreadyAccepted(id) : toPhone.alreadyAccepted(id)
    }

    /// Complication transfers used within 24 h of `now`.
    mutating func complicationsUsed(at now: Timestamp) -> Int {
        let dayAgo = now.adding(milliseconds: -86_400_000)
        complicationUses.removeAll { $0 <= dayAgo }
        return complicationUses.count
    }
}

/// A seq handed out by ``DirectionQueue/advanceSeq(block:now:)``, and what it asks of the store.
struct SeqStep: Equatable {
    let seq: Int64
    let reservation: SeqReservation?
    /// The seq's reservation is not known to be committed: what follows waits for it.
    let awaits: Bool
}

/// A reservation ``DirectionQueue/advanceSeq(block:now:)`` asks the store for.
enum SeqReservation: Equatable {
    /// Reserve up to this now; the seq waits for the commit.
    case now(Int64)
    /// Reserve up to this in the background.
    case ahead(Int64)
}

/// A sent context, immutable and shared (``DirectionQueue/lastSentContext``'s storage).
final class SentContext: Sendable {
    let deliver: Deliver
    init(_ deliver: Deliver) { self.deliver = deliver }
}
