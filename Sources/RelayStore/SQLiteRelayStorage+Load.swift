import RelayCore
import RelayProtocol
import SQLite

extension SQLiteRelayStorage {
    /// Reads every table and assembles one snapshot per pair (inside the caller's transaction);
    /// without `unsentPayloads`, items not sent yet come without their payloads (each is parsed
    /// for its size, row by row, and dropped: memory does not grow with the queue). Replaces
    /// ``SQLiteRelayStorage/itemRows`` with the row ids it read.
    func readSnapshots(unsentPayloads: Bool = true) throws -> [PairSnapshot] {
        typealias SQL = RelayStoreSchema
        let pairs = try database.query(SQL.selectPairs) { row in
            (id: PairID(row.text(0)), createdAt: Timestamp(millisecondsSinceEpoch: row.int64(1)))
        }
        var builders: [PairID: SnapshotBuilder] = [:]
        for pair in pairs {
            builders[pair.id] = SnapshotBuilder(createdAt: pair.createdAt)
        }

        for device in try database.query(SQL.selectDevices, [], DeviceRow.init) {
            let role = try knownRole(device.role, table: "devices")
            builders[device.pairID]?.devices[role] = DeviceRecord(
                id: device.id, role: role, name: device.name, tokenHash: device.tokenHash,
                appInstalled: device.appInstalled)
        }

        for row in try database.query(SQL.selectDirections, [], DirectionRow.init) {
            let direction = try knownRole(row.direction, table: "directions")
            guard builders[row.pairID] != nil else { continue }
            let context = try row.lastSentContext.map { bytes in
                try decode(table: "directions") { () throws -> Deliver in try Deliver(storedBytes: bytes) }
            }
            builders[row.pairID]?.directions[direction]?.lastSentContext = context
            builders[row.pairID]?.directions[direction]?.seqReserved = row.seqReserved
        }
        for row in try database.query(SQL.selectPendingTransferred, [], { (PairID($0.text(0)), $0.text(1), $0.text(2)) }) {
            let direction = try knownRole(row.1, table: "pending_transferred")
            builders[row.0]?.directions[direction]?.pendingTransferred.append(row.2)
        }

        // Each row becomes its item as it is read, so a dropped payload is never held beside the rest.
        let items = try database.query(SQL.selectItems, []) { sqlRow in
            let row = ItemRow(sqlRow)
            let direction = try knownRole(row.direction, table: "items")
            let payload = try decode(table: "items") { () throws -> Payload in
                try Payload(bytes: row.payload)
            }
            let item = QueuedItem(
                sendID: row.sendID, mode: DeliveryMode(rawValue: row.mode), payload: payload,
                acceptedAt: row.acceptedAt, seq: row.seq)
            return (row.pairID, direction, unsentPayloads || item.seq != nil ? item : item.withoutPayload(), row.id)
        }
        for (pairID, direction, item, _) in items {
            builders[pairID]?.directions[direction]?.items.append(item)
        }
        // The map shares each send id's storage with the core's item (read lazily: no copy of the list).
        itemRows = Self.itemRowMap(items.lazy.map { (DirectionKey(pair: $0.0, direction: $0.1), $0.2.sendID, $0.3) })

        for row in try database.query(SQL.selectFinished, [], { ($0.text(0), $0.text(1), $0.text(2), $0.int64(3)) }) {
            let direction = try knownRole(row.1, table: "finished")
            builders[PairID(row.0)]?.directions[direction]?.finishedIDs.append(row.2)
            if row.3 != 0 { builders[PairID(row.0)]?.directions[direction]?.cancelledIDs.append(row.2) }
        }

        for row in try database.query(SQL.selectComplicationUses, [], { ($0.text(0), $0.int64(1)) }) {
            builders[PairID(row.0)]?.complicationUses.append(Timestamp(millisecondsSinceEpoch: row.1))
        }

        return try pairs.map { pair in
            // Every pair was given a builder above, and only member updates happened since.
            try builders[pair.id]!.snapshot(id: pair.id)
        }
    }

    /// Every stored item's row id by direction and send id (inside the caller's transaction),
    /// for ``SQLiteRelayStorage/itemRows``.
    func readItemRows() throws -> [DirectionKey: [ExactID: Int64]] {
        let read = try database.query(RelayStoreSchema.selectItemRows, []) { row in
            (DirectionKey(pair: PairID(row.text(0)), direction: try knownRole(row.text(1), table: "items")), row.text(2), row.int64(3))
        }
        return Self.itemRowMap(read)
    }

