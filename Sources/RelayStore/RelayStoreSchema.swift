import SQLite

/// The relay database's schema history and the SQL the store runs against it.
///
/// Tables (schema version 1):
/// - `pairs(id, created_at)`: one row per pair; every other table cascades from it.
/// - `devices(id, pair_id, role, name, token_hash, app_installed)`: the two members, tokens as
///   SHA-256 hex; `app_installed` (version 6) is 0 while the device's app is uninstalled (§7.1).
/// - `items(id, pair_id, direction, send_id, mode, payload, accepted_at, seq)`: queued items;
///   the INTEGER PRIMARY KEY `id` is the acceptance order (SQLite never gives a new row a
///   rowid below an existing one's when there is no AUTOINCREMENT and ids are not supplied).
///   `seq` is the seq an item was stored with (one delivered in the step that accepted it); in a
///   file from version 3 also a seq set when the item was sent later.
///   Version 4 indexes items by `pair_id` only (for the cascade when a pair goes): the store
///   finds an item's row by its `id`, which it keeps in memory per send id
///   (``SQLiteRelayStorage``), not through an index on `(pair_id, direction, send_id)` kept up
///   for every item (a backlog drains with about a fifth less CPU per item: BENCHMARKS.md).
/// - `item_seqs(id, seq)` (version 4): the seq of an item sent after the commit that stored
///   it, by the item's `id`; it wins over `items.seq`. A narrow row appended instead of
///   rewriting the item's row (and its payload's page) once more. Not a foreign key (a cascade
///   cost more): every deletion of items deletes their rows here too, and a load deletes any
///   left behind, since SQLite may give a later item the same `id`.
/// - `directions(pair_id, direction, last_sent_context, seq_reserved)`: per-direction
///   bookkeeping, one row created on first use.
/// - `pending_transferred(id, pair_id, direction, send_id)` (version 2): `transferred` ids owed
///   to a sender that is away, in order; appended one ack at a time, deleted when delivered.
///   Version 1 kept them as a JSON array in `directions`, rewritten on every ack: with 100k
///   items draining to a watch while the phone was away that made the drain quadratic.
/// - `finished(id, pair_id, direction, send_id, cancelled)`: recent finished send ids: the newest
///   ``finishedLimit`` per direction are kept; a running store lets a direction hold up to
///   ``finishedPruneEvery`` more before it deletes the oldest, and loading trims every direction.
///   `cancelled` (version 5) is 1 for a send that was cancelled rather than delivered.
/// - `complication_uses(id, pair_id, used_at)`: the rolling 24 h complication budget.
/// - `wrong_pairing_codes(id, address, at, address_locked_until, counts_until)` (version 3):
///   wrong pairing codes that still count toward an address or relay-wide lock (§6.3), in the
///   order they were tried; each row is deleted once `counts_until` passed (on every insert
///   and at load). Not tied to a pair.
///
/// `direction` is the sender's role (`phone` or `watch`); times are milliseconds since the
/// Unix epoch; JSON (payloads, contexts, id lists) is stored as compact UTF-8 TEXT.
enum RelayStoreSchema {
    /// Finished send ids kept per direction (the most recent ones).
    static let finishedLimit = 1024
    /// Finished ids a direction may hold beyond ``finishedLimit`` before the store deletes its
    /// oldest. Finding where a direction's newest ``finishedLimit`` begin walks that many index
    /// entries, so pruning on every ack (16 items in the benchmark) cost as much as the inserts;
    /// once per this many rows it is a few entries per row.
    static let finishedPruneEvery = 256
    /// How long a complication use counts against the budget: 24 hours, in milliseconds.
    static let complicationWindowMilliseconds: Int64 = 24 * 60 * 60 * 1000

    /// Every migration, in order; the last one's version is the schema this program writes.
    static let migrations: [Migration] = [
        Migration(version: 1, name: "create relay tables", sql: version1),
        Migration(version: 2, name: "pending transferred ids as rows", sql: version2),
        Migration(version: 3, name: "wrong pairing codes", sql: version3),
        Migration(version: 4, name: "item seqs by row, items indexed by pair", sql: version4),
        Migration(version: 5, name: "cancelled finished ids", sql: version5),
        Migration(version: 6, name: "devices' app installed", sql: version6),
    ]

    private static let version6 = """
        ALTER TABLE devices ADD COLUMN app_installed INTEGER NOT NULL DEFAULT 1;
        """

    private static let version5 = """
        ALTER TABLE finished ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
        """

    private static let version4 = """
        CREATE TABLE item_seqs (
            id INTEGER PRIMARY KEY,
            seq INTEGER NOT NULL
        ) STRICT;
        DROP INDEX items_by_send_id;
        CREATE INDEX items_by_pair ON items(pair_id);
        DELETE FROM items WHERE id NOT IN (SELECT max(id) FROM items GROUP BY pair_id, direction, send_id);
        """

