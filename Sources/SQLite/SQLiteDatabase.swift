import CSQLite

/// One SQLite connection with WatchRelay's settings: WAL, chosen durability, foreign keys, a busy timeout.
///
/// Not `Sendable`: the connection is opened without SQLite's own mutex
/// (`SQLITE_OPEN_NOMUTEX`), so exactly one owner (an actor such as ``RelayStore``) may use it.
/// Statements run through ``execute(_:_:)`` and ``query(_:_:_:)`` are prepared once and cached
/// for the life of the connection.
public final class SQLiteDatabase {
    /// How hard SQLite works to make a commit durable (`PRAGMA synchronous`).
    public enum Synchronous: String, Sendable, CaseIterable {
        /// fsync the WAL on every commit: a commit that returned survives power loss (the default).
        case full = "FULL"
        /// fsync only at checkpoints: survives a process crash, may lose the last commits on power loss.
        case normal = "NORMAL"
        /// Never fsync: for benchmarks and throwaway databases.
        case off = "OFF"
    }

    /// Connection settings applied at open.
    public struct Configuration: Sendable {
        /// Durability of commits (default ``Synchronous/full``).
        public var synchronous: Synchronous
        /// How long a statement waits for another connection's lock before `SQLITE_BUSY` (default 5000 ms).
        public var busyTimeoutMilliseconds: Int32
        /// Whether to use write-ahead logging (default `true`; ignored for `:memory:`).
        public var writeAheadLog: Bool
        /// Whether foreign keys are enforced, cascades included (default `true`).
        public var foreignKeys: Bool

        /// Creates a configuration; the defaults are the durable ones.
        public init(
            synchronous: Synchronous = .full, busyTimeoutMilliseconds: Int32 = 5000, writeAheadLog: Bool = true,
            foreignKeys: Bool = true
        ) {
            self.synchronous = synchronous
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.writeAheadLog = writeAheadLog
            self.foreignKeys = foreignKeys
        }
    }

    /// The path the connection was opened with (`:memory:` for an in-memory database).
    public let path: String
    /// The connection, owned by this object and closed in `deinit`.
    private let connection: OpaquePointer
    /// Prepared statements keyed by their SQL text, finalized before the connection closes.
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database at `path` and applies `configuration`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `:memory:`.
    ///   - configuration: Durability, locking and journal settings.
    /// - Throws: ``SQLiteError`` if the file cannot be opened or a setting cannot be applied
    ///   (for example, a file database that refuses WAL mode).
    public init(path: String, configuration: Configuration = Configuration()) throws {
        _ = Self.processSettings
        self.path = path
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // `path` is passed as a temporary C string owned by Swift for the duration of the call;
        // SQLite copies what it keeps. `opened` receives a connection that this object owns.
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else {
            throw SQLiteError(code: SQLITE_NOMEM, message: "no connection allocated", operation: "open \(path)")
        }
        do {
            // SQLite allocates a connection even when opening fails; it must be closed either way.
            try check(code, operation: "open \(path)", connection: opened)
        } catch {
            sqlite3_close_v2(opened)
            throw error
        }
        self.connection = opened
        // From here on, `deinit` closes the connection if a setting fails.
        // SQLite quietly opens a file it may not write read-only; every later commit would then
        // fail. Refuse at once instead.
        if sqlite3_db_readonly(connection, "main") == 1 {
            throw SQLiteError(
                code: SQLITE_READONLY, message: "the file is opened read-only (no write permission)",
                operation: "open \(path)")
        }
        try check(
            sqlite3_extended_result_codes(connection, 1), operation: "extended result codes", connection: connection)
        try check(
            sqlite3_busy_timeout(connection, configuration.busyTimeoutMilliseconds), operation: "busy timeout",
            connection: connection)
        if configuration.writeAheadLog && path != ":memory:" {
            let mode = try query("PRAGMA journal_mode=WAL") { $0.text(0) }.first ?? ""
            guard mode.lowercased() == "wal" else {
                throw SQLiteError(
                    code: SQLITE_ERROR, message: "journal mode is '\(mode)', not 'wal'",
                    operation: "PRAGMA journal_mode=WAL")
            }
        }
        try execute("PRAGMA synchronous=\(configuration.synchronous.rawValue)")
        try execute("PRAGMA foreign_keys=\(configuration.foreignKeys ? "ON" : "OFF")")
    }

