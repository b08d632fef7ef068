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
                        .text(device.tokenHash), .integer(device.appInstalled ? 1 : 0),
                    ])
            }

        case .deletePair(let pair):
            // Devices, items, directions, finished ids and complication uses go by cascade; the
            // items' seqs are not a foreign key's, and go first.
            try database.execute(SQL.deletePairItemSeqs, [.text(pair.rawValue)])
            try database.execute(SQL.deletePair, [.text(pair.rawValue)])
            for role in Role.all {
                let key = DirectionKey(pair: pair, direction: role)
                unprunedFinished[key] = nil
                itemRows?[key] = nil
            }

        case .insertItem(let pair, let direction, let item):
            let key = DirectionKey(pair: pair, direction: direction)
            // The core never queues a send id twice in a direction; if it did, the newer item
            // replaces the older one (a row the map could not find would stay for good).
            if let older = itemRows?[key]?.removeValue(forKey: ExactID(item.sendID)) { try deleteItemRows([older]) }
            // A pair that is gone fails the foreign key (enforced: `SQLiteDatabase` turns keys
            // on): the statement is undone and the item dropped, as for the other inserts.
            do {
                try database.execute(
                    SQL.insertItem,
                    [
                        .text(pair.rawValue), .text(direction.rawValue), .text(item.sendID), .text(item.mode.rawValue),
                        .utf8(item.payload.bytes), .integer(item.acceptedAt.millisecondsSinceEpoch),
                        item.seq.map { .integer($0) } ?? .null,
                    ])
                itemRows?[key, default: [:]][ExactID(item.sendID)] = database.lastInsertRowID
            } catch where error.isForeignKeyViolation {}

        case .setItemSeq(let pair, let direction, let sendID, let seq):
            guard let row = itemRows?[DirectionKey(pair: pair, direction: direction)]?[ExactID(sendID)] else { break }
            try database.execute(SQL.setItemSeq, [.integer(row), .integer(seq)])

        case .deleteItems(let pair, let direction, let sendIDs):
            let key = DirectionKey(pair: pair, direction: direction)
            var rows: [Int64] = []
            rows.reserveCapacity(sendIDs.count)
            for sendID in sendIDs {
                if let row = itemRows?[key]?.removeValue(forKey: ExactID(sendID)) { rows.append(row) }
            }
            try deleteItemRows(rows)
            compactItemRows(key)

        case .setLastSentContext(let pair, let direction, let deliver):
            try database.execute(
                SQL.setLastSentContext,
                [
                    .text(pair.rawValue), .text(direction.rawValue),
                    .utf8(deliver.storedBytes[...]),
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
            try execute(
                SQL.appendPendingTransferred, orForAll: SQL.appendPendingTransferredOfArray, key(pair, direction), ids: ids)

        case .clearPendingTransferred(let pair, let direction):
            try database.execute(SQL.clearPendingTransferred, [.text(pair.rawValue), .text(direction.rawValue)])

        case .recordFinished(let pair, let direction, let sendIDs):
            let inserted = try execute(SQL.insertFinished, orForAll: SQL.insertFinishedOfArray, key(pair, direction), ids: sendIDs)
            try finishedInserted(inserted, pair, direction)

        case .recordCancelled(let pair, let direction, let sendID):
            try database.execute(SQL.insertCancelled, key(pair, direction) + [.text(sendID)])
            try finishedInserted(database.changes, pair, direction)

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

    /// Deletes the finished ids beyond the newest ``RelayStoreSchema/finishedLimit`` of every
    /// direction (inside the caller's transaction): what the running store left for later.
    func pruneOverfullFinished() throws {
        typealias SQL = RelayStoreSchema
        let limit = SQLiteValue.integer(Int64(SQL.finishedLimit))
        let overfull = try database.query(SQL.selectOverfullFinished, [limit]) { row -> [SQLiteValue] in
            [.text(row.text(0)), .text(row.text(1))]
        }
        for key in overfull {
            try database.execute(SQL.pruneFinished, key + [limit])
        }
    }

    /// Drops `key`'s map of row ids once it is empty, and rebuilds it at its size once it holds
    /// less than an eighth of its capacity: a dictionary keeps its capacity, and a drained
    /// backlog of a million items would hold on to some 50 MB. Amortised: a rebuild of n ids
    /// follows more than 4n deletions.
    private func compactItemRows(_ key: DirectionKey) {
        guard let rows = itemRows?[key], rows.isEmpty || (rows.capacity >= 4096 && rows.count * 8 < rows.capacity) else {
            return
        }
        var smaller: [ExactID: Int64]? = nil
        if !rows.isEmpty {
            smaller = [ExactID: Int64](minimumCapacity: rows.count)
            for (sendID, row) in rows { smaller?[sendID] = row }
        }
        itemRows?[key] = smaller
    }

    /// Deletes the items with row ids `rows` and their seqs, one statement each over a JSON
    /// array of the ids (integers: nothing for `json_each` to cut short).
    private func deleteItemRows(_ rows: [Int64]) throws(SQLiteError) {
        typealias SQL = RelayStoreSchema
        guard !rows.isEmpty else { return }
        let array = Self.jsonArray(rows) { row, into in into.append(contentsOf: String(row).utf8) }
        try database.execute(SQL.deleteItemsOfArray, [array])
        try database.execute(SQL.deleteItemSeqsOfArray, [array])
    }

    /// The bindings ?1 and ?2 of the per-direction statements.
    private func key(_ pair: PairID, _ direction: Role) -> [SQLiteValue] {
        [.text(pair.rawValue), .text(direction.rawValue)]
    }

    /// Counts `inserted` finished rows of a direction, and prunes its oldest once it holds
    /// ``RelayStoreSchema/finishedPruneEvery`` more than it keeps. Rows of a pair that is gone
    /// are not inserted, and leave no count behind.
    private func finishedInserted(_ inserted: Int, _ pair: PairID, _ direction: Role) throws(SQLiteError) {
        guard inserted > 0 else { return }
        let finished = DirectionKey(pair: pair, direction: direction)
        let unpruned = unprunedFinished[finished, default: 0] + inserted
        unprunedFinished[finished] = unpruned
        if unpruned >= RelayStoreSchema.finishedPruneEvery {
            try database.execute(RelayStoreSchema.pruneFinished, key(pair, direction) + [.integer(Int64(RelayStoreSchema.finishedLimit))])
            prunedFinished.append((finished, unpruned))
        }
    }

    /// Runs `perID` (bound `key` + one id) for each of `ids`, or `forAll` once (bound `key` + all
    /// of them as ``idArray(_:)``) where it can; the number of rows changed.
    @discardableResult
    private func execute(_ perID: String, orForAll forAll: String, _ key: [SQLiteValue], ids: [String])
        throws(SQLiteError) -> Int
    {
        if let array = Self.idArray(ids) {
            try database.execute(forAll, key + [array])
            return database.changes
        }
        var changed = 0
        for id in ids {
            try database.execute(perID, key + [.text(id)])
            changed += database.changes
        }
        return changed
    }

    /// `ids` as one JSON array, for the statements that take a list through `json_each`: one
    /// statement for an ack of 16 where there were 16 (each with its bind, step and reset).
    /// `nil` where a statement per id is used: for one id, and for an id with a NUL character,
    /// which `json_each` would cut short.
    static func idArray(_ ids: [String]) -> SQLiteValue? {
        guard ids.count > 1, !ids.contains(where: { $0.utf8.contains(0) }) else { return nil }
        return jsonArray(ids) { id, into in JSONWriter.writeString(id, into: &into) }
    }

    /// `elements` as one JSON array, each written by `write`, bound as UTF-8 text.
    private static func jsonArray<T>(_ elements: [T], _ write: (T, inout [UInt8]) -> Void) -> SQLiteValue {
        var array: [UInt8] = [UInt8(ascii: "[")]
        array.reserveCapacity(elements.count * 24)
        for element in elements {
            if array.count > 1 { array.append(UInt8(ascii: ",")) }
            write(element, &array)
        }
        array.append(UInt8(ascii: "]"))
        return .utf8(array[...])
    }
}