    private static let version3 = """
        CREATE TABLE wrong_pairing_codes (
            id INTEGER PRIMARY KEY,
            address TEXT NOT NULL,
            at INTEGER NOT NULL,
            address_locked_until INTEGER,
            counts_until INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX wrong_pairing_codes_by_end ON wrong_pairing_codes(counts_until);
        """

    private static let version2 = """
        CREATE TABLE pending_transferred (
            id INTEGER PRIMARY KEY,
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            direction TEXT NOT NULL,
            send_id TEXT NOT NULL
        ) STRICT;
        CREATE INDEX pending_transferred_by_direction ON pending_transferred(pair_id, direction, id);
        INSERT INTO pending_transferred(pair_id, direction, send_id)
            SELECT d.pair_id, d.direction, j.value FROM directions AS d, json_each(d.pending_transferred) AS j
            ORDER BY d.pair_id, d.direction, j.key;
        ALTER TABLE directions DROP COLUMN pending_transferred;
        """

    private static let version1 = """
        CREATE TABLE pairs (
            id TEXT PRIMARY KEY NOT NULL,
            created_at INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE devices (
            id TEXT PRIMARY KEY NOT NULL,
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            UNIQUE (pair_id, role)
        ) STRICT;
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            direction TEXT NOT NULL,
            send_id TEXT NOT NULL,
            mode TEXT NOT NULL,
            payload TEXT NOT NULL,
            accepted_at INTEGER NOT NULL,
            seq INTEGER
        ) STRICT;
        CREATE INDEX items_by_send_id ON items(pair_id, direction, send_id);
        CREATE TABLE directions (
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            direction TEXT NOT NULL,
            last_sent_context TEXT,
            seq_reserved INTEGER NOT NULL DEFAULT 0,
            pending_transferred TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (pair_id, direction)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE finished (
            id INTEGER PRIMARY KEY,
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            direction TEXT NOT NULL,
            send_id TEXT NOT NULL
        ) STRICT;
        CREATE INDEX finished_by_direction ON finished(pair_id, direction, id);
        CREATE TABLE complication_uses (
            id INTEGER PRIMARY KEY,
            pair_id TEXT NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,
            used_at INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX complication_uses_by_pair ON complication_uses(pair_id, used_at);
        """

    // MARK: - Writes
    //
    // Writes that add rows for a pair select the pair's id from `pairs`, so a mutation for a
    // pair that is gone (the core may race a deletePair) inserts nothing instead of failing
    // the whole batch on the foreign key (`insertItem` fails its key, and the store ignores
    // that). Updates and deletes of a missing pair match nothing (an item's seq and deletion
    // find no row id for it).

