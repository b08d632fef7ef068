import Primitives
import RelayProtocol
import SQLite

/// What WatchConnectivity keeps on the device, in `<state>/watchconnectivity.db` (SQLite, WAL).
///
/// This is the part of WatchConnectivity that lives in the system on a real device: a
/// transfer handed to `transferUserInfo` or `updateApplicationContext` is written here before
/// the call returns, so a `kill -9` of the app a moment later loses nothing; the drainer sends
/// it to the relay when it can. Rows keep the relay's send id once accepted, until the relay
/// says the counterpart received it. The receiver keeps the transfer ids it handled, so an
/// item sent twice (the app died between the relay's `accepted` and writing it down) reaches
/// the delegate once.
///
/// `@unchecked Sendable`: `SQLiteDatabase` is confined to one owner; here the owner is the
/// lock — every use of `database` is inside `lock.withLock`, and the connection never leaves.
/// WatchConnectivity's calls are synchronous from any thread, so an actor can't own it.
final class SessionOutbox: @unchecked Sendable {
    /// One queued durable item.
    struct Item: Sendable, Equatable {
        /// The transfer id (`tid` in the payload).
        var id: String
        var channel: Channel
        var payload: Payload
        /// The relay's send id, once accepted.
        var relayID: String?
        /// `cancel()` was called; the drainer takes it back from the relay.
        var cancelled: Bool
    }

    /// How an item goes to the relay.
    enum Channel: String, Sendable {
        case context, userInfo, complication
        /// A chunk of a file (or a file's cancel notice), sent as userInfo.
        case file
    }

    /// A queued file transfer (its chunks are items of channel `file`, ids `<file id>:<index>`).
    struct FileRecord: Sendable, Equatable {
        var id: String
        var url: String
        /// The metadata as a `wc.userInfo` payload, if any.
        var metadata: Payload?
        var size: Int64
        var chunks: Int
        /// The `WCError` code the transfer failed with, kept until the delegate heard it.
        var finishError: Int? = nil
    }

    private let lock = LockedState(())
    private let database: SQLiteDatabase
    /// Handled transfer ids kept for duplicate suppression (the oldest are dropped).
    private static let receivedKept = 10_000

    /// Opens (or creates) `directory/watchconnectivity.db`.
    init(directory: String) throws {
        database = try SQLiteDatabase(
            path: directory + "/watchconnectivity.db", configuration: .init(synchronous: .normal))
        _ = try database.migrate([
            Migration(
                version: 1, name: "outbox",
                sql: """
                    CREATE TABLE outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                      channel TEXT NOT NULL, payload TEXT NOT NULL, relay_id TEXT, cancelled INTEGER NOT NULL DEFAULT 0) STRICT;
                    CREATE TABLE received(id TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) STRICT;
                    CREATE TABLE kv(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
                    """),
            Migration(
                version: 2, name: "file transfers",
                sql: """
                    CREATE TABLE files(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, url TEXT NOT NULL,
                      metadata TEXT, size INTEGER NOT NULL, chunks INTEGER NOT NULL) STRICT;
                    """),
            Migration(
                version: 3, name: "finished transfers kept until reported",
                sql: "ALTER TABLE outbox ADD COLUMN finished INTEGER NOT NULL DEFAULT 0;"),
            Migration(
                version: 4, name: "failed transfers kept until reported",
                sql: """
                    ALTER TABLE outbox ADD COLUMN finish_error INTEGER;
                    ALTER TABLE files ADD COLUMN finish_error INTEGER;
                    """),
        ])
    }

    // MARK: - Outbound