    /// Row ids by direction and send id, each direction's map sized once (growing one to a
    /// million ids left the smaller tables it outgrew to the allocator).
    private static func itemRowMap(_ rows: some Collection<(DirectionKey, String, Int64)>) -> [DirectionKey: [ExactID: Int64]] {
        var counts: [DirectionKey: Int] = [:]
        for (key, _, _) in rows { counts[key, default: 0] += 1 }
        var map = counts.mapValues { [ExactID: Int64](minimumCapacity: $0) }
        for (key, sendID, id) in rows { map[key]?[ExactID(sendID)] = id }
        return map
    }

    /// The payloads of `sendIDs` in `direction` of `pair`, as stored (inside the caller's lock,
    /// with ``SQLiteRelayStorage/itemRows`` read).
    func readPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws -> [ExactID: Payload] {
        var payloads: [ExactID: Payload] = [:]
        let rows = itemRows?[DirectionKey(pair: pair, direction: direction)] ?? [:]
        for sendID in sendIDs {
            guard let row = rows[ExactID(sendID)],
                let bytes = try database.query(RelayStoreSchema.selectPayload, [.integer(row)], { $0.bytes(0) }).first
            else {
                continue
            }
            payloads[ExactID(sendID)] = try decode(table: "items") { () throws -> Payload in try Payload(bytes: bytes) }
        }
        return payloads
    }

    private func knownRole(_ raw: String, table: String) throws -> Role {
        guard let role = Role.all.first(where: { $0.rawValue == raw }) else {
            throw RelayStoreError.corruptRow(table: table, reason: "unknown direction or role '\(raw)'")
        }
        return role
    }

    /// Runs `body`, reporting any failure as a corrupt row of `table`.
    private func decode<T>(table: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as RelayStoreError {
            throw error
        } catch {
            throw RelayStoreError.corruptRow(table: table, reason: "\(error)")
        }
    }
}

/// One pair's rows, gathered table by table.
private struct SnapshotBuilder {
    var createdAt: Timestamp
    var devices: [Role: DeviceRecord] = [:]
    var directions: [Role: DirectionSnapshot] = [.phone: DirectionSnapshot(), .watch: DirectionSnapshot()]
    var complicationUses: [Timestamp] = []

    func snapshot(id: PairID) throws -> PairSnapshot {
        guard let phone = devices[.phone], let watch = devices[.watch] else {
            throw RelayStoreError.corruptRow(table: "devices", reason: "pair '\(id)' lacks its phone or its watch")
        }
        var directions = directions
        for role in Role.all {
            // Pruned on every insert; trimmed here too in case the limit shrank.
            let finished = directions[role]?.finishedIDs ?? []
            directions[role]?.finishedIDs = Array(finished.suffix(RelayStoreSchema.finishedLimit))
            if finished.count > RelayStoreSchema.finishedLimit, let cancelled = directions[role]?.cancelledIDs {
                let kept = Set(finished.suffix(RelayStoreSchema.finishedLimit))
                directions[role]?.cancelledIDs = cancelled.filter { kept.contains($0) }
            }
        }
        return PairSnapshot(
            record: PairRecord(id: id, createdAt: createdAt, phone: phone, watch: watch), directions: directions,
            complicationUses: complicationUses)
    }
}

/// A `devices` row.
private struct DeviceRow {
    var pairID: PairID, id: DeviceID, role: String, name: String, tokenHash: String, appInstalled: Bool
    init(_ row: SQLiteRow) {
        (pairID, id, role) = (PairID(row.text(0)), DeviceID(row.text(1)), row.text(2))
        (name, tokenHash, appInstalled) = (row.text(3), row.text(4), row.int64(5) != 0)
    }
}

/// A `directions` row, JSON columns still encoded.
private struct DirectionRow {
    var pairID: PairID, direction: String, lastSentContext: [UInt8]?, seqReserved: Int64
    init(_ row: SQLiteRow) {
        (pairID, direction, lastSentContext) = (PairID(row.text(0)), row.text(1), row.optionalBytes(2))
        seqReserved = row.int64(3)
    }
}

/// An `items` row (its seq from `item_seqs` where it has one there), the payload still encoded.
private struct ItemRow {
    var pairID: PairID, direction: String, sendID: String, mode: String, payload: [UInt8]
    var acceptedAt: Timestamp, seq: Int64?, id: Int64
    init(_ row: SQLiteRow) {
        (pairID, direction, sendID, mode) = (PairID(row.text(0)), row.text(1), row.text(2), row.text(3))
        payload = row.bytes(4)
        acceptedAt = Timestamp(millisecondsSinceEpoch: row.int64(5))
        seq = row.optionalInt64(6)
        id = row.int64(7)
    }
}
