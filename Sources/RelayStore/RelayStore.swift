import RelayCore
import RelayProtocol

/// The relay's durable state in one SQLite file: pairs, devices, queued items and bookkeeping.
///
/// The actor owns its ``SQLiteDatabase``, so all disk I/O happens on the actor's executor and
/// never on the transport's service thread. The relay core describes changes as
/// ``StoreMutation`` values; the server gathers those of many events and hands them to
/// ``commit(_:)`` in one call (group commit), then releases the frames that depended on them.
///
/// Mutations for a pair that is no longer stored (the core may race a `deletePair`) are
/// ignored: they change nothing and do not fail the batch. Inserting a pair that is already
/// stored replaces its creation time and devices and keeps its queues and bookkeeping.
public actor RelayStore {
    /// The connection, confined to this actor.
    let database: SQLiteDatabase
    /// The configured durability, and what the connection is set to now.
    private let synchronous: SQLiteDatabase.Synchronous
    private var current: SQLiteDatabase.Synchronous

    /// Opens the store at `path` (or `:memory:`), creating the file and bringing its schema up to date.
    ///
    /// - Parameters:
    ///   - path: The database file; its `-wal` and `-shm` companions live beside it.
    ///   - synchronous: Commit durability; ``SQLiteDatabase/Synchronous/full`` (the default)
    ///     makes every returned ``commit(_:)`` survive `kill -9` and power loss.
    /// - Throws: ``DatabaseFileError`` (naming `path`, the problem and the remedy, with `--db`
    ///   as the option that picks another file) if the file cannot be opened or migrated.
    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .full) throws(DatabaseFileError) {
        let database = try SQLiteDatabase.open(
            path: path, configuration: .init(synchronous: synchronous), migrations: RelayStoreSchema.migrations,
            option: Self.fileOption)
        self.database = database
        self.synchronous = synchronous
        self.current = synchronous
    }

    /// The `serve` option that names the store's file (for the remedy in ``DatabaseFileError``).
    static let fileOption = "--db"

    /// The schema version this program reads and writes.
    public static var schemaVersion: Int32 { Int32(RelayStoreSchema.migrations.count) }

    /// Applies `mutations` in order, in one transaction: all of them are durable when this returns, or none.
    ///
    /// With ``SQLiteDatabase/Synchronous/full`` the whole batch costs one fsync of the log,
    /// so callers should batch: gather the mutations of every event handled since the last
    /// commit and commit them together before sending the frames that depend on them.
    ///
    /// - Parameter urgent: Whether something waits on this batch being durable (a frame the
    ///   relay holds until the commit). A batch nobody waits on (e.g. acks whose `transferred`
    ///   goes nowhere) is written without its own fsync even under `full`: it survives `kill -9`
    ///   at once (the log write is in the OS), and power loss once the next urgent commit's
    ///   fsync covers the log. Losing it to power loss only brings back what it removed (items
    ///   are delivered again with their seq, which receivers drop).
    /// - Throws: ``SQLiteError``; the batch is then rolled back entirely.
    public func commit(_ mutations: [StoreMutation], urgent: Bool = true) throws {
        guard !mutations.isEmpty else { return }
        let wanted: SQLiteDatabase.Synchronous = urgent ? synchronous : .normal
        if wanted != current {
            try database.execute("PRAGMA synchronous=\(wanted.rawValue)")
            current = wanted
        }
        try database.transaction(.immediate) {
            for mutation in mutations {
                try apply(mutation)
            }
        }
    }

    /// The connection's `PRAGMA synchronous` now (for tests).
    func synchronousPragma() throws -> String? {
        try database.pragma("synchronous")
    }

    /// Everything stored, as the core needs it at start, after pruning expired bookkeeping.
    ///
    /// Complication uses at or before `now − 24 h` are deleted first. Pairs come in creation
    /// order; each snapshot has an entry for both directions (empty where nothing is stored);
    /// items are in acceptance order and finished ids most recent last (at most 1024).
    /// - Parameter now: The current time, from the caller's clock.
    /// - Throws: ``DatabaseFileError``: ``DatabaseFileError/Problem/damaged`` if a stored row
    ///   or page cannot be read (the cause names the table), another problem if SQLite fails.
    public func load(now: Timestamp) throws(DatabaseFileError) -> [PairSnapshot] {
        let cutoff = now.millisecondsSinceEpoch - RelayStoreSchema.complicationWindowMilliseconds
        do {
            // One transaction: the prune and the reads see a single state of the file.
            return try database.transaction(.immediate) {
                try database.execute(RelayStoreSchema.pruneComplicationUses, [.integer(cutoff)])
                return try readSnapshots()
            }
        } catch {
            throw DatabaseFileError(path: database.path, error: error, option: Self.fileOption)
        }
    }

    /// The number of stored pairs and queued items (for metrics and tests).
    public func stats() throws -> (pairs: Int, queuedItems: Int) {
        let pairs = try database.query(RelayStoreSchema.countPairs) { Int($0.int64(0)) }.first ?? 0
        let items = try database.query(RelayStoreSchema.countItems) { Int($0.int64(0)) }.first ?? 0
        return (pairs, items)
    }

    /// The first column of the first row of `sql` as an integer (0 if there is no row), for tests and diagnostics.
    func scalar(_ sql: String) throws -> Int64 {
        try database.query(sql) { $0.int64(0) }.first ?? 0
    }

    /// Whether a transaction is open on the connection (none should be, between calls).
    var isInTransaction: Bool { database.isInTransaction }
}