    /// Queues `payload`; a context replaces a queued context the relay has not accepted yet.
    func enqueue(id: String, channel: Channel, payload: Payload) throws {
        try withDatabase { db in
            try db.transaction {
                if channel == .context {
                    try db.execute("DELETE FROM outbox WHERE channel = 'context' AND relay_id IS NULL")
                    try db.execute(
                        "INSERT INTO kv(key, value) VALUES ('sentContext', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        [.text(Self.text(payload))])
                }
                try db.execute(
                    "INSERT INTO outbox(id, channel, payload) VALUES (?, ?, ?)",
                    [.text(id), .text(channel.rawValue), .text(Self.text(payload))])
            }
        }
    }

    /// The next item to send or to take back (cancelled), in the order queued; a transfer that
    /// failed (``failed(_:code:)``) is not sent again.
    func next() throws -> Item? {
        try withDatabase { db in
            try db.query(
                """
                SELECT id, channel, payload, relay_id, cancelled FROM outbox
                WHERE cancelled = 1 OR (relay_id IS NULL AND finished = 0) ORDER BY seq LIMIT 1
                """,
                [], Self.item
            ).first
        }
    }

    /// userInfo items not yet reported finished to the app (nor cancelled), in the order queued.
    func outstandingUserInfo() throws -> [Item] {
        try withDatabase { db in
            try db.query(
                "SELECT id, channel, payload, relay_id, cancelled FROM outbox WHERE channel IN ('userInfo', 'complication') AND cancelled = 0 ORDER BY seq",
                [], Self.item)
        }
    }

    /// The relay accepted `id` as `relayID`. Returns false if the item is gone (cancelled meanwhile).
    @discardableResult
    func accepted(_ id: String, relayID: String, keep: Bool) throws -> Bool {
        try withDatabase { db in
            if keep {
                try db.execute("UPDATE outbox SET relay_id = ? WHERE id = ?", [.text(relayID), .text(id)])
            } else {
                try db.execute("DELETE FROM outbox WHERE id = ?", [.text(id)])
            }
            return db.changes > 0
        }
    }

    /// Whether a row was sent as the relay's `relayID` (written by ``accepted(_:relayID:keep:)``).
    func holds(relayID: String) throws -> Bool {
        try withDatabase { db in
            try !db.query("SELECT 1 FROM outbox WHERE relay_id = ?", [.text(relayID)]) { $0.int64(0) }.isEmpty
        }
    }

    /// The item the relay knows as `relayID` (received by the counterpart). A userInfo or
    /// complication transfer stays, marked finished, until the delegate heard of it
    /// (``remove(_:)`` after `didFinish`): killed before that, the app hears it at its next
    /// launch (``finishedTransfers(heldByRelaySession:)``). Any other item is removed here.
    func finished(relayID: String) throws -> Item? {
        try withDatabase { db in
            let items = try db.query(
                "SELECT id, channel, payload, relay_id, cancelled FROM outbox WHERE relay_id = ?", [.text(relayID)], Self.item)
            if let item = items.first, item.channel == .userInfo || item.channel == .complication {
                try db.execute("UPDATE outbox SET finished = 1 WHERE relay_id = ?", [.text(relayID)])
            } else {
                try db.execute("DELETE FROM outbox WHERE relay_id = ?", [.text(relayID)])
            }
            return items.first
        }
    }

    /// A userInfo or complication transfer failed with `WCError` code `code`: it stays,
    /// marked, until the delegate heard `didFinish(error)` (``remove(_:)`` after it); killed
    /// before that, the app hears it at its next launch (``finishedTransfers(heldByRelaySession:)``).
    func failed(_ id: String, code: Int) throws {
        try withDatabase { db in
            try db.execute("UPDATE outbox SET finished = 1, finish_error = ? WHERE id = ?", [.integer(Int64(code)), .text(id)])
        }
    }

    /// Transfers whose `didFinish` the app has not heard (it was killed first), in the order
    /// queued, each with the `WCError` code it failed with (nil: the counterpart received it):
    /// those marked finished or failed, and those the relay session no longer holds (`held`:
    /// its outstanding send ids, kept in its own store). The relay session writes a
    /// `transferred` down before the app's store hears of it, so a kill in between left a
    /// transfer here that nothing would ever finish. `held` nil: the relay session is not
    /// paired and holds nothing, so not holding an id says nothing (``failLostWithPair(code:)``).
    func finishedTransfers(heldByRelaySession held: Set<String>?) throws -> [(item: Item, error: Int?)] {
        try withDatabase { db in
            try db.query(
                """
                SELECT id, channel, payload, relay_id, cancelled, finished, finish_error FROM outbox
                WHERE channel IN ('userInfo', 'complication') AND cancelled = 0 AND (relay_id IS NOT NULL OR finished = 1)
                ORDER BY seq
                """, [], { row in (Self.item(row), row.int64(5) != 0, row.optionalInt64(6).map { Int($0) }) }
            ).filter { item, finished, _ in
                finished || held.map { !$0.contains(item.relayID ?? "") } ?? false
            }.map { ($0.0, $0.2) }
        }
    }

    // MARK: - Files

    /// Queues a file as its chunks, in one transaction.
    func enqueueFile(_ file: FileRecord, chunks: [Payload]) throws {
        try withDatabase { db in
            try db.transaction {
                try db.execute(
                    "INSERT INTO files(id, url, metadata, size, chunks) VALUES (?, ?, ?, ?, ?)",
                    [
                        .text(file.id), .text(file.url), file.metadata.map { .text(Self.text($0)) } ?? .null,
                        .integer(file.size), .integer(Int64(file.chunks)),
                    ])
                for (index, chunk) in chunks.enumerated() {
                    try db.execute(
                        "INSERT INTO outbox(id, channel, payload) VALUES (?, 'file', ?)",
                        [.text("\(file.id):\(index)"), .text(Self.text(chunk))])
                }
            }
        }
    }

    /// Queued file transfers, in the order queued.
    func files() throws -> [FileRecord] {
        try withDatabase { db in
            try db.query("SELECT id, url, metadata, size, chunks, finish_error FROM files ORDER BY seq", []) { row in
                FileRecord(
                    id: row.text(0), url: row.text(1), metadata: row.optionalText(2).flatMap(Self.payload),
                    size: row.int64(3), chunks: Int(row.int64(4)), finishError: row.optionalInt64(5).map { Int($0) })
            }
        }
    }

    /// Whether a row's id is `<?1>:<index>`, a chunk of the file whose id is the first
    /// parameter (exact and case-sensitive, where `LIKE` took `_` and `%` in an id as wildcards).
    private static let isChunkOfFile = "substr(id, 1, length(?1) + 1) = ?1 || ':'"

    /// Chunks of file `id` not yet received by the counterpart (`includingCancelled`: also
    /// those taken back, which it did not receive either: a failed file's).
    func remainingChunks(of id: String, includingCancelled: Bool = false) throws -> Int {
        try withDatabase { db in
            Int(
                try db.query(
                    "SELECT COUNT(*) FROM outbox WHERE channel = 'file' AND \(Self.isChunkOfFile)"
                        + (includingCancelled ? "" : " AND cancelled = 0"), [.text(id)]
                ) { $0.int64(0) }.first ?? 0)
        }
    }

    /// Forgets file `id`: its record, and its chunks (`cancel`: taken back from the relay by
    /// the drainer; otherwise deleted), optionally queueing `notice` for the receiver.
    func removeFile(_ id: String, cancel: Bool, notice: Payload? = nil) throws {
        try withDatabase { db in
            try db.transaction {
                try db.execute("DELETE FROM files WHERE id = ?", [.text(id)])
                if cancel {
                    try db.execute(
                        "UPDATE outbox SET cancelled = 1 WHERE channel = 'file' AND \(Self.isChunkOfFile)", [.text(id)])
                } else {
                    try db.execute("DELETE FROM outbox WHERE channel = 'file' AND \(Self.isChunkOfFile)", [.text(id)])
                }
                if let notice {
                    try db.execute(
                        "INSERT INTO outbox(id, channel, payload) VALUES (?, 'file', ?)",
                        [.text("cancel-\(id)"), .text(Self.text(notice))])
                }
            }
        }
    }

    /// File `id` failed with `WCError` code `code` at chunk `chunk`, in one transaction: the
    /// chunk goes, the others are taken back from the relay (the drainer), `notice` is queued
    /// for the receiver, and the file's record stays, marked, until the delegate heard
    /// `didFinish(error)` (``forgetFile(_:)`` after it; killed before, at the next launch).
    func failFile(_ id: String, chunk: String, code: Int, notice: Payload) throws {
        try withDatabase { db in
            try db.transaction {
                try db.execute("DELETE FROM outbox WHERE id = ?", [.text(chunk)])
                try db.execute("UPDATE outbox SET cancelled = 1 WHERE channel = 'file' AND \(Self.isChunkOfFile)", [.text(id)])
                try db.execute(
                    "INSERT OR IGNORE INTO outbox(id, channel, payload) VALUES (?, 'file', ?)",
                    [.text("cancel-\(id)"), .text(Self.text(notice))])
                try db.execute("UPDATE files SET finish_error = ? WHERE id = ?", [.integer(Int64(code)), .text(id)])
            }
        }
    }

    /// The pair is gone (unpaired, or its token revoked while away), and with it what the relay
    /// held of it: the userInfo and complication transfers the relay had accepted, and every
    /// file not finished, fail with `code`, marked as by ``failed(_:code:)`` and
    /// ``failFile(_:chunk:code:notice:)`` (kept until the delegate heard it; the files' chunks are
    /// taken back). Returns the transfers and the files' ids, in the order queued. (The relay
    /// session forgets its outstanding ids with the pair: read as received, they were reported
    /// received at the next launch.)
    func failLostWithPair(code: Int) throws -> (transfers: [Item], files: [String]) {
        try withDatabase { db in
            try db.transaction {
                let lost = "channel IN ('userInfo', 'complication') AND relay_id IS NOT NULL AND finished = 0 AND cancelled = 0"
                let transfers = try db.query(
                    "SELECT id, channel, payload, relay_id, cancelled FROM outbox WHERE \(lost) ORDER BY seq", [], Self.item)
                try db.execute("UPDATE outbox SET finished = 1, finish_error = ? WHERE \(lost)", [.integer(Int64(code))])
                let files = try db.query("SELECT id FROM files WHERE finish_error IS NULL ORDER BY seq", []) { $0.text(0) }
                for file in files {
                    try db.execute("UPDATE outbox SET cancelled = 1 WHERE channel = 'file' AND \(Self.isChunkOfFile)", [.text(file)])
                }
                try db.execute("UPDATE files SET finish_error = ? WHERE finish_error IS NULL", [.integer(Int64(code))])
                return (transfers, files)
            }
        }
    }

    /// Forgets file `id`'s record (its `didFinish` was heard).
    func forgetFile(_ id: String) throws {
        try withDatabase { db in try db.execute("DELETE FROM files WHERE id = ?", [.text(id)]) }
    }

    /// Forgets the file chunks the relay accepted and the relay session no longer holds
    /// (`held`, as for ``finishedTransfers(heldByRelaySession:)``): the counterpart received them.
    func forgetReceivedChunks(heldByRelaySession held: Set<String>) throws {
        try withDatabase { db in
            let sent = try db.query(
                "SELECT id, relay_id FROM outbox WHERE channel = 'file' AND cancelled = 0 AND relay_id IS NOT NULL", []
            ) { row in (row.text(0), row.text(1)) }
            for (id, relayID) in sent where !held.contains(relayID) {
                try db.execute("DELETE FROM outbox WHERE id = ?", [.text(id)])
            }
        }
    }

    /// Removes `id` (sent, failed or taken back).
    func remove(_ id: String) throws {
        try withDatabase { db in try db.execute("DELETE FROM outbox WHERE id = ?", [.text(id)]) }
    }

    /// Marks `id` cancelled; returns false if it is no longer queued.
    func cancel(_ id: String) throws -> Bool {
        try withDatabase { db in
            try db.execute("UPDATE outbox SET cancelled = 1 WHERE id = ?", [.text(id)])
            return db.changes > 0
        }
    }

    /// Records `pairID` as the pair this device's transfers go to; returns the one recorded
    /// before (nil if none was: an outbox older than the record, or never paired).
    func recordPair(_ pairID: String) throws -> String? {
        try withDatabase { db in
            try db.transaction {
                let before = try db.query("SELECT value FROM kv WHERE key = 'pairId'", []) { $0.text(0) }.first ?? nil
                try db.execute(
                    "INSERT INTO kv(key, value) VALUES ('pairId', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [.text(pairID)])
                return before
            }
        }
    }

    /// The last application context this device sent.
    func sentContext() throws -> Payload? {
        try withDatabase { db in
            try db.query("SELECT value FROM kv WHERE key = 'sentContext'", []) { $0.text(0) }.first
        }.flatMap(Self.payload)
    }

    // MARK: - Inbound

    /// Whether the transfer `id` was already handed to the delegate.
    func wasReceived(_ id: String) throws -> Bool {
        try withDatabase { db in
            try !db.query("SELECT 1 FROM received WHERE id = ?", [.text(id)]) { $0.int64(0) }.isEmpty
        }
    }

    /// Records that the delegate handled transfer `id`.
    func markReceived(_ id: String) throws {
        try withDatabase { db in
            try db.transaction {
                try db.execute(
                    "INSERT OR IGNORE INTO received(id, seq) VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM received))",
                    [.text(id)])
                try db.execute(
                    "DELETE FROM received WHERE seq <= (SELECT MAX(seq) FROM received) - ?",
                    [.integer(Int64(Self.receivedKept))])
            }
        }
    }

    private func withDatabase<T: Sendable>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock { _ in try body(database) }
    }

    // MARK: - Rows

    private static func item(_ row: SQLiteRow) -> Item {
        Item(
            id: row.text(0), channel: Channel(rawValue: row.text(1)) ?? .userInfo,
            payload: payload(row.text(2)) ?? Payload(kind: "wc.userInfo"),
            relayID: row.optionalText(3), cancelled: row.int64(4) != 0)
    }

    private static func text(_ payload: Payload) -> String {
        String(decoding: payload.bytes, as: UTF8.self)
    }

    private static func payload(_ text: String) -> Payload? {
        guard case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        return Payload(members: members)
    }
}

