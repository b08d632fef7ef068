import Primitives
import RelayProtocol

/// How many unsent payloads a direction keeps in memory when payloads load on demand
/// (``RelayConfiguration/hotPayloadItems`` and ``RelayConfiguration/hotPayloadBytes``).
struct PayloadWindow: Sendable, Equatable {
    var items: Int
    var bytes: Int
}

/// Payloads on demand: an unsent item is *hot* (its payload in memory) or *cold* (only the
/// store has it). Sent, unacked items are always hot; they are at most one delivery window.
/// "The window" below is the hot budget, ``PayloadWindow``.
///
/// Rules: a new item is hot only while the receiver is connected, nothing unsent is cold, and
/// it fits the window beside the hot ones; when the receiver leaves, the unsent items go cold.
/// Delivery stops at the first cold item (order is FIFO); the relay then reads the next cold
/// items, in delivery order and as many as fit the window, from the store, and reads ahead
/// once the hot ones fall to half of the window. So what is held in memory is bounded by the
/// windows of the connected receivers, not by what is queued; each queued item still costs
/// its metadata (id, mode, seq, size, time).
extension DirectionQueue {
    /// Counts `item` (unsent) in or out of the hot or cold tallies.
    mutating func count(_ item: QueuedItem, by sign: Int) {
        if item.isPayloadLoaded {
            hotUnsent += sign
            hotUnsentBytes += sign * item.size
        } else {
            coldUnsent += sign
        }
    }

    /// Whether a new item keeps its payload in memory (see the rules above); `receiverOnline`
    /// says whether the receiver is connected.
    func keepsPayload(of item: QueuedItem, _ window: PayloadWindow, receiverOnline: Bool = true) -> Bool {
        receiverOnline && coldUnsent == 0 && hotUnsent < window.items && hotUnsentBytes + item.size <= window.bytes
    }

    /// Whether the next item to send for the first time is cold (delivery must wait for it).
    var nextUnsentIsCold: Bool {
        if let first = unsentComplications.first { return !first.isPayloadLoaded }
        if let first = unsent.first { return !first.isPayloadLoaded }
        return false
    }

    /// The ids of the next cold items to read from the store, in delivery order, as many as fit
    /// the window beside the hot ones (at least one when `needed`); nil when there is nothing to
    /// read, a read is pending, or (unless `needed`) the hot items still fill half the window.
    /// Marks the read as pending.
    mutating func payloadsToLoad(_ window: PayloadWindow, needed: Bool) -> [String]? {
        guard coldUnsent > 0, !loadPending else { return nil }
        guard needed || (hotUnsent * 2 <= window.items && hotUnsentBytes * 2 <= window.bytes) else { return nil }
        var ids: [String] = []
        var items = hotUnsent
        var bytes = hotUnsentBytes
        outer: for list in [unsentComplications, unsent] {
            for item in list where !item.isPayloadLoaded {
                guard ids.isEmpty || (items < window.items && bytes + item.size <= window.bytes) else { break outer }
                ids.append(item.sendID)
                items += 1
                bytes += item.size
                if ids.count == coldUnsent { break outer }
            }
        }
        loadPending = true
        return ids
    }

    /// Puts payloads read from the store into their cold items (ids no longer held, or hot,
    /// are ignored) and ends the pending read.
    mutating func fill(_ payloads: [ExactID: Payload]) {
        loadPending = false
        var left = payloads.count
        rewriteUnsent(while: { _ in left > 0 }) { item in
            guard !item.isPayloadLoaded, let payload = payloads[ExactID(item.sendID)] else { return nil }
            left -= 1
            return item.with(payload: payload)
        }
    }

    /// Leaves every unsent payload to the store (the receiver went away).
    mutating func evictUnsentPayloads() {
        rewriteUnsent(while: { hot in hot > 0 }) { $0.isPayloadLoaded ? $0.withoutPayload() : nil }
    }

    /// Replaces unsent items, front to back, by what `change` returns for them (nil: kept), while
    /// `more` (given the hot count) holds; the tallies follow. Each list is moved out while it changes (no copy).
    private mutating func rewriteUnsent(while more: (_ hotUnsent: Int) -> Bool, _ change: (QueuedItem) -> QueuedItem?) {
        for complications in [true, false] {
            var list = FIFOArray<QueuedItem>()
            if complications { swap(&list, &unsentComplications) } else { swap(&list, &unsent) }
            var i = 0
            while i < list.count, more(hotUnsent) {
                if let new = change(list[i]) {
                    count(list[i], by: -1)
                    list[i] = new
                    count(new, by: 1)
                }
                i += 1
            }
            if complications { swap(&list, &unsentComplications) } else { swap(&list, &unsent) }
        }
    }
}

extension RelayState {
    /// Queued payloads held in memory over all pairs: sent, unacked items and the unsent ones
    /// within their payload windows (for tests and the benchmark: bounded by the windows).
    public var payloadsInMemory: (items: Int, bytes: Int) {
        var items = 0
        var bytes = 0
        for pair in pairs.values {
            for q in [pair.toWatch, pair.toPhone] {
                items += q.sent.count + q.hotUnsent
                bytes += q.sent.reduce(0) { $0 + $1.size } + q.hotUnsentBytes
            }
        }
        return (items, bytes)
    }
}
