import Foundation
import GitExplorerPayloads
import RelayProtocol
import SQLite

/// The phone's own SQLite file (`phone.db` in the state directory, WAL): favorites in order,
/// the last good data per user, cached repo lists, the snapshot ledger, and requests from
/// other processes.
///
/// Not `Sendable`, like the ``SQLiteDatabase`` it wraps: one owner at a time (the
/// ``PhoneCompanion`` actor, or a CLI subcommand). Several processes may open the same file:
/// WAL lets one write while others read, and the busy timeout serializes writers. A change made
/// by another connection shows up in ``dataVersion()``, which is how a running companion notices
/// `watchrelay phone add … --state DIR`.
public final class PhoneStore {
    /// The file name inside the state directory.
    public static let fileName = "phone.db"

    let db: SQLiteDatabase
    /// The database file's path.
    public var path: String { db.path }

    /// Opens (creating the directory and file if needed) `directory/phone.db` and migrates it.
    /// - Parameters:
    ///   - directory: the phone's state directory (shared with the relay session's `session.db`).
    ///   - synchronous: durability (default `normal`: WAL survives `kill -9`; `full` also power loss).
    /// - Throws: ``PhoneError/store(_:)``; a file that cannot be used says which, why and what
    ///   to do (``DatabaseFileError``).
    public init(directory: String, synchronous: SQLiteDatabase.Synchronous = .normal) throws(PhoneError) {
        do {
            try DirectoryError.create(directory, option: "--state")
            db = try SQLiteDatabase.open(
                path: directory + "/" + Self.fileName, configuration: .init(synchronous: synchronous),
                migrations: Self.migrations, option: "--state")
        } catch {
            throw PhoneError.storeFailure(error)
        }
    }

    /// The schema history (`PRAGMA user_version`).
    static let migrations = [
        Migration(
            version: 1, name: "favorites",
            sql: """
                CREATE TABLE favorites(
                    login TEXT PRIMARY KEY COLLATE NOCASE NOT NULL,
                    position INTEGER NOT NULL,
                    added_at INTEGER NOT NULL) STRICT;
                CREATE TABLE users(
                    login TEXT PRIMARY KEY COLLATE NOCASE NOT NULL,
                    json TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL) STRICT;
                CREATE TABLE repos(
                    login TEXT PRIMARY KEY COLLATE NOCASE NOT NULL,
                    json TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL) STRICT;
                CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
                CREATE TABLE requests(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    verb TEXT NOT NULL,
                    created_at INTEGER NOT NULL) STRICT;
                """)
    ]

    /// Runs `body` in one immediate transaction: all of it is stored, or none. Inside another
    /// `write`, it simply joins the outer transaction.
    public func write<T>(_ body: () throws -> T) throws(PhoneError) -> T {
        do {
            if db.isInTransaction { return try body() }
            return try db.transaction(.immediate, body)
        } catch {
            throw PhoneError.storeFailure(error)
        }
    }

    /// Runs a read (or a single statement) and maps its failure to ``PhoneError/store(_:)``.
    func run<T>(_ body: () throws -> T) throws(PhoneError) -> T {
        do {
            return try body()
        } catch {
            throw PhoneError.storeFailure(error)
        }
    }

    // MARK: - Favorites

    /// The favorite logins, in order.
    public func favoriteLogins() throws(PhoneError) -> [String] {
        try run { try db.query("SELECT login FROM favorites ORDER BY position, rowid") { $0.text(0) } }
    }

    /// The favorites in order, each with its last good data.
    public func favorites() throws(PhoneError) -> [Favorite] {
        try run {
            try db.query(
                """
                SELECT f.login, u.json, u.fetched_at FROM favorites f
                LEFT JOIN users u ON u.login = f.login ORDER BY f.position, f.rowid
                """
            ) { row in
                let user = row.optionalText(1).flatMap(Self.decodeUser)
                return Favorite(
                    login: user?.login ?? row.text(0), position: 0, user: user,
                    fetchedAt: row.optionalInt64(2).map(Self.date))
            }.enumerated().map { index, favorite in
                var f = favorite
                f.position = index
                return f
            }
        }
    }

