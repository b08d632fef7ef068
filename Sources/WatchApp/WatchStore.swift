import GitExplorerPayloads
import RelayProtocol
import SQLite

/// The watch's own SQLite store (`watch.db`): the last favorites snapshot, pending deletes
/// and settings. App Groups do not cross devices: the watch keeps its copy.
final class WatchStore {
    private let db: SQLiteDatabase
    /// The file name inside the state directory.
    static let fileName = "watch.db"

    /// Opens (or creates) `directory/watch.db`.
    ///
    /// WAL with `synchronous=normal`, as the phone's store and as Core Data on a real device:
    /// a commit survives `kill -9` of the watch (the WAL write is in the OS before the call
    /// returns); only an OS crash could lose the last ones. It keeps an fsync off the path
    /// from a favorites change to the widget's reload.
    init(directory: String) throws {
        db = try SQLiteDatabase.open(
            path: directory + "/" + Self.fileName, configuration: .init(synchronous: .normal), migrations: Self.migrations,
            option: "--state")
    }

    /// The schema history (`PRAGMA user_version`).
    static let migrations = [
        Migration(
            version: 1, name: "watch state",
            sql: """
                CREATE TABLE snapshot(id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL,
                    json TEXT NOT NULL, sent_at INTEGER NOT NULL) STRICT;
                CREATE TABLE pending_deletes(login TEXT PRIMARY KEY NOT NULL, accepted INTEGER NOT NULL) STRICT;
                CREATE TABLE settings(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
                """)
    ]

    /// The stored snapshot and when it was sent, if any.
    func snapshot() throws -> (FavoritesSnapshot, Timestamp)? {
        try db.query("SELECT json, sent_at FROM snapshot WHERE id = 1") { row -> (FavoritesSnapshot, Timestamp)? in
            guard let value = try? JSONParser.parse(Array(row.text(0).utf8)),
                let snapshot = try? FavoritesSnapshot(json: value)
            else { return nil }
            return (snapshot, Timestamp(millisecondsSinceEpoch: row.int64(1)))
        }.first ?? nil
    }

    /// The pair the stored snapshot came from (its revisions count within that pair); nil
    /// before any, or for a snapshot stored before the watch kept it.
    func snapshotPair() throws -> String? {
        try setting(Self.snapshotPairKey)
    }

    private static let snapshotPairKey = "snapshotPair"

    /// Stores a snapshot that came from `pair` and forgets pending deletes it no longer lists,
    /// in one transaction.
    func save(_ snapshot: FavoritesSnapshot, sentAt: Timestamp, pair: String?) throws {
        let logins = Set(snapshot.users.map { $0.login.lowercased() })
        try db.transaction {
            try db.execute(
                "INSERT INTO snapshot(id, revision, json, sent_at) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET revision = excluded.revision, json = excluded.json, sent_at = excluded.sent_at",
                [.integer(snapshot.revision), .text(String(decoding: snapshot.jsonBytes, as: UTF8.self)),
                 .integer(sentAt.millisecondsSinceEpoch)])
            try setSetting(Self.snapshotPairKey, pair)
            for (login, _) in try pendingDeletes() where !logins.contains(login.lowercased()) {
                try db.execute("DELETE FROM pending_deletes WHERE login = ?", [.text(login)])
            }
        }
    }

    /// Pending deletes and whether the relay accepted each.
    func pendingDeletes() throws -> [(String, Bool)] {
        try db.query("SELECT login, accepted FROM pending_deletes ORDER BY rowid") { ($0.text(0), $0.int64(1) != 0) }
    }

    func setPendingDelete(_ login: String, accepted: Bool) throws {
        try db.execute(
            "INSERT INTO pending_deletes(login, accepted) VALUES (?, ?) ON CONFLICT(login) DO UPDATE SET accepted = excluded.accepted",
            [.text(login), .integer(accepted ? 1 : 0)])
    }

    /// Forgets a pending delete (one the phone app could not take: it was not installed).
    func removePendingDelete(_ login: String) throws {
        try db.execute("DELETE FROM pending_deletes WHERE login = ?", [.text(login)])
    }

    /// Empties the store, as watchOS deletes an uninstalled app's container: the snapshot,
    /// the pending deletes and the settings go, in one transaction.
    func erase() throws {
        try db.transaction {
            for table in ["snapshot", "pending_deletes", "settings"] { try db.execute("DELETE FROM \(table)") }
        }
    }

    func setting(_ key: String) throws -> String? {
        try db.query("SELECT value FROM settings WHERE key = ?", [.text(key)]) { $0.text(0) }.first
    }

    func setSetting(_ key: String, _ value: String?) throws {
        if let value {
            try db.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        } else {
            try db.execute("DELETE FROM settings WHERE key = ?", [.text(key)])
        }
    }
}
