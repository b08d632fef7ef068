import RelayProtocol

extension StoreMutation {
    /// `batch` with work a store can skip taken out, and the same outcome once applied in order
    /// in one transaction (which is how ``RelayStorage/apply(_:urgent:)`` applies it).
    ///
    /// A durable item that is accepted and delivered in one step comes as `insertItem` followed
    /// by `setItemSeq` for it, and both usually land in one group commit. The seq is written into
    /// the inserted row instead: one insert, where the update rewrote the row it had just
    /// inserted, payload included. An item deleted in between (its `deleteItems`, or its pair's
    /// `deletePair`) keeps both, as they were. Everything else stays as it is, in its order.
    public static func coalesced(_ batch: [StoreMutation]) -> [StoreMutation] {
        struct ItemKey: Hashable {
            var pair: PairID
            var direction: Role
            var sendID: String
        }
        var out: [StoreMutation] = []
        out.reserveCapacity(batch.count)
        // Where in `out` the insert of each item whose row exists at this point of the batch is.
        var open: [ItemKey: Int] = [:]
        var openByPair: [PairID: [ItemKey]] = [:]
        for mutation in batch {
            switch mutation {
            case .insertItem(let pair, let direction, let item):
                let key = ItemKey(pair: pair, direction: direction, sendID: item.sendID)
                open[key] = out.count
                openByPair[pair, default: []].append(key)
            case .setItemSeq(let pair, let direction, let sendID, let seq):
                if let position = open[ItemKey(pair: pair, direction: direction, sendID: sendID)],
                    case .insertItem(_, _, var item) = out[position]
                {
                    item.seq = seq
                    out[position] = .insertItem(pair, direction: direction, item)
                    continue
                }
            case .deleteItems(let pair, let direction, let sendIDs):
                for sendID in sendIDs { open[ItemKey(pair: pair, direction: direction, sendID: sendID)] = nil }
            case .deletePair(let pair):
                for key in openByPair.removeValue(forKey: pair) ?? [] { open[key] = nil }
            default:
                break
            }
            out.append(mutation)
        }
        return out
    }
}
