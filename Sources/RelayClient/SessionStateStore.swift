import RelayProtocol
import RelayStore

/// What a session persists in its state directory: token, pair, last seq, contexts.
///
/// One SQLite file (`session.db`, WAL) per device, so a killed app comes back paired and
/// resumes where it stopped.
final class SessionStateStore {
    private let db: SQLiteDatabase

    /// Opens (or creates) `directory/session.db`.
    init(directory: String) throws {
        db = try SQLiteDatabase.open(
            path: directory + "/session.db", configuration: .init(synchronous: .normal),
            migrations: [
                Migration(
                    version: 1, name: "session state",
                    sql: "CREATE TABLE state(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;")
            ], option: "--state")
    }

    func get(_ key: String) throws -> String? {
        try db.query("SELECT value FROM state WHERE key = ?", [.text(key)]) { $0.text(0) }.first
    }

    func set(_ key: String, _ value: String?) throws {
        if let value {
            try db.execute(
                "INSERT INTO state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        } else {
            try db.execute("DELETE FROM state WHERE key = ?", [.text(key)])
        }
    }

    /// Sets several keys in one transaction.
    func set(_ values: [(String, String?)]) throws {
        try db.transaction {
            for (k, v) in values { try set(k, v) }
        }
    }

    func payload(_ key: String) throws -> Payload? {
        guard let text = try get(key) else { return nil }
        return try? Payload(json: JSONParser.parse(Array(text.utf8)))
    }

    /// Outstanding transfers (id, payload, complication flag), in the order sent.
    func transfers() throws -> [UserInfoTransfer] {
        guard let text = try get("transfers"), case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) else {
            return []
        }
        return items.compactMap { item in
            guard let id = item["id"]?.stringValue, case .object(let p)? = item["payload"] else { return nil }
            return UserInfoTransfer(
                id: id, payload: Payload(members: p), isCurrentComplicationInfo: item["complication"]?.boolValue ?? false,
                fellBackToUserInfo: item["fallback"]?.boolValue ?? false)
        }
    }

    func setTransfers(_ transfers: [UserInfoTransfer]) throws {
        let json = JSONValue.array(
            transfers.map {
                [
                    "id": .string($0.id), "payload": $0.payload.json, "complication": .bool($0.isCurrentComplicationInfo),
                    "fallback": .bool($0.fellBackToUserInfo),
                ]
            })
        try set("transfers", String(decoding: JSONWriter.encode(json), as: UTF8.self))
    }

    func setPayload(_ key: String, _ payload: Payload?) throws {
        try set(key, payload.map { String(decoding: JSONWriter.encode($0.json), as: UTF8.self) })
    }
}