    static let upsertPair = """
        INSERT INTO pairs(id, created_at) VALUES (?1, ?2)
        ON CONFLICT(id) DO UPDATE SET created_at = excluded.created_at
        """
    static let deletePairDevices = "DELETE FROM devices WHERE pair_id = ?1"
    static let upsertDevice = """
        INSERT INTO devices(id, pair_id, role, name, token_hash, app_installed) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT(id) DO UPDATE SET pair_id = excluded.pair_id, role = excluded.role,
            name = excluded.name, token_hash = excluded.token_hash, app_installed = excluded.app_installed
        """
    static let deletePair = "DELETE FROM pairs WHERE id = ?1"
    /// Not through `pairs` like the other inserts (the one statement run for every item): the
    /// foreign key looks the pair up anyway, and the store drops an item whose pair is gone when
    /// the key fails (``SQLiteRelayStorage/apply(_:)``).
    static let insertItem = """
        INSERT INTO items(pair_id, direction, send_id, mode, payload, accepted_at, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        """
    /// The seq of the item with row id ?1 (an item is sent once; a second seq would replace the first).
    static let setItemSeq = """
        INSERT INTO item_seqs(id, seq) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq
        """
    /// The items, and their seqs, with the row ids of the JSON array ?1.
    static let deleteItemsOfArray = "DELETE FROM items WHERE id IN (SELECT value FROM json_each(?1))"
    static let deleteItemSeqsOfArray = "DELETE FROM item_seqs WHERE id IN (SELECT value FROM json_each(?1))"
    /// At load: seqs whose item is gone (none should be; see `item_seqs` above).
    static let pruneOrphanItemSeqs = "DELETE FROM item_seqs WHERE id NOT IN (SELECT id FROM items)"
    /// Before a pair is deleted (its items go by cascade, through `items_by_pair`).
    static let deletePairItemSeqs = "DELETE FROM item_seqs WHERE id IN (SELECT id FROM items WHERE pair_id = ?1)"
    static let setLastSentContext = """
        INSERT INTO directions(pair_id, direction, last_sent_context) SELECT id, ?2, ?3 FROM pairs WHERE id = ?1
        ON CONFLICT(pair_id, direction) DO UPDATE SET last_sent_context = excluded.last_sent_context
        """
    static let setSeqReserved = """
        INSERT INTO directions(pair_id, direction, seq_reserved) SELECT id, ?2, ?3 FROM pairs WHERE id = ?1
        ON CONFLICT(pair_id, direction) DO UPDATE SET seq_reserved = excluded.seq_reserved
        """
    static let appendPendingTransferred = """
        INSERT INTO pending_transferred(pair_id, direction, send_id) SELECT id, ?2, ?3 FROM pairs WHERE id = ?1
        """
    /// ``appendPendingTransferred`` for the ids of the JSON array ?3, in its order.
    static let appendPendingTransferredOfArray = """
        INSERT INTO pending_transferred(pair_id, direction, send_id)
        SELECT p.id, ?2, j.value FROM pairs AS p, json_each(?3) AS j WHERE p.id = ?1 ORDER BY j.key
        """
    static let clearPendingTransferred = "DELETE FROM pending_transferred WHERE pair_id = ?1 AND direction = ?2"
    static let insertComplicationUse = """
        INSERT INTO complication_uses(pair_id, used_at) SELECT id, ?2 FROM pairs WHERE id = ?1
        """
    static let pruneComplicationUsesOfPair = "DELETE FROM complication_uses WHERE pair_id = ?1 AND used_at <= ?2"
    static let insertFinished = """
        INSERT INTO finished(pair_id, direction, send_id) SELECT id, ?2, ?3 FROM pairs WHERE id = ?1
        """
    static let insertCancelled = """
        INSERT INTO finished(pair_id, direction, send_id, cancelled) SELECT id, ?2, ?3, 1 FROM pairs WHERE id = ?1
        """
    /// ``insertFinished`` for the send ids of the JSON array ?3, in its order.
    static let insertFinishedOfArray = """
        INSERT INTO finished(pair_id, direction, send_id)
        SELECT p.id, ?2, j.value FROM pairs AS p, json_each(?3) AS j WHERE p.id = ?1 ORDER BY j.key
        """
    static let pruneFinished = """
        DELETE FROM finished WHERE pair_id = ?1 AND direction = ?2 AND id <= (
            SELECT id FROM finished WHERE pair_id = ?1 AND direction = ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3)
        """
    /// The directions holding more than ?1 finished ids (at load, to prune them).
    static let selectOverfullFinished = """
        SELECT pair_id, direction FROM finished GROUP BY pair_id, direction HAVING count(*) > ?1
        """

    static let insertWrongPairingCode = """
        INSERT INTO wrong_pairing_codes(address, at, address_locked_until, counts_until) VALUES (?1, ?2, ?3, ?4)
        """
    /// Wrong codes that no longer count at ?1 (on insert: at the new one's time; at load: now).
    static let pruneWrongPairingCodes = "DELETE FROM wrong_pairing_codes WHERE counts_until <= ?1"

    // MARK: - Reads

    static let selectWrongPairingCodes = """
        SELECT address, at, address_locked_until, counts_until FROM wrong_pairing_codes ORDER BY id
        """

    static let pruneComplicationUses = "DELETE FROM complication_uses WHERE used_at <= ?1"
    static let selectPairs = "SELECT id, created_at FROM pairs ORDER BY created_at, id"
    static let selectDevices = "SELECT pair_id, id, role, name, token_hash, app_installed FROM devices"
    static let selectDirections = """
        SELECT pair_id, direction, last_sent_context, seq_reserved FROM directions
        """
    static let selectPendingTransferred = "SELECT pair_id, direction, send_id FROM pending_transferred ORDER BY id"
    static let selectItems = """
        SELECT i.pair_id, i.direction, i.send_id, i.mode, i.payload, i.accepted_at, coalesce(s.seq, i.seq), i.id
        FROM items AS i LEFT JOIN item_seqs AS s ON s.id = i.id ORDER BY i.id
        """
    /// Every item's row id by direction and send id, for a store that applies a batch before it
    /// loaded (or after a batch failed).
    static let selectItemRows = "SELECT pair_id, direction, send_id, id FROM items ORDER BY id"
    static let selectFinished = "SELECT pair_id, direction, send_id, cancelled FROM finished ORDER BY id"
    static let selectComplicationUses = "SELECT pair_id, used_at FROM complication_uses ORDER BY used_at, id"
    static let countPairs = "SELECT count(*) FROM pairs"
    static let countItems = "SELECT count(*) FROM items"
    static let selectPayload = "SELECT payload FROM items WHERE id = ?1"
}
