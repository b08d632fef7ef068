import RedisClient
import RelayCore
import RelayProtocol

/// ``RedisRelayScripts/loadPair``'s reply as a ``PairSnapshot``.
enum RedisSnapshotDecoder {
    /// The snapshot of `pair`, nil if the pair is no longer stored.
    /// - Throws: ``RedisRelayStorageError/corruptValue(key:reason:)`` for a value that does not decode.
    static func snapshot(pair: PairID, _ reply: RedisValue) throws -> PairSnapshot? {
        let key = RedisRelayScripts.prefix + "pair:" + pair.rawValue
        guard let parts = reply.elements else { throw corrupt(key, "load reply is not an array") }
        if parts.isEmpty { return nil }
        guard parts.count == 4 else { throw corrupt(key, "load reply has \(parts.count) parts") }
        let hash = try fields(parts[0], key)
        func device(_ role: Role) throws -> DeviceRecord {
            guard let id = hash["\(role.rawValue).id"], let name = hash["\(role.rawValue).name"],
                let token = hash["\(role.rawValue).token"]
            else { throw corrupt(key, "the pair lacks its \(role.rawValue)") }
            return DeviceRecord(
                id: DeviceID(id), role: role, name: name, tokenHash: token,
                appInstalled: hash["\(role.rawValue).installed"] != "0")
        }
        guard let createdAt = hash["createdAt"].flatMap({ Int64($0) }) else { throw corrupt(key, "no createdAt") }
        let record = PairRecord(
            id: pair, createdAt: Timestamp(millisecondsSinceEpoch: createdAt), phone: try device(.phone),
            watch: try device(.watch))
        var directions: [Role: DirectionSnapshot] = [:]
        for (index, role) in [Role.phone, Role.watch].enumerated() {
            directions[role] = try direction(parts[1 + index], key: key + ":" + role.rawValue)
        }
        let uses = try (parts[3].elements ?? []).map { value in
            guard let time = value.text.flatMap({ Double($0) }).flatMap({ Int64(exactly: $0) }) else {
                throw corrupt(key + ":complications", "a use time is not a number")
            }
            return Timestamp(millisecondsSinceEpoch: time)
        }
        return PairSnapshot(record: record, directions: directions, complicationUses: uses)
    }

    private static func direction(_ reply: RedisValue, key: String) throws -> DirectionSnapshot {
        guard let parts = reply.elements, parts.count == 7 else { throw corrupt(key, "direction reply has the wrong shape") }
        let hash = try fields(parts[0], key)
        let queue = (parts[1].elements ?? []).compactMap(\.text)
        // Keyed by exact id: two ids that differ only by Unicode normalization are two items.
        let items = try rawFields(parts[2], key + ":items", by: ExactID.init)
        let seqs = try rawFields(parts[3], key + ":seqs", by: ExactID.init)
        var snapshot = DirectionSnapshot()
        for sendID in queue {
            guard let value = items[ExactID(sendID)] else { continue }
            let seq = seqs[ExactID(sendID)].map { String(decoding: $0, as: UTF8.self) }
            snapshot.items.append(try item(sendID: sendID, value, seq: seq, key: key + ":items"))
        }
        if let context = hash["context"] {
            do {
                snapshot.lastSentContext = try Deliver(storedBytes: Array(context.utf8))
            } catch {
                throw corrupt(key, "context: \(error)")
            }
        }
        if let reserved = hash["seqReserved"] {
            guard let n = Int64(reserved) else { throw corrupt(key, "seqReserved is not a number") }
            snapshot.seqReserved = n
        }
        // Stores written before the `:pending` list kept the ids as a JSON array in the hash;
        // they come first (the first append after an upgrade goes to the list).
        if let pending = hash["pending"] {
            let list = (try? JSONParser.parse(Array(pending.utf8)))?.arrayValue ?? [.null]
            let ids = list.compactMap(\.stringValue)
            guard ids.count == list.count else { throw corrupt(key, "pending is not a JSON array of strings") }
            snapshot.pendingTransferred = ids
        }
        snapshot.pendingTransferred += (parts[5].elements ?? []).compactMap(\.text)
        snapshot.finishedIDs = Array((parts[4].elements ?? []).compactMap(\.text).suffix(RedisRelayScripts.finishedLimit))
        let finished = Set(snapshot.finishedIDs)
        snapshot.cancelledIDs = (parts[6].elements ?? []).compactMap(\.text).filter { finished.contains($0) }
        return snapshot
    }

