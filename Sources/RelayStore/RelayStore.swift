import RelayCore
import RelayProtocol
import SQLite

/// The relay's durable state (``SQLiteRelayStorage``) behind an actor, for async callers
/// (tests and tools).
///
/// Its calls block the cooperative-pool thread the actor runs on for the length of an fsync,
/// which is why the relay does not use it: the relay's committer calls the ``RelayStorage``
/// engine directly from a thread of its own.
public actor RelayStore {
    /// The engine, serialised by this actor (and by its own lock).
    let storage: SQLiteRelayStorage

    /// Opens the store at `path` (or `:memory:`); see ``SQLiteRelayStorage/init(path:synchronous:)``.
    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .full) throws(DatabaseFileError) {
        storage = try SQLiteRelayStorage(path: path, synchronous: synchronous)
    }

    /// The schema version this program reads and writes.
    public static var schemaVersion: Int32 { Int32(RelayStoreSchema.migrations.count) }

    /// Applies `mutations` in order, in one transaction: all of them are durable when this returns, or none.
    ///
    /// - Parameter urgent: Whether something waits on this batch being durable; see
    ///   ``SQLiteRelayStorage/apply(_:urgent:)``.
    /// - Throws: ``SQLiteError``; the batch is then rolled back entirely.
    public func commit(_ mutations: [StoreMutation], urgent: Bool = true) throws {
        try storage.apply(mutations, urgent: urgent)
    }

    /// The connection's `PRAGMA synchronous` now (for tests).
    func synchronousPragma() throws -> String? {
        try storage.synchronousPragma()
    }

    /// Everything stored, as the core needs it at start; see ``SQLiteRelayStorage/loadAll(now:)``.
    public func load(now: Timestamp) throws(DatabaseFileError) -> [PairSnapshot] {
        try storage.loadAll(now: now)
    }

    /// The wrong pairing codes that still count; see ``SQLiteRelayStorage/loadWrongPairingCodes(now:)``.
    public func loadWrongPairingCodes(now: Timestamp) throws(DatabaseFileError) -> [WrongPairingCode] {
        try storage.loadWrongPairingCodes(now: now)
    }

    /// The number of stored pairs and queued items (for metrics and tests).
    public func stats() throws -> (pairs: Int, queuedItems: Int) {
        try storage.stats()
    }

    /// The first column of the first row of `sql` as an integer (0 if there is no row), for tests and diagnostics.
    func scalar(_ sql: String) throws -> Int64 {
        try storage.scalar(sql)
    }

    /// Whether a transaction is open on the connection (none should be, between calls).
    var isInTransaction: Bool { storage.isInTransaction }
}
