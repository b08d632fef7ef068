import Foundation
import SQLite
import TestSupport
import RelayCore
import Testing

@testable import RelayStore

/// Opening relay databases: creation, migration, refusal of newer files; and token hashing.
struct RelayStoreSchemaTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = TemporaryDirectory()
    }

    @Test func openingAnEmptyFileCreatesTheSchema() async throws {
        let path = directory.path("relay.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        let tables = try await store.scalar(
            """
            SELECT count(*) FROM sqlite_schema WHERE type = 'table'
            AND name IN ('pairs', 'devices', 'items', 'directions', 'finished', 'complication_uses')
            """)
        #expect(tables == 6)
    }

    @Test func reopeningKeepsTheSchemaVersion() async throws {
        let path = directory.path("relay.sqlite")
        _ = try RelayStore(path: path)
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
    }

    /// Version 1 kept pending `transferred` ids as a JSON array in `directions`; version 2
    /// moves them to rows, in order, and drops the column.
    @Test func aVersion1FileKeepsItsPendingTransferredIdsInOrder() async throws {
        let path = directory.path("relay.sqlite")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .setSeqReserved(PairID("p1"), direction: .watch, 64),
        ])
        // Turn the file back into what version 1 wrote.
        let old = try SQLiteDatabase(path: path)
        try old.execute(script: Self.backToVersion3 + """
            DROP TABLE wrong_pairing_codes;
            DROP TABLE pending_transferred;
            ALTER TABLE directions ADD COLUMN pending_transferred TEXT NOT NULL DEFAULT '[]';
            UPDATE directions SET pending_transferred = '["z","a","m"]' WHERE direction = 'watch';
            """)
        try old.setUserVersion(1)
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        let loaded = try await store.load(now: Fixture.now)
        #expect(loaded.first?.directions[.watch]?.pendingTransferred == ["z", "a", "m"])
        #expect(loaded.first?.directions[.watch]?.seqReserved == 64)
        #expect(loaded.first?.directions[.phone]?.pendingTransferred == [])
    }

    /// Version 3 adds the wrong pairing codes (§6.3 locks that survive a restart); a version 2
    /// file keeps everything it held and starts with none.
    @Test func aVersion2FileGainsTheWrongPairingCodesTable() async throws {
        let path = directory.path("relay.sqlite")
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("a")),
            .appendPendingTransferred(p, direction: .watch, ids: ["t"]),
        ])
        let old = try SQLiteDatabase(path: path)
        try old.execute(script: Self.backToVersion3 + "DROP TABLE wrong_pairing_codes;")
        try old.setUserVersion(2)
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        let loaded = try await store.load(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.items.map(\.sendID) == ["a"])
        #expect(loaded.first?.directions[.watch]?.pendingTransferred == ["t"])
        #expect(try await store.loadWrongPairingCodes(now: Fixture.now).isEmpty)
        let wrong = Fixture.wrongPairingCodes().counting
        try await store.commit(wrong.map { .recordWrongPairingCode($0) })
        #expect(try await RelayStore(path: path).loadWrongPairingCodes(now: Fixture.now) == wrong)
    }

    /// What version 5 changed, undone.
    static let backToVersion5 = """
        ALTER TABLE devices DROP COLUMN app_installed;

        """

    /// Version 6 keeps whether each device's app is installed (PROTOCOL.md §7.1); in a version 5
    /// file every app is, and a record written later keeps its flag.
    @Test func aVersion5FileHasEveryAppInstalledAndKeepsTheFlagFromThenOn() async throws {
        let path = directory.path("relay.sqlite")
        try await RelayStore(path: path).commit([.insertPair(Fixture.pair("p1"))])
        let old = try SQLiteDatabase(path: path)
        try old.execute(script: Self.backToVersion5)
        try old.setUserVersion(5)
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        let record = try #require(try await store.load(now: Fixture.now).first?.record)
        #expect(record.phone.appInstalled && record.watch.appInstalled)
        var uninstalled = record
        uninstalled.watch.appInstalled = false
        try await store.commit([.insertPair(uninstalled)])
        let loaded = try await RelayStore(path: path).load(now: Fixture.now)
        #expect(loaded.first?.record == uninstalled)
    }

    static let backToVersion4 = backToVersion5 + """
        ALTER TABLE finished DROP COLUMN cancelled;

        """

    /// Version 5 marks the finished ids that were cancelled (a `cancel` repeated after a
    /// restart is `cancelled` again, PROTOCOL.md §8.8); a version 4 file keeps its finished ids,
    /// none of them cancelled, and records cancels from then on.
    @Test func aVersion4FileKeepsItsFinishedIDs() async throws {
        let path = directory.path("relay.sqlite")
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .recordFinished(p, direction: .phone, sendIDs: ["a", "b"]),
        ])
        let old = try SQLiteDatabase(path: path)
        try old.execute(script: Self.backToVersion4)
        try old.setUserVersion(4)
        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        try await store.commit([.recordCancelled(p, direction: .phone, sendID: "c")])
        let loaded = try await RelayStore(path: path).load(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.finishedIDs == ["a", "b", "c"])
        #expect(loaded.first?.directions[.phone]?.cancelledIDs == ["c"])
    }

    /// What versions 5 and 4 changed, undone (with the seqs in `item_seqs` moved back into their items).
    static let backToVersion3 = backToVersion4 + """
        UPDATE items SET seq = (SELECT seq FROM item_seqs WHERE item_seqs.id = items.id)
            WHERE id IN (SELECT id FROM item_seqs);
        DROP TABLE item_seqs;
        DROP INDEX items_by_pair;
        CREATE INDEX items_by_send_id ON items(pair_id, direction, send_id);

        """

    /// Version 4 keeps the seqs of items sent later in rows of their own and indexes items by
    /// pair only; a version 3 file keeps its items, with their seqs, in order, and the store
    /// finds them to set a seq and delete them.
    @Test func aVersion3FileKeepsItsItemsAndTheirSeqs() async throws {
        let path = directory.path("relay.sqlite")
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("a", seq: 1)),
            .insertItem(p, direction: .phone, Fixture.item("b")), .insertItem(p, direction: .phone, Fixture.item("c")),
            .setItemSeq(p, direction: .phone, sendID: "b", seq: 2),
        ])
        let old = try SQLiteDatabase(path: path)
        try old.execute(script: Self.backToVersion3)
        try old.setUserVersion(3)
        #expect(try old.query("SELECT seq FROM items ORDER BY id") { $0.optionalInt64(0) } == [1, 2, nil])
        // A send id stored twice in a direction (the core never does): the newer row stays.
        try old.execute(script: """
            INSERT INTO items(pair_id, direction, send_id, mode, payload, accepted_at)
                SELECT pair_id, direction, send_id, mode, '{"older":true}', accepted_at FROM items WHERE send_id = 'c';
            UPDATE items SET payload = (SELECT payload FROM items WHERE send_id = 'c' ORDER BY id LIMIT 1)
                WHERE id = (SELECT max(id) FROM items);
            UPDATE items SET payload = '{"older":true}' WHERE id = (SELECT min(id) FROM items WHERE send_id = 'c');
            """)

        let store = try RelayStore(path: path)
        #expect(try await store.scalar("PRAGMA user_version") == Int64(RelayStore.schemaVersion))
        let indexes = "SELECT group_concat(name) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items'"
        #expect(try await store.scalar("SELECT (\(indexes)) = 'items_by_pair'") == 1)
        try await store.commit([
            .setItemSeq(p, direction: .phone, sendID: "c", seq: 3), .deleteItems(p, direction: .phone, sendIDs: ["a"]),
        ])
        let loaded = try await RelayStore(path: path).load(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.items == [Fixture.item("b", seq: 2), Fixture.item("c", seq: 3)])
        #expect(try await store.scalar("SELECT count(*) FROM items WHERE payload LIKE '%older%'") == 0)
    }

    @Test func databaseFromANewerProgramIsRefused() throws {
        let path = directory.path("relay.sqlite")
        try SQLiteDatabase(path: path).setUserVersion(999)

        let error = try #require(throws: DatabaseFileError.self) { try RelayStore(path: path) }
        #expect(error.problem == .schemaTooNew(found: 999, supported: RelayStore.schemaVersion))
        #expect(error.cause.contains("schema version 999"))
        #expect(error.description.hasPrefix(path + ": written by a newer WatchRelay"))
        #expect(try SQLiteDatabase(path: path).userVersion() == 999)
    }

    @Test func inMemoryStoreWorks() async throws {
        let store = try RelayStore(path: ":memory:", synchronous: .off)
        try await store.commit([.insertPair(Fixture.pair("p"))])
        #expect(try await store.load(now: Fixture.now).count == 1)
    }

    // MARK: - Token hashing

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func tokenHashMatchesSHA256Vectors(input: String, digest: String) {
        #expect(TokenHasher.sha256Hex(input) == digest)
    }
}
