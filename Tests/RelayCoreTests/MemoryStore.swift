import RelayCore
import RelayProtocol

/// An in-memory store: applies the core's `StoreMutation`s to `PairSnapshot`s exactly as
/// Model.swift documents them, so a test can "restart" the relay from what it persisted.
struct MemoryStore {
    private(set) var pairs: [PairID: PairSnapshot] = [:]
    /// Finished ids kept per direction (the relay's default).
    var finishedIDsKept = 1024
    /// Every wrong pairing code recorded, in order.
    private(set) var wrongPairingCodes: [WrongPairingCode] = []

    /// What a restarted relay loads at `now`: the wrong codes that still count.
    func wrongPairingCodes(at now: Timestamp) -> [WrongPairingCode] {
        wrongPairingCodes.filter { $0.countsUntil > now }
    }

    /// What a restarted relay loads.
    var snapshots: [PairSnapshot] {
        pairs.keys.sorted { $0.rawValue < $1.rawValue }.compactMap { pairs[$0] }
    }

    /// What a restarted relay that loads payloads on demand loads: unsent items without payloads.
    var index: [PairSnapshot] {
        snapshots.map { pair in
            var pair = pair
            for (role, direction) in pair.directions {
                pair.directions[role]?.items = direction.items.map { $0.seq == nil ? $0.withoutPayload() : $0 }
            }
            return pair
        }
    }

    /// The stored payloads of `ids` in `sender`'s direction of `pair` (ids not stored left out).
    func payloads(_ pair: PairID, _ sender: Role, _ ids: [String]) -> [ExactID: Payload] {
        var out: [ExactID: Payload] = [:]
        for item in direction(pair, sender).items where ids.contains(where: { sameID($0, item.sendID) }) {
            out[ExactID(item.sendID)] = item.payload
        }
        return out
    }

    /// One direction as stored (empty if the pair or direction is unknown).
    func direction(_ pair: PairID, _ sender: Role) -> DirectionSnapshot {
        pairs[pair]?.directions[sender] ?? DirectionSnapshot()
    }

    mutating func apply(_ actions: [RelayAction]) {
        for action in actions {
            switch action {
            case .persist(let m), .persistAhead(let m): apply(m)
            default: break
            }
        }
    }

    mutating func apply(_ mutation: StoreMutation) {
        switch mutation {
        case .insertPair(let record):
            // Also a record rewritten (a name, an app installed or not): its queues stay.
            pairs[record.id, default: PairSnapshot(record: record)].record = record
        case .deletePair(let pair):
            pairs[pair] = nil
        case .insertItem(let pair, let sender, let item):
            update(pair, sender) { $0.items.append(item) }
        case .setItemSeq(let pair, let sender, let sendID, let seq):
            update(pair, sender) { d in
                if let i = d.items.firstIndex(where: { $0.sendID == sendID }) { d.items[i].seq = seq }
            }
        case .deleteItems(let pair, let sender, let sendIDs):
            update(pair, sender) { d in d.items.removeAll { sendIDs.contains($0.sendID) } }
        case .setLastSentContext(let pair, let sender, let deliver):
            update(pair, sender) { $0.lastSentContext = deliver }
        case .setSeqReserved(let pair, let sender, let reserved):
            update(pair, sender) { $0.seqReserved = reserved }
        case .addComplicationUse(let pair, let time):
            pairs[pair]?.complicationUses.append(time)
        case .appendPendingTransferred(let pair, let sender, let ids):
            update(pair, sender) { $0.pendingTransferred += ids }
        case .clearPendingTransferred(let pair, let sender):
            update(pair, sender) { $0.pendingTransferred = [] }
        case .recordFinished(let pair, let sender, let sendIDs):
            recordFinished(pair, sender, sendIDs)
        case .recordCancelled(let pair, let sender, let sendID):
            update(pair, sender) { $0.cancelledIDs.append(sendID) }
            recordFinished(pair, sender, [sendID])
        case .recordWrongPairingCode(let wrong):
            wrongPairingCodes.append(wrong)
        }
    }

    private mutating func recordFinished(_ pair: PairID, _ sender: Role, _ sendIDs: [String]) {
        let keep = finishedIDsKept
        update(pair, sender) { d in
            for id in sendIDs where !d.finishedIDs.contains(id) { d.finishedIDs.append(id) }
            if d.finishedIDs.count > keep { d.finishedIDs.removeFirst(d.finishedIDs.count - keep) }
            d.cancelledIDs.removeAll { !d.finishedIDs.contains($0) }
        }
    }

    private mutating func update(_ pair: PairID, _ sender: Role, _ body: (inout DirectionSnapshot) -> Void) {
        guard var p = pairs[pair] else { return }
        var d = p.directions[sender] ?? DirectionSnapshot()
        body(&d)
        p.directions[sender] = d
        pairs[pair] = p
    }
}
