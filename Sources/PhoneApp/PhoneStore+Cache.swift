import Foundation
import GitExplorerPayloads
import RelayProtocol

/// The caches (last good user, repo lists) and the snapshot ledger in `phone.db`.
extension PhoneStore {
    // MARK: - Users

    /// The last good user data of every login fetched, by lowercased login.
    public func cachedUsers() throws(PhoneError) -> [String: User] {
        let pairs = try run {
            try db.query("SELECT login, json FROM users") { row in (row.text(0).lowercased(), row.text(1)) }
        }
        var users: [String: User] = [:]
        for (login, text) in pairs {
            if let user = Self.decodeUser(text) { users[login] = user }
        }
        return users
    }

    /// The last good user data of `login`, if any.
    public func cachedUser(_ login: String) throws(PhoneError) -> User? {
        try run { try db.query("SELECT json FROM users WHERE login = ?", [.text(login)]) { $0.text(0) } }
            .first.flatMap(Self.decodeUser)
    }

    /// The last good user data of `login` and when it was fetched, if any.
    public func cachedUserWithDate(_ login: String) throws(PhoneError) -> (user: User, fetchedAt: Date)? {
        let rows = try run {
            try db.query("SELECT json, fetched_at FROM users WHERE login = ?", [.text(login)]) { ($0.text(0), $0.int64(1)) }
        }
        guard let (text, fetched) = rows.first, let user = Self.decodeUser(text) else { return nil }
        return (user, Self.date(fetched))
    }

    /// Stores `user` as the last good data of its login (and spells the favorite as GitHub does).
    public func saveUser(_ user: User, fetchedAt: Date) throws(PhoneError) {
        try run {
            try db.execute(
                """
                INSERT INTO users(login, json, fetched_at) VALUES (?, ?, ?)
                ON CONFLICT(login) DO UPDATE SET login = excluded.login, json = excluded.json,
                    fetched_at = excluded.fetched_at
                """, [.text(user.login), .text(Self.encode(user.json)), .integer(Self.milliseconds(fetchedAt))])
        }
        try respell(user.login)
    }

    // MARK: - Repos

    /// The cached repos of `login` and when they were fetched, if any.
    public func cachedRepos(_ login: String) throws(PhoneError) -> (repos: [Repo], fetchedAt: Date)? {
        let rows = try run {
            try db.query("SELECT json, fetched_at FROM repos WHERE login = ?", [.text(login)]) { ($0.text(0), $0.int64(1)) }
        }
        guard let (text, fetched) = rows.first, case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) else {
            return nil
        }
        let repos = items.compactMap { try? Repo(json: $0) }
        return (repos, Self.date(fetched))
    }

    /// Stores the repos of `login`.
    public func saveRepos(_ repos: [Repo], for login: String, fetchedAt: Date) throws(PhoneError) {
        try run {
            try db.execute(
                """
                INSERT INTO repos(login, json, fetched_at) VALUES (?, ?, ?)
                ON CONFLICT(login) DO UPDATE SET json = excluded.json, fetched_at = excluded.fetched_at
                """,
                [.text(login), .text(Self.encode(.array(repos.map(\.json)))), .integer(Self.milliseconds(fetchedAt))])
        }
    }

    /// Forgets the repos of `login` (GitHub says the user is gone).
    public func forgetRepos(_ login: String) throws(PhoneError) {
        try run { try db.execute("DELETE FROM repos WHERE login = ?", [.text(login)]) }
    }

    // MARK: - Snapshot ledger

    /// The persisted ledger: the last snapshot's revision and users.
    public func ledger() throws(PhoneError) -> SnapshotLedger {
        let revision = Int64(try meta("revision") ?? "0") ?? 0
        var users: [User]?
        if let text = try meta("snapshot"), case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) {
            users = items.compactMap { try? User(json: $0) }
        }
        return SnapshotLedger(revision: revision, users: users)
    }

    /// Persists a new snapshot as the ledger's latest.
    public func saveSnapshot(_ snapshot: FavoritesSnapshot) throws(PhoneError) {
        try setMeta("revision", String(snapshot.revision))
        try setMeta("snapshot", Self.encode(.array(snapshot.users.map(\.json))))
    }

    /// The revision the relay last accepted (0: none in this pair), and how many favorites that
    /// snapshot left out because the whole list did not fit (``SnapshotFit``).
    public func sentSnapshot() throws(PhoneError) -> (revision: Int64, omitted: Int) {
        (Int64(try meta("sentRevision") ?? "0") ?? 0, Int(try meta("sentOmitted") ?? "0") ?? 0)
    }

    /// Records the revision the relay last accepted and the favorites it left out.
    public func setSentSnapshot(revision: Int64, omitted: Int) throws(PhoneError) {
        try write {
            try setMeta("sentRevision", String(revision))
            try setMeta("sentOmitted", String(omitted))
        }
    }

    /// The snapshot's user list for the favorites as stored now.
    public func currentSnapshotUsers() throws(PhoneError) -> [User] {
        SnapshotLedger.users(favorites: try favoriteLogins(), cached: try cachedUsers())
    }

    func meta(_ key: String) throws(PhoneError) -> String? {
        try run { try db.query("SELECT value FROM meta WHERE key = ?", [.text(key)]) { $0.text(0) }.first }
    }

    func setMeta(_ key: String, _ value: String) throws(PhoneError) {
        try run {
            try db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        }
    }
}
