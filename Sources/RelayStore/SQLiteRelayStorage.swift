import Foundation
import RelayCore
import RelayProtocol
import SQLite

/// The relay's durable state in one SQLite file, as a ``RelayStorage`` engine: pairs, devices,
/// queued items and bookkeeping.
///
/// Synchronous: a commit returns after SQLite's fsync, so the relay calls it from its committer
/// thread only. A lock keeps calls from different threads one at a time (uncontended in the
/// relay: one committer). ``RelayStore`` is the same store behind an actor, for async callers.
/// That lock is what `@unchecked Sendable` stands for: every mutable property is used with it
/// held.
///
/// It keeps the row id of every stored item in memory (``itemRows``, about 80 bytes per
/// item): an item's seq and its deletion go to its row directly, with no index on send ids to
/// keep up (see ``RelayStoreSchema``).
///
/// Mutations for a pair that is no longer stored (the core may race a `deletePair`) are
/// ignored: they change nothing and do not fail the batch. Inserting a pair that is already
/// stored replaces its creation time and devices and keeps its queues and bookkeeping.
public final class SQLiteRelayStorage: RelayStorage, @unchecked Sendable {
    /// The connection; used only with ``lock`` held.
    let database: SQLiteDatabase
    /// The configured durability, and what the connection is set to now.
    private let synchronous: SQLiteDatabase.Synchronous
    private var current: SQLiteDatabase.Synchronous
    /// Serialises every call (NSLock, which ThreadSanitizer sees, unlike Synchronization.Mutex).
    private let lock = NSLock()
    /// Finished ids inserted per direction since its last prune (used with ``lock`` held). It may
    /// count rows a rolled-back batch did not keep, which only brings a prune forward; a prune's
    /// reset waits for its batch's commit (``prunedFinished``).
    var unprunedFinished: [DirectionKey: Int] = [:]
    /// The directions pruned by the batch being applied, with their count at the prune, which
    /// comes off once the batch commits (rows inserted after the prune still count).
    var prunedFinished: [(direction: DirectionKey, count: Int)] = []
    /// The row id of every stored item, by direction and send id (used with ``lock`` held): how
    /// an item's seq and its deletion find its row without an index on send ids (see
    /// ``RelayStoreSchema``). Filled by a load; nil until then and after a batch failed (its
    /// changes to the map are not undone): the next batch reads it from the file first, which
    /// reads every item row (about a second at a million items). A direction's map is dropped
    /// once empty and rebuilt smaller once mostly drained (a dictionary never shrinks).
    var itemRows: [DirectionKey: [ExactID: Int64]]?

    /// A direction of a pair, the key of the per-direction bookkeeping.
    struct DirectionKey: Hashable {
        var pair: PairID
        var direction: Role
    }

    /// Opens the store at `path` (or `:memory:`), creating the file and bringing its schema up to date.
    ///
    /// - Parameters:
    ///   - path: The database file; its `-wal` and `-shm` companions live beside it.
    ///   - synchronous: Commit durability; ``SQLiteDatabase/Synchronous/full`` (the default)
    ///     makes every returned urgent ``apply(_:urgent:)`` survive `kill -9` and power loss.
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

    /// Applies `mutations` in order, in one transaction: all of them are durable when this
    /// returns, or none (the transaction is rolled back and the error thrown).
    ///
    /// With ``SQLiteDatabase/Synchronous/full`` the whole batch costs one fsync of the log, so
    /// callers batch (group commit). A batch that is not `urgent` is written with
    /// `synchronous=normal`: it survives `kill -9` at once (the log write is in the OS), and
    /// power loss once the next urgent commit's fsync covers the log. Losing it to power loss
    /// only brings back what it removed (items are delivered again with their seq, which
    /// receivers drop).
    public func apply(_ mutations: [StoreMutation], urgent: Bool) throws {
        guard !mutations.isEmpty else { return }
        try locked {
            let wanted: SQLiteDatabase.Synchronous = urgent ? synchronous : .normal
            if wanted != current {
                try database.execute("PRAGMA synchronous=\(wanted.rawValue)")
                current = wanted
            }
            prunedFinished.removeAll(keepingCapacity: true)
            do {
                try database.transaction(.immediate) {
                    if itemRows == nil { itemRows = try readItemRows() }
                    for mutation in StoreMutation.coalesced(mutations) {
                        try apply(mutation)
                    }
                }
            } catch {
                // Rolled back: the row ids this batch added or removed are read again next time.
                itemRows = nil
                throw error
            }
            for pruned in prunedFinished {
                let left = unprunedFinished[pruned.direction, default: 0] - pruned.count
                unprunedFinished[pruned.direction] = left > 0 ? left : nil
            }
        }
    }

