import RelayProtocol

extension StoreMutation {
    /// How far back ``coalesced(_:)`` looks from a `setItemSeq` for its item's insert.
    static let coalescingReach = 64

    /// `batch` with work a store can skip taken out, and the same outcome once applied in order
    /// in one transaction (which is how ``RelayStorage/apply(_:urgent:)`` applies it).
    ///
    /// A durable item that is accepted and delivered in one step comes as `insertItem` followed
    /// closely by `setItemSeq` for it (only the seqs of the same delivery come between). The seq
    /// is written into the inserted row instead: one insert, where the update rewrote the row it
    /// had just inserted, payload included. The insert is looked for among the
    /// ``coalescingReach`` mutations before the `setItemSeq`, newest first; an item deleted in
    /// between (its `deleteItems`, or its pair's `deletePair`) keeps both, as they were, and so
    /// does an insert further back (the outcome is the same either way, only the work differs).
    /// Everything else stays as it is, in its order. A batch without a `setItemSeq` comes back
    /// as it is, without a copy: a map of every item of the batch cost the committer 8 % of its
    /// time in the durable benchmark (`perf`, 2026-12-02), a short scan costs nothing to speak of.
    public static func coalesced(_ batch: [StoreMutation]) -> [StoreMutation] {
        guard batch.contains(where: \.isSetItemSeq) else { return batch }
        var out: [StoreMutation] = []
        out.reserveCapacity(batch.count)
        for mutation in batch {
            if case .setItemSeq(let pair, let direction, let sendID, let seq) = mutation,
                let position = insertStillOpen(in: out, pair, direction, sendID),
                case .insertItem(_, _, var item) = out[position]
            {
                item.seq = seq
                out[position] = .insertItem(pair, direction: direction, item)
                continue
            }
            out.append(mutation)
        }
        return out
    }

    /// Where in `out`, among its last ``coalescingReach`` mutations, the latest insert of this
    /// item is, if nothing after it deleted the item.
    private static func insertStillOpen(in out: [StoreMutation], _ pair: PairID, _ direction: Role, _ sendID: String)
        -> Int?
    {
        var index = out.count - 1
        let stop = max(0, out.count - coalescingReach)
        while index >= stop {
            switch out[index] {
            case .insertItem(let p, let d, let item) where sameID(item.sendID, sendID) && d == direction && p == pair:
                return index
            case .deleteItems(let p, let d, let ids) where p == pair && d == direction && ids.contains(where: { sameID($0, sendID) }):
                return nil
            case .deletePair(let p) where p == pair:
                return nil
            default:
                index -= 1
            }
        }
        return nil
    }

    private var isSetItemSeq: Bool {
        if case .setItemSeq = self { return true }
        return false
    }
}
