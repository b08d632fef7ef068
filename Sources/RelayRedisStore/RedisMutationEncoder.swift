import RelayCore
import RelayProtocol

/// ``StoreMutation``s as the arguments of ``RedisRelayScripts/apply``: an operation name,
/// then its fields; lists as a count followed by the elements.
enum RedisMutationEncoder {
    static func append(_ mutation: StoreMutation, to out: inout [[UInt8]]) {
        func add(_ values: String...) { out.append(contentsOf: values.map { Array($0.utf8) }) }
        switch mutation {
        case .insertPair(let record):
            add("pair", record.id.rawValue, String(record.createdAt.millisecondsSinceEpoch))
            for device in [record.phone, record.watch] {
                add(device.id.rawValue, device.name, device.tokenHash, device.appInstalled ? "1" : "0")
            }
        case .deletePair(let pair):
            add("delpair", pair.rawValue)
        case .insertItem(let pair, let direction, let item):
            add("item", pair.rawValue, direction.rawValue, item.sendID)
            out.append(encode(item))
            add(item.seq.map { String($0) } ?? "")
        case .setItemSeq(let pair, let direction, let sendID, let seq):
            add("seq", pair.rawValue, direction.rawValue, sendID, String(seq))
        case .deleteItems(let pair, let direction, let sendIDs):
            add("del", pair.rawValue, direction.rawValue, String(sendIDs.count))
            out.append(contentsOf: sendIDs.map { Array($0.utf8) })
        case .setLastSentContext(let pair, let direction, let deliver):
            add("ctx", pair.rawValue, direction.rawValue)
            out.append(deliver.storedBytes)
        case .setSeqReserved(let pair, let direction, let reserved):
            add("reserve", pair.rawValue, direction.rawValue, String(reserved))
        case .addComplicationUse(let pair, let time):
            let usedAt = time.millisecondsSinceEpoch
            add("comp", pair.rawValue, String(usedAt), String(usedAt - RedisRelayScripts.complicationWindowMilliseconds))
        case .appendPendingTransferred(let pair, let direction, let ids):
            add("pendadd", pair.rawValue, direction.rawValue, String(ids.count))
            out.append(contentsOf: ids.map { Array($0.utf8) })
        case .clearPendingTransferred(let pair, let direction):
            add("pendclear", pair.rawValue, direction.rawValue)
        case .recordFinished(let pair, let direction, let sendIDs):
            add("finished", pair.rawValue, direction.rawValue, String(sendIDs.count))
            out.append(contentsOf: sendIDs.map { Array($0.utf8) })
        case .recordCancelled(let pair, let direction, let sendID):
            add("cancelled", pair.rawValue, direction.rawValue, sendID)
        case .recordWrongPairingCode(let wrong):
            add("wrong", entry(wrong), String(wrong.at.millisecondsSinceEpoch))
        }
    }

    /// A wrong pairing code's entry in `wr:pairing:wrong`: `COUNTS_UNTIL:AT:ADDRESS_LOCKED_UNTIL:ADDRESS`.
    static func entry(_ wrong: WrongPairingCode) -> String {
        let lock = wrong.addressLockedUntil.map { String($0.millisecondsSinceEpoch) } ?? ""
        return "\(wrong.countsUntil.millisecondsSinceEpoch):\(wrong.at.millisecondsSinceEpoch):\(lock):\(wrong.address)"
    }

    /// An item's stored value: `{"acceptedAt":…,"mode":…,"payload":{…}}` (its seq is kept apart),
    /// the payload's bytes spliced as the sender wrote them (PROTOCOL.md §3.7), never re-encoded.
    static func encode(_ item: QueuedItem) -> [UInt8] {
        var out = JSONWriter.encode(
            .object(["acceptedAt": .int(item.acceptedAt.millisecondsSinceEpoch), "mode": .string(item.mode.rawValue)]))
        out.removeLast()  // the `}`: the payload is the last member
        out.append(contentsOf: #","payload":"#.utf8)
        out.append(contentsOf: item.payload.bytes)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
