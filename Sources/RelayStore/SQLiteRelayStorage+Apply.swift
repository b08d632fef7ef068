import RelayCore
import RelayProtocol
import SQLite

extension SQLiteRelayStorage {
    /// Applies one mutation inside the caller's transaction, exactly as ``StoreMutation`` documents it.
    func apply(_ mutation: StoreMutation) throws(SQLiteError) {
        typealias SQL = RelayStoreSchema
        switch mutation {
        case .insertPair(let record):
            let pair = SQLiteValue.text(record.id.rawValue)
            try database.execute(SQL.upsertPair, [pair, .integer(record.createdAt.millisecondsSinceEpoch)])
            // A re-inserted pair gets exactly the devices of the new record.
            try database.execute(SQL.deletePairDevices, [pair])
            for device in [record.phone, record.watch] {
                try database.execute(
                    SQL.upsertDevice,
                    [
                        .text(device.id.rawValue), pair, .text(device.role.rawValue), .text(device.name),
                        .text(device.tokenHash),
                    ])
            }

        case .deletePair(let pair):
            // Devices, items, directions, finished ids and complication uses go by cascade.
            try database.execute(SQL.deletePair, [.text(pair.rawValue)])

        case .insertItem(let pair, let direction, let item):
            try database.execute(
                SQL.insertItem,
                [
                    .text(pair.rawValue), .text(direction.rawValue), .text(item.sendID), .text(item.mode.rawValue),
                    .text(String(decoding: item.payload.bytes, as: UTF8.self)),
                    .integer(item.acceptedAt.millisecondsSinceEpoch), item.seq.map { .integer($0) } ?? .null,
                ])

        case .setItemSeq(let pair, let direction, let sendID, let seq):
            try database.execute(
                SQL.setItemSeq, [.text(pair.rawValue), .text(direction.rawValue), .text(sendID), .integer(seq)])

        case .deleteItems(let pair, let direction, let sendIDs):
            for sendID in sendIDs {
                try database.execute(SQL.deleteItem, [.text(pair.rawValue), .text(direction.rawValue), .text(sendID)])
            }

        case .setLastSentContext(let pair, let direction, let deliver):
            try database.execute(
                SQL.setLastSentContext,
                [
                    .text(pair.rawValue), .text(direction.rawValue),
                    .text(String(decoding: deliver.storedBytes, as: UTF8.self)),
                ])

        case .setSeqReserved(let pair, let direction, let reserved):
            try database.execute(
                SQL.setSeqReserved, [.text(pair.rawValue), .text(direction.rawValue), .integer(reserved)])

        case .addComplicationUse(let pair, let time):
            let usedAt = time.millisecondsSinceEpoch
            try database.execute(SQL.insertComplicationUse, [.text(pair.rawValue), .integer(usedAt)])
            // Keep the table bounded while the relay runs; `load` prunes against the clock too.
            try database.execute(
                SQL.pruneComplicationUsesOfPair,
                [.text(pair.rawValue), .integer(usedAt - SQL.complicationWindowMilliseconds)])

        case .appendPendingTransferred(let pair, let direction, let ids):
            let key: [SQLiteValue] = [.text(pair.rawValue), .text(direction.rawValue)]
            for id in ids { try database.execute(SQL.appendPendingTransferred, key + [.text(id)]) }

        case .clearPendingTransferred(let pair, let direction):
            try database.execute(SQL.clearPendingTransferred, [.text(pair.rawValue), .text(direction.rawValue)])

        case .recordFinished(let pair, let direction, let sendIDs):
            let key: [SQLiteValue] = [.text(pair.rawValue), .text(direction.rawValue)]
            for sendID in sendIDs {
                try database.execute(SQL.insertFinished, key + [.text(sendID)])
            }
            try database.execute(SQL.pruneFinished, key + [.integer(Int64(SQL.finishedLimit))])

        case .recordWrongPairingCode(let wrong):
            let at = wrong.at.millisecondsSinceEpoch
            try database.execute(
                SQL.insertWrongPairingCode,
                [
                    .text(wrong.address), .integer(at), wrong.addressLockedUntil.map { .integer($0.millisecondsSinceEpoch) } ?? .null,
                    .integer(wrong.countsUntil.millisecondsSinceEpoch),
                ])
            // Bounded while the relay runs: only the codes that still count stay.
            try database.execute(SQL.pruneWrongPairingCodes, [.integer(at)])
        }
    }
}