    /// Everything stored, as the core needs it at start, after pruning expired bookkeeping.
    ///
    /// Complication uses at or before `now − 24 h` are deleted first, and finished ids beyond the
    /// newest 1024 of each direction (a running store prunes them in steps). Pairs come in creation
    /// order; each snapshot has an entry for both directions (empty where nothing is stored);
    /// items are in acceptance order and finished ids most recent last (at most 1024).
    /// - Throws: ``DatabaseFileError``: ``DatabaseFileError/Problem/damaged`` if a stored row
    ///   or page cannot be read (the cause names the table), another problem if SQLite fails.
    public func loadAll(now: Timestamp) throws(DatabaseFileError) -> [PairSnapshot] {
        try load(now: now, unsentPayloads: true)
    }

    private func load(now: Timestamp, unsentPayloads: Bool) throws(DatabaseFileError) -> [PairSnapshot] {
        let cutoff = now.millisecondsSinceEpoch - RelayStoreSchema.complicationWindowMilliseconds
        do {
            return try locked {
                // One transaction: the prune and the reads see a single state of the file.
                try database.transaction(.immediate) {
                    try database.execute(RelayStoreSchema.pruneComplicationUses, [.integer(cutoff)])
                    try database.execute(RelayStoreSchema.pruneOrphanItemSeqs)
                    try pruneOverfullFinished()
                    return try readSnapshots(unsentPayloads: unsentPayloads)
                }
            }
        } catch {
            throw DatabaseFileError(path: database.path, error: error, option: Self.fileOption)
        }
    }

    /// ``loadAll(now:)`` with the payloads of unsent items left in the file (their sizes kept):
    /// what a relay that loads payloads on demand reads at start.
    /// - Throws: ``DatabaseFileError``, as ``loadAll(now:)``.
    public func loadIndex(now: Timestamp) throws(DatabaseFileError) -> [PairSnapshot] {
        try load(now: now, unsentPayloads: false)
    }

    /// The wrong pairing codes that still count at `now`, in the order they were tried, after
    /// deleting the ones that no longer do.
    /// - Throws: ``DatabaseFileError``, as ``loadAll(now:)``.
    public func loadWrongPairingCodes(now: Timestamp) throws(DatabaseFileError) -> [WrongPairingCode] {
        typealias SQL = RelayStoreSchema
        do {
            return try locked {
                try database.transaction(.immediate) {
                    try database.execute(SQL.pruneWrongPairingCodes, [.integer(now.millisecondsSinceEpoch)])
                    return try database.query(SQL.selectWrongPairingCodes) { row in
                        WrongPairingCode(
                            address: row.text(0), at: Timestamp(millisecondsSinceEpoch: row.int64(1)),
                            addressLockedUntil: row.optionalInt64(2).map { Timestamp(millisecondsSinceEpoch: $0) },
                            countsUntil: Timestamp(millisecondsSinceEpoch: row.int64(3)))
                    }
                }
            }
        } catch {
            throw DatabaseFileError(path: database.path, error: error, option: Self.fileOption)
        }
    }

    /// The stored payloads of `sendIDs` queued in `direction` of `pair`; ids not stored are left out.
    /// - Throws: ``DatabaseFileError`` (``DatabaseFileError/Problem/damaged`` for a payload that
    ///   does not decode).
    public func loadPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws(DatabaseFileError)
        -> [ExactID: Payload]
    {
        do {
            return try locked {
                try database.transaction(.deferred) {
                    if itemRows == nil { itemRows = try readItemRows() }
                    return try readPayloads(pair, direction: direction, sendIDs: sendIDs)
                }
            }
        } catch {
            throw DatabaseFileError(path: database.path, error: error, option: Self.fileOption)
        }
    }

    /// The `serve` option that names the store's file (for the remedy in ``DatabaseFileError``).
    static let fileOption = "--db"

    /// The number of stored pairs and queued items (for metrics and tests).
    public func stats() throws -> (pairs: Int, queuedItems: Int) {
        try locked {
            let pairs = try database.query(RelayStoreSchema.countPairs) { Int($0.int64(0)) }.first ?? 0
            let items = try database.query(RelayStoreSchema.countItems) { Int($0.int64(0)) }.first ?? 0
            return (pairs, items)
        }
    }

    /// The first column of the first row of `sql` as an integer (0 if there is no row).
    func scalar(_ sql: String) throws -> Int64 {
        try locked { try database.query(sql) { $0.int64(0) }.first ?? 0 }
    }

    /// The connection's `PRAGMA synchronous` now (for tests).
    func synchronousPragma() throws -> String? {
        try locked { try database.pragma("synchronous") }
    }

    /// Whether a transaction is open on the connection (none should be, between calls).
    var isInTransaction: Bool { lock.withLock { database.isInTransaction } }

    private func locked<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