    /// Adds `login` at the end; `false` if it already is a favorite (compared case-insensitively).
    @discardableResult
    public func addFavorite(_ login: String, now: Date = Date()) throws(PhoneError) -> Bool {
        try run {
            try db.execute(
                """
                INSERT INTO favorites(login, position, added_at)
                VALUES (?, (SELECT COALESCE(MAX(position), -1) + 1 FROM favorites), ?)
                ON CONFLICT(login) DO NOTHING
                """, [.text(login), .integer(Self.milliseconds(now))])
            return db.changes > 0
        }
    }

    /// Removes `login`; `false` if it was not a favorite. Positions stay dense.
    @discardableResult
    public func removeFavorite(_ login: String) throws(PhoneError) -> Bool {
        // The order is read inside the write: read before it, it could be older than a commit
        // another process made while this one waited for the lock, and renumbering would undo it.
        try write { () throws(PhoneError) -> Bool in
            var order = try favoriteLogins()
            guard let index = order.firstIndex(where: { $0.lowercased() == login.lowercased() }) else { return false }
            order.remove(at: index)
            try run { try db.execute("DELETE FROM favorites WHERE login = ?", [.text(login)]) }
            try renumber(order)
            return true
        }
    }

    /// Moves `login` to `index` (clamped to the list), shifting the others; `nil` if it is not
    /// a favorite. The result says where it is now and whether it moved (not if it already was
    /// there).
    @discardableResult
    public func moveFavorite(_ login: String, to index: Int) throws(PhoneError) -> FavoriteMove? {
        // Read inside the write, as in removeFavorite.
        try write { () throws(PhoneError) -> FavoriteMove? in
            var order = try favoriteLogins()
            guard let from = order.firstIndex(where: { $0.lowercased() == login.lowercased() }) else { return nil }
            let to = min(max(0, index), order.count - 1)
            guard from != to else { return FavoriteMove(moved: false, index: to) }
            let moved = order.remove(at: from)
            order.insert(moved, at: to)
            try renumber(order)
            return FavoriteMove(moved: true, index: to)
        }
    }

    /// Spells a favorite's login as GitHub does (same login, other case).
    func respell(_ login: String) throws(PhoneError) {
        try run {
            try db.execute(
                "UPDATE favorites SET login = ? WHERE login = ? AND login <> ? COLLATE BINARY",
                [.text(login), .text(login), .text(login)])
        }
    }

    private func renumber(_ order: [String]) throws(PhoneError) {
        try run {
            for (position, login) in order.enumerated() {
                try db.execute("UPDATE favorites SET position = ? WHERE login = ?", [.integer(Int64(position)), .text(login)])
            }
        }
    }

    // MARK: - Change detection and requests

    /// `PRAGMA data_version`: changes whenever *another* connection commits to the file.
    public func dataVersion() throws(PhoneError) -> Int64 {
        try run { try db.query("PRAGMA data_version") { $0.int64(0) }.first ?? 0 }
    }

    /// Leaves a request (e.g. `refresh`) for the companion running on this state.
    public func enqueueRequest(_ verb: String, now: Date = Date()) throws(PhoneError) {
        try run {
            try db.execute(
                "INSERT INTO requests(verb, created_at) VALUES (?, ?)", [.text(verb), .integer(Self.milliseconds(now))])
        }
    }

    /// Takes (and deletes) every waiting request, oldest first.
    public func takeRequests() throws(PhoneError) -> [String] {
        try write {
            let verbs = try db.query("SELECT verb FROM requests ORDER BY id") { $0.text(0) }
            try db.execute("DELETE FROM requests")
            return verbs
        }
    }

    // MARK: - Coding

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    static func encode(_ value: JSONValue) -> String { String(decoding: JSONWriter.encode(value), as: UTF8.self) }

    static func decodeUser(_ text: String) -> User? {
        guard let value = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        return try? User(json: value)
    }
}

@available(*, unavailable, message: "a store is confined to one owner, such as the PhoneCompanion actor")
extension PhoneStore: Sendable {}
