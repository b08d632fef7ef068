import Foundation
import RelayProtocol
import SQLite

/// Where a ``RelaySession`` keeps its durable state (token, pair, last seq, contexts,
/// outstanding transfers). ``SQLiteSessionStore`` is the real one; a test may wrap it to
/// fail on demand.
public protocol SessionPersistence: AnyObject {
    /// What the session restores at start.
    func load() throws -> SessionSnapshot
    /// Makes all `records` durable together, or throws and changes nothing.
    func save(_ records: [SessionRecord]) throws
}

/// The session's state in one SQLite file (`session.db`, WAL) per device, so a killed app
/// comes back paired and resumes where it stopped.
public final class SQLiteSessionStore: SessionPersistence {
    private let db: SQLiteDatabase

    /// Opens (or creates) `directory/session.db`.
    ///
    /// With `role`, the store is that device's: a new one records the role, and one that
    /// recorded the other role throws ``SessionRoleMismatch`` (a phone saying `hello` with a
    /// watch's token is refused and drops it: the watch's pairing would be lost). A store made
    /// before roles were recorded takes the role of its first opening with one.
    public init(directory: String, role: Role? = nil) throws {
        db = try SQLiteDatabase.open(
            path: directory + "/session.db", configuration: .init(synchronous: .normal),
            migrations: [
                Migration(
                    version: 1, name: "session state",
                    sql: "CREATE TABLE state(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;")
            ], option: "--state")
        guard let role else { return }
        if let stored = try get("role") {
            guard stored == role.rawValue else {
                throw SessionRoleMismatch(directory: directory, stored: Role(rawValue: stored), expected: role)
            }
        } else {
            try set("role", role.rawValue)
        }
    }

    /// The role of the device whose session `directory/session.db` keeps; nil when there is no
    /// such file or it does not say (made before roles were recorded). Creates no file.
    public static func role(inDirectory directory: String) -> Role? {
        guard FileManager.default.fileExists(atPath: directory + "/session.db"),
            let store = try? SQLiteSessionStore(directory: directory), let stored = try? store.get("role")
        else { return nil }
        return Role(rawValue: stored)
    }

    public func load() throws -> SessionSnapshot {
        SessionSnapshot(
            token: try get("token"), pairID: try get("pairId"), peerName: try get("peerName"),
            lastSeq: Int64(try get("lastSeq") ?? "0") ?? 0, receivedContext: try payload("receivedContext"),
            sentContext: try payload("sentContext"), transfers: try transfers())
    }

    public func save(_ records: [SessionRecord]) throws {
        try db.transaction {
            for record in records {
                switch record {
                case .token(let v): try set("token", v)
                case .pairID(let v): try set("pairId", v)
                case .peerName(let v): try set("peerName", v)
                case .lastSeq(let n): try set("lastSeq", String(n))
                case .receivedContext(let p): try set("receivedContext", p.map(Self.text))
                case .sentContext(let p): try set("sentContext", p.map(Self.text))
                case .transfers(let t): try set("transfers", t.isEmpty ? nil : Self.text(t))
                }
            }
        }
    }

    private func get(_ key: String) throws -> String? {
        try db.query("SELECT value FROM state WHERE key = ?", [.text(key)]) { $0.text(0) }.first
    }

    private func set(_ key: String, _ value: String?) throws {
        if let value {
            try db.execute(
                "INSERT INTO state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        } else {
            try db.execute("DELETE FROM state WHERE key = ?", [.text(key)])
        }
    }

    /// A stored payload; a row that no longer parses throws (the session does not start on a
    /// store it cannot read).
    private func payload(_ key: String) throws -> Payload? {
        guard let text = try get(key) else { return nil }
        return try Payload(json: JSONParser.parse(Array(text.utf8)))
    }

    /// Outstanding transfers (id, payload, complication flag), in the order sent. The row puts
    /// each payload two levels down (array, object), so it nests two levels deeper than the
    /// deepest payload a `send` carries, and is read with that much more room.
    private func transfers() throws -> [UserInfoTransfer] {
        guard let text = try get("transfers") else { return [] }
        guard case .array(let items) = try JSONParser.parse(Array(text.utf8), maxDepth: Payload.maxNestingDepth + 2) else {
            throw SQLiteError(code: 0, message: "the transfers row is not a JSON array", operation: "read transfers")
        }
        return items.compactMap { item in
            guard let id = item["id"]?.stringValue, case .object(let p)? = item["payload"] else { return nil }
            return UserInfoTransfer(
                id: id, payload: Payload(members: p), isCurrentComplicationInfo: item["complication"]?.boolValue ?? false,
                fellBackToUserInfo: item["fallback"]?.boolValue ?? false)
        }
    }

    private static func text(_ payload: Payload) -> String {
        String(decoding: JSONWriter.encode(payload.json), as: UTF8.self)
    }

    private static func text(_ transfers: [UserInfoTransfer]) -> String {
        let json = JSONValue.array(
            transfers.map {
                [
                    "id": .string($0.id), "payload": $0.payload.json, "complication": .bool($0.isCurrentComplicationInfo),
                    "fallback": .bool($0.fellBackToUserInfo),
                ]
            })
        return String(decoding: JSONWriter.encode(json), as: UTF8.self)
    }
}

/// A device state directory holding the other role's session (``SQLiteSessionStore/init(directory:role:)``).
public struct SessionRoleMismatch: Error, Sendable, Equatable, CustomStringConvertible {
    /// The state directory.
    public var directory: String
    /// The role its session was kept for.
    public var stored: Role
    /// The role that opened it.
    public var expected: Role

    public var description: String {
        "\(directory) holds a \(stored)'s session (session.db), not a \(expected)'s: pass the \(expected)'s state directory"
    }
}