    /// SQLite's process-wide settings, applied once before the first connection opens: memory
    /// statistics off (they lock a global mutex on every allocation; `perf` of the relay's
    /// durable sends put 3 % of its CPU there). Ignored if SQLite was initialised before.
    private static let processSettings: Void = {
        _ = relay_sqlite_disable_memory_statistics()
    }()

    deinit {
        // Statements must be finalized before the connection can really close.
        statements.removeAll()
        // close_v2 cannot fail with all statements finalized; nothing could report it here anyway.
        sqlite3_close_v2(connection)
    }

    // MARK: - Statements

    /// The cached prepared statement for `sql`, preparing it on first use.
    ///
    /// - Important: The statement is shared with every other caller using the same SQL; reset
    ///   it before returning (``SQLiteStatement/execute(_:)`` and ``SQLiteStatement/query(_:_:)`` do).
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let statement = try SQLiteStatement(sql: sql, connection: connection, persistent: true)
        statements[sql] = statement
        return statement
    }

    /// Runs one statement with `bindings` to completion (rows, if any, are ignored).
    public func execute(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) {
        try statement(sql).execute(bindings)
    }

    /// Runs one query with `bindings` and maps each row through `transform`.
    public func query<T>(_ sql: String, _ bindings: [SQLiteValue] = [], _ transform: (SQLiteRow) throws -> T) throws
        -> [T]
    {
        try statement(sql).query(bindings, transform)
    }

    /// Runs a script of several statements separated by `;`, without caching or bindings (for schema changes).
    public func execute(script: String) throws(SQLiteError) {
        // `script` is a temporary C string owned by Swift for the call. No error-message
        // out-parameter: `check` reads the same text from sqlite3_errmsg, so there is no
        // SQLite-allocated string to free.
        try check(sqlite3_exec(connection, script, nil, nil, nil), operation: "exec: \(script)", connection: connection)
    }

    // MARK: - Transactions

    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes the write lock at the first write (`BEGIN DEFERRED`).
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so a busy database fails (or waits) up front (`BEGIN IMMEDIATE`).
        case immediate = "IMMEDIATE"
    }

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool { sqlite3_get_autocommit(connection) == 0 }

    /// Runs `body` in a transaction: commits if it returns, rolls back if it throws.
    ///
    /// With WAL and ``Synchronous/full``, the commit is one fsync of the log however many
    /// statements `body` ran: the basis of group commit.
    /// - Precondition: No transaction is open (transactions do not nest).
    /// - Throws: What `body` throws, or ``SQLiteError`` from `BEGIN`/`COMMIT`.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "SQLiteDatabase.transaction does not nest")
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back by itself (SQLITE_FULL, SQLITE_IOERR, …).
            if isInTransaction {
                try? execute("ROLLBACK")
            }
            throw error
        }
    }

    // MARK: - Connection state

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(connection)) }

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// The schema version stored in the file header (`PRAGMA user_version`; 0 for a new file).
    public func userVersion() throws(SQLiteError) -> Int32 {
        let statement = try statement("PRAGMA user_version")
        defer { statement.reset() }
        try statement.bind([])
        guard try statement.step() else { return 0 }
        return Int32(truncatingIfNeeded: statement.row.int64(0))
    }

    /// Stores `version` as the schema version (transactional when a transaction is open).
    public func setUserVersion(_ version: Int32) throws(SQLiteError) {
        // PRAGMA takes no bindings; the value is an integer, so interpolation is safe.
        try execute(script: "PRAGMA user_version=\(version)")
    }

    /// The current value of a read-only or settable pragma, e.g. `journal_mode` or `synchronous`.
    public func pragma(_ name: String) throws -> String? {
        try query("PRAGMA \(name)") { $0.text(0) }.first
    }
}

@available(*, unavailable, message: "a connection is confined to one owner, such as an actor")
extension SQLiteDatabase: Sendable {}