    /// One stored item (`{"acceptedAt":…,"mode":…,"payload":{…}}`) as a ``QueuedItem``.
    static func item(sendID: String, _ bytes: [UInt8], seq: String?, key: String) throws -> QueuedItem {
        let object: [String: JSONValue]
        do {
            guard let parsed = try JSONParser.parse(bytes).objectValue else { throw corrupt(key, "\(sendID) is not an object") }
            object = parsed
        } catch let error as RedisRelayStorageError {
            throw error
        } catch {
            throw corrupt(key, "\(sendID): \(error)")
        }
        guard let mode = object["mode"]?.stringValue, let acceptedAt = object["acceptedAt"]?.intValue,
            let members = object["payload"]?.objectValue
        else { throw corrupt(key, "\(sendID) lacks mode, acceptedAt or payload") }
        var parsedSeq: Int64?
        if let seq {
            guard let n = Int64(seq) else { throw corrupt(key, "\(sendID)'s seq is not a number") }
            parsedSeq = n
        }
        // The payload's own bytes (PROTOCOL.md §3.7); stores written before they were kept hold
        // the compact, key-sorted encoding, which reads back the same way.
        let payload: Payload
        do {
            payload = try Payload.stored(member: "payload", of: bytes) ?? Payload(members: members)
        } catch {
            throw corrupt(key, "\(sendID)'s payload: \(error)")
        }
        return QueuedItem(
            sendID: sendID, mode: DeliveryMode(rawValue: mode), payload: payload,
            acceptedAt: Timestamp(millisecondsSinceEpoch: acceptedAt), seq: parsedSeq)
    }

    /// A `wr:pairing:wrong` entry (``RedisMutationEncoder/entry(_:)``) as a ``WrongPairingCode``.
    /// - Throws: ``RedisRelayStorageError/corruptValue(key:reason:)`` if it does not have that form.
    static func wrongPairingCode(_ entry: String) throws -> WrongPairingCode {
        let parts = entry.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let countsUntil = Int64(parts[0]), let at = Int64(parts[1]),
            parts[2].isEmpty || Int64(parts[2]) != nil
        else { throw corrupt(RedisRelayScripts.prefix + "pairing:wrong", "'\(entry)' is not COUNTS_UNTIL:AT:LOCKED_UNTIL:ADDRESS") }
        return WrongPairingCode(
            address: String(parts[3]), at: Timestamp(millisecondsSinceEpoch: at),
            addressLockedUntil: Int64(parts[2]).map { Timestamp(millisecondsSinceEpoch: $0) },
            countsUntil: Timestamp(millisecondsSinceEpoch: countsUntil))
    }

    /// A flat HGETALL reply as text fields.
    private static func fields(_ reply: RedisValue, _ key: String) throws -> [String: String] {
        try rawFields(reply, key, by: { $0 }).mapValues { String(decoding: $0, as: UTF8.self) }
    }

    private static func rawFields<Key: Hashable>(_ reply: RedisValue, _ key: String, by makeKey: (String) -> Key) throws
        -> [Key: [UInt8]]
    {
        guard let elements = reply.elements, elements.count % 2 == 0 else { throw corrupt(key, "not a hash") }
        var out: [Key: [UInt8]] = [:]
        for i in stride(from: 0, to: elements.count, by: 2) {
            guard let name = elements[i].text, case .bulk(let value) = elements[i + 1] else {
                throw corrupt(key, "a hash field is not a string")
            }
            out[makeKey(name)] = value
        }
        return out
    }

    private static func corrupt(_ key: String, _ reason: String) -> RedisRelayStorageError {
        .corruptValue(key: key, reason: reason)
    }
}
