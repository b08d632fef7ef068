import Foundation
import RelayCore
import RelayProtocol
import SQLite
import TestSupport
import Testing

@testable import RelayStore

/// Every mutation goes in through `commit` and comes back through `load` on a new store (a restart).
struct RelayStoreTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = TemporaryDirectory()
        path = directory.path("relay.sqlite")
    }

    // MARK: - Round trips

    @Test func newStoreLoadsNothing() async throws {
        let store = try RelayStore(path: path)
        #expect(try await store.load(now: Fixture.now).isEmpty)
        let stats = try await store.stats()
        #expect(stats.pairs == 0 && stats.queuedItems == 0)
    }

    @Test func aCommitNobodyWaitsOnSkipsItsFsyncAndTheNextUrgentOneHasItAgain() async throws {
        let store = try RelayStore(path: path, synchronous: .full)
        try await store.commit([.insertPair(Fixture.pair("p1"))], urgent: false)
        #expect(try await store.synchronousPragma() == "1", "normal: no fsync of its own")
        try await store.commit([.insertPair(Fixture.pair("p2"))])
        #expect(try await store.synchronousPragma() == "2", "full again")
        #expect(try await RelayStore(path: path).load(now: Fixture.now).count == 2)
        // A store configured `normal` stays normal.
        let relaxed = try RelayStore(path: directory.path("normal.sqlite"), synchronous: .normal)
        try await relaxed.commit([.insertPair(Fixture.pair("p3"))])
        #expect(try await relaxed.synchronousPragma() == "1")
    }

    @Test func insertedPairSurvivesRestartWithBothDevices() async throws {
        let record = Fixture.pair("p1")
        try await RelayStore(path: path).commit([.insertPair(record)])

        let loaded = try await reload(path)
        #expect(loaded == [PairSnapshot(record: record, directions: [.phone: .init(), .watch: .init()])])
    }

    @Test func reinsertedPairReplacesItsDevices() async throws {
        var record = Fixture.pair("p1")
        let store = try RelayStore(path: path)
        try await store.commit([.insertPair(record)])
        record.watch = DeviceRecord(id: DeviceID("new-watch"), role: .watch, name: "New", tokenHash: "ab")
        try await store.commit([.insertPair(record)])

        #expect(try snapshot("p1", in: await reload(path)).record == record)
    }

    @Test func everyMutationRoundTripsThroughARestart() async throws {
        let p = PairID("p1")
        let context = Fixture.deliver("ctx-2", seq: 7, from: .phone)
        let mutations: [StoreMutation] = [
            .insertPair(Fixture.pair("p1")),
            .insertItem(p, direction: .phone, Fixture.item("a", mode: .context)),
            .insertItem(p, direction: .phone, Fixture.item("b")),
            .insertItem(p, direction: .watch, Fixture.item("w1", mode: .complication, seq: 3)),
            .insertItem(p, direction: .phone, Fixture.item("c")),
            .setItemSeq(p, direction: .phone, sendID: "b", seq: 5),
            .deleteItems(p, direction: .phone, sendIDs: ["a"]),
            .setLastSentContext(p, direction: .phone, context),
            .setSeqReserved(p, direction: .phone, 64),
            .setSeqReserved(p, direction: .watch, 128),
            .addComplicationUse(p, Fixture.now.adding(milliseconds: -Fixture.hour)),
            .addComplicationUse(p, Fixture.now),
            .appendPendingTransferred(p, direction: .watch, ids: ["x"]),
            .appendPendingTransferred(p, direction: .watch, ids: ["y"]),
            .recordFinished(p, direction: .phone, sendIDs: ["a", "old-1"]),
            .recordCancelled(p, direction: .phone, sendID: "gone-1"),
            .recordFinished(p, direction: .phone, sendIDs: ["old-2"]),
        ]
        try await RelayStore(path: path).commit(mutations)

        let loaded = try snapshot("p1", in: await reload(path))
        let phone = DirectionSnapshot(
            items: [Fixture.item("b", seq: 5), Fixture.item("c")], lastSentContext: context, seqReserved: 64,
            pendingTransferred: [], finishedIDs: ["a", "old-1", "gone-1", "old-2"], cancelledIDs: ["gone-1"])
        let watch = DirectionSnapshot(
            items: [Fixture.item("w1", mode: .complication, seq: 3)], seqReserved: 128, pendingTransferred: ["x", "y"])
        #expect(loaded.directions[.phone] == phone)
        #expect(loaded.directions[.watch] == watch)
        #expect(loaded.complicationUses == [Fixture.now.adding(milliseconds: -Fixture.hour), Fixture.now])
        #expect(loaded.record == Fixture.pair("p1"))
    }

    @Test func laterUpsertsReplaceEarlierValues() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit([
            .insertPair(Fixture.pair("p1")),
            .setLastSentContext(p, direction: .watch, Fixture.deliver("c1", seq: 1, from: .watch)),
            .appendPendingTransferred(p, direction: .phone, ids: ["1", "2", "3"]),
            .setSeqReserved(p, direction: .phone, 10),
        ])
        try await store.commit([
            .setLastSentContext(p, direction: .watch, Fixture.deliver("c2", seq: 2, from: .watch)),
            .clearPendingTransferred(p, direction: .phone),
            .appendPendingTransferred(p, direction: .watch, ids: ["4"]),
            .setSeqReserved(p, direction: .phone, 20),
        ])

        let loaded = try snapshot("p1", in: await reload(path))
        #expect(loaded.directions[.watch]?.lastSentContext == Fixture.deliver("c2", seq: 2, from: .watch))
        #expect(loaded.directions[.phone]?.pendingTransferred == [])
        #expect(loaded.directions[.watch]?.pendingTransferred == ["4"])
        #expect(loaded.directions[.phone]?.seqReserved == 20)
    }

    @Test func idListsKeepEveryCharacterAndTheirOrder() async throws {
        // Lists of ids are bound as one JSON array (json_each); ids JSON must escape, non-ASCII
        // ids, duplicates, and an id with a NUL (which takes the statement-per-id path) all come back.
        let p = PairID("p1")
        let odd = ["quote\"d", "back\\slash", "tab\tnew\nline", "é😀", "\u{2028}", "[\"x\"]", "a,b", "ctl\u{1}"]
        let withNUL = ["nul\u{0}id", "plain"]
        let store = try RelayStore(path: path)
        try await store.commit(
            [.insertPair(Fixture.pair("p1"))] + (odd + withNUL + ["keep"]).map { .insertItem(p, direction: .phone, Fixture.item($0)) })
        try await store.commit([
            .deleteItems(p, direction: .phone, sendIDs: odd), .deleteItems(p, direction: .phone, sendIDs: withNUL),
            .recordFinished(p, direction: .phone, sendIDs: odd + ["dup", "dup"]),
            .recordFinished(p, direction: .phone, sendIDs: withNUL),
            .appendPendingTransferred(p, direction: .phone, ids: odd), .appendPendingTransferred(p, direction: .phone, ids: withNUL),
        ])

        let loaded = try snapshot("p1", in: await reload(path))
        #expect(sendIDs(loaded, .phone) == ["keep"])
        #expect(loaded.directions[.phone]?.finishedIDs == odd + ["dup", "dup"] + withNUL)
        #expect(loaded.directions[.phone]?.pendingTransferred == odd + withNUL)
    }

    // MARK: - Order and pruning

    @Test func itemsKeepAcceptanceOrderAcrossDeletesAndBatches() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        var expected: [String] = []
        try await store.commit([.insertPair(Fixture.pair("p1"))])
        for batch in 0..<5 {
            let ids = (0..<40).map { "b\(batch)-\($0)" }
            expected += ids
            try await store.commit(
                ids.flatMap { id -> [StoreMutation] in
                    [
                        .insertItem(p, direction: .phone, Fixture.item(id)),
                        .insertItem(p, direction: .watch, Fixture.item("w-" + id)),
                    ]
                })
            // Delete the newest item too, so a reused rowid would show up as a reordering.
            let doomed = [ids[3], ids[17], ids[39]]
            expected.removeAll { doomed.contains($0) }
            try await store.commit([.deleteItems(p, direction: .phone, sendIDs: doomed)])
        }

        let loaded = try snapshot("p1", in: await reload(path))
        #expect(sendIDs(loaded, .phone) == expected)
        #expect(sendIDs(loaded, .watch).count == 200)
        #expect(try await store.stats().queuedItems == expected.count + 200)
    }

    @Test func finishedIDsKeepTheMostRecent1024() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        let first = (0..<1000).map { "f\($0)" }
        let second = (1000..<1100).map { "f\($0)" }
        try await store.commit([
            .insertPair(Fixture.pair("p1")), .recordCancelled(p, direction: .watch, sendID: "c-old"),
            .recordFinished(p, direction: .watch, sendIDs: first),
        ])
        try await store.commit([.recordFinished(p, direction: .watch, sendIDs: second)])
        try await store.commit([.recordFinished(p, direction: .phone, sendIDs: ["only"])])
        try await store.commit([.recordCancelled(p, direction: .watch, sendID: "c-new")])

        let loaded = try snapshot("p1", in: await reload(path))
        #expect(loaded.directions[.watch]?.finishedIDs == Array((["c-old"] + first + second + ["c-new"]).suffix(1024)))
        #expect(loaded.directions[.watch]?.cancelledIDs == ["c-new"], "a cancelled id goes with its finished row")
        #expect(loaded.directions[.phone]?.finishedIDs == ["only"])
        let stored = try await store.scalar("SELECT count(*) FROM finished")
        #expect(stored == 1025)
    }

    @Test func aRunningStorePrunesFinishedIDsInStepsAndALoadTrimsTheRest() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        let limit = RelayStoreSchema.finishedLimit, step = RelayStoreSchema.finishedPruneEvery
        try await store.commit([.insertPair(Fixture.pair("p1"))])
        let ids = (0..<(limit + step)).map { "f\($0)" }
        // In acks of 16 (as the benchmark's watch sends them), up to one short of a step past the limit.
        var next = 0
        while next < limit + step - 1 {
            let end = min(next + 16, limit + step - 1)
            try await store.commit([.recordFinished(p, direction: .watch, sendIDs: Array(ids[next..<end]))])
            next = end
        }
        #expect(try await store.scalar("SELECT count(*) FROM finished") == Int64(limit + step - 1))
        // The other direction counts on its own.
        try await store.commit([.recordFinished(p, direction: .phone, sendIDs: ["only"])])
        // The step's last id prunes the direction back to the limit.
        try await store.commit([.recordFinished(p, direction: .watch, sendIDs: [ids.last!])])
        #expect(try await store.scalar("SELECT count(*) FROM finished") == Int64(limit + 1))
        #expect(try snapshot("p1", in: await reload(path)).directions[.watch]?.finishedIDs == Array(ids.suffix(limit)))

        // Left over the limit by a running store, then trimmed by the next load, in the file too.
        try await store.commit([.recordFinished(p, direction: .watch, sendIDs: ["g0", "g1", "g2"])])
        #expect(try await store.scalar("SELECT count(*) FROM finished") == Int64(limit + 4))
        let loaded = try snapshot("p1", in: await reload(path))
        #expect(loaded.directions[.watch]?.finishedIDs == Array((ids + ["g0", "g1", "g2"]).suffix(limit)))
        #expect(loaded.directions[.phone]?.finishedIDs == ["only"])
        #expect(try await store.scalar("SELECT count(*) FROM finished") == Int64(limit + 1))
    }

    @Test func finishedIDsCountTowardAPruneOnlyWhereTheyWereStored() throws {
        let storage = try SQLiteRelayStorage(path: path)
        let (p, gone) = (PairID("p1"), PairID("gone"))
        try storage.apply(
            [
                .insertPair(Fixture.pair("p1")), .recordFinished(p, direction: .watch, sendIDs: ["a", "b"]),
                .recordFinished(gone, direction: .watch, sendIDs: ["c", "d"]),
                .recordFinished(gone, direction: .phone, sendIDs: ["e"]),
            ], urgent: true)
        #expect(storage.unprunedFinished == [.init(pair: p, direction: .watch): 2])
        try storage.apply([.deletePair(p)], urgent: true)
        #expect(storage.unprunedFinished.isEmpty)
    }

    @Test func complicationUsesOlderThan24HoursArePruned() async throws {
        let p = PairID("p1")
        let times: [Int64] = [-25, -24, -23, -1].map { $0 * Fixture.hour }
        try await RelayStore(path: path).commit(
            [.insertPair(Fixture.pair("p1"))]
                + times.map { .addComplicationUse(p, Fixture.now.adding(milliseconds: $0)) })

        let loaded = try snapshot("p1", in: await reload(path))
        #expect(loaded.complicationUses == [-23, -1].map { Fixture.now.adding(milliseconds: $0 * Fixture.hour) })
        // Pruned rows are gone, not merely hidden: a load "two hours earlier" cannot see them.
        let earlier = try snapshot(
            "p1", in: await reload(path, now: Fixture.now.adding(milliseconds: -2 * Fixture.hour)))
        #expect(earlier.complicationUses.count == 2)
    }

    // MARK: - Pairs going away

    @Test func deletePairCascadesToEverything() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit([
            .insertPair(Fixture.pair("p1")), .insertPair(Fixture.pair("p2")),
            .insertItem(p, direction: .phone, Fixture.item("a")),
            .insertItem(PairID("p2"), direction: .phone, Fixture.item("kept")),
            .setLastSentContext(p, direction: .phone, Fixture.deliver("c", seq: 1, from: .phone)),
            .setSeqReserved(p, direction: .watch, 9), .addComplicationUse(p, Fixture.now),
            .appendPendingTransferred(p, direction: .watch, ids: ["t"]),
            .recordFinished(p, direction: .phone, sendIDs: ["f"]),
        ])
        try await store.commit([
            .insertItem(p, direction: .watch, Fixture.item("sent-later")),
            .setItemSeq(p, direction: .watch, sendID: "sent-later", seq: 4),
            .setItemSeq(PairID("p2"), direction: .phone, sendID: "kept", seq: 2),
        ])
        try await store.commit([.deletePair(p)])

        let loaded = try await reload(path)
        #expect(loaded.map(\.record.id) == [PairID("p2")])
        for table in ["devices", "items", "directions", "finished", "complication_uses"] {
            let rows = try await store.scalar("SELECT count(*) FROM \(table) WHERE pair_id = 'p1'")
            #expect(rows == 0, "table \(table)")
        }
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 1, "only p2's item keeps its seq row")
        #expect(loaded.first?.directions[.phone]?.items == [Fixture.item("kept", seq: 2)])
        #expect(try await store.stats() == (pairs: 1, queuedItems: 1))
    }

    /// An item sent after the commit that stored it gets its seq as a row of its own; deleting
    /// the item deletes that row, one at a time or many at once.
    @Test func seqsOfItemsSentLaterLoadBackAndGoWithTheirItems() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit(
            [.insertPair(Fixture.pair("p1"))] + ["a", "b", "c", "d"].map { .insertItem(p, direction: .phone, Fixture.item($0)) }
                + [.insertItem(p, direction: .watch, Fixture.item("a"))])
        try await store.commit(
            ["a", "b", "c", "d"].enumerated().map { .setItemSeq(p, direction: .phone, sendID: $1, seq: Int64($0 + 1)) })
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 4)
        #expect(try await store.scalar("SELECT count(*) FROM items WHERE seq IS NOT NULL") == 0, "item rows are not rewritten")

        try await store.commit([
            .deleteItems(p, direction: .phone, sendIDs: ["a"]), .deleteItems(p, direction: .phone, sendIDs: ["b", "c"]),
        ])
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 1)
        let loaded = try snapshot("p1", in: await reload(path))
        #expect(loaded.directions[.phone]?.items == [Fixture.item("d", seq: 4)])
        #expect(loaded.directions[.watch]?.items == [Fixture.item("a")], "the other direction's item of the same id stays")
    }

    /// The store finds rows through the row ids it keeps: after a load, before any load, and
    /// after a batch that failed (whose inserts and deletes were rolled back).
    @Test func rowIDsAreReadAgainAfterAFailedBatch() async throws {
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("stored")),
        ])
        // A new store that never loaded finds the item stored by another.
        let store = try RelayStore(path: path)
        var broken = Fixture.pair("p2")
        broken.watch.role = .phone
        await #expect(throws: SQLiteError.self) {
            try await store.commit([
                .deleteItems(p, direction: .phone, sendIDs: ["stored"]), .insertItem(p, direction: .phone, Fixture.item("lost")),
                .insertPair(broken),
            ])
        }
        try await store.commit([
            .setItemSeq(p, direction: .phone, sendID: "stored", seq: 9),
            .setItemSeq(p, direction: .phone, sendID: "lost", seq: 10),
        ])
        #expect(try snapshot("p1", in: await reload(path)).directions[.phone]?.items == [Fixture.item("stored", seq: 9)])
        try await store.commit([.deleteItems(p, direction: .phone, sendIDs: ["stored"])])
        #expect(try await store.stats().queuedItems == 0)
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 0)
    }

    /// A direction's map of row ids is rebuilt smaller once mostly drained and dropped once
    /// empty (a dictionary keeps its capacity); the items left are still found.
    @Test func aDrainedDirectionGivesBackItsRowIDs() throws {
        let p = PairID("p1")
        let storage = try SQLiteRelayStorage(path: path)
        let ids = (0..<6000).map { "u-\($0)" }
        try storage.apply(
            [.insertPair(Fixture.pair("p1"))] + ids.map { .insertItem(p, direction: .phone, Fixture.item($0)) }, urgent: false)
        let key = SQLiteRelayStorage.DirectionKey(pair: p, direction: .phone)
        let full = try #require(storage.itemRows?[key]?.capacity)
        try storage.apply([.deleteItems(p, direction: .phone, sendIDs: Array(ids.prefix(5900)))], urgent: false)
        let drained = try #require(storage.itemRows?[key])
        #expect(drained.count == 100)
        #expect(drained.capacity < full / 8)

        try storage.apply([.setItemSeq(p, direction: .phone, sendID: "u-5999", seq: 1)], urgent: false)
        try storage.apply([.deleteItems(p, direction: .phone, sendIDs: Array(ids.dropFirst(5900).dropLast()))], urgent: true)
        #expect(try storage.loadAll(now: Fixture.now).first?.directions[.phone]?.items == [Fixture.item("u-5999", seq: 1)])
        try storage.apply([.deleteItems(p, direction: .phone, sendIDs: ["u-5999"])], urgent: true)
        #expect(storage.itemRows?[key] == nil)
        #expect(try storage.stats().queuedItems == 0)
        #expect(try storage.scalar("SELECT count(*) FROM item_seqs") == 0)
    }

    /// `item_seqs` is not a foreign key: a seq row whose item is gone (none should be) is deleted
    /// at load, so a later item given the same row id does not inherit it.
    @Test func aLoadDeletesSeqsWhoseItemIsGone() async throws {
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("a")),
        ])
        try await RelayStore(path: path).commit([.setItemSeq(p, direction: .phone, sendID: "a", seq: 3)])
        try SQLiteDatabase(path: path).execute("INSERT INTO item_seqs(id, seq) VALUES (12345, 9)")
        let store = try RelayStore(path: path)
        #expect(try snapshot("p1", in: await store.load(now: Fixture.now)).directions[.phone]?.items == [Fixture.item("a", seq: 3)])
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 1)
    }

    /// The core never queues a send id twice in a direction; a store given one replaces the
    /// older item, so no row is left that a deletion could not find.
    @Test func anItemInsertedAgainReplacesTheOlderOne() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("x")),
            .setItemSeq(p, direction: .phone, sendID: "x", seq: 1), .insertItem(p, direction: .phone, Fixture.item("y")),
        ])
        try await store.commit([.insertItem(p, direction: .phone, Fixture.item("x", mode: .context))])
        #expect(try snapshot("p1", in: await reload(path)).directions[.phone]?.items == [
            Fixture.item("y"), Fixture.item("x", mode: .context),
        ])
        try await store.commit([.deleteItems(p, direction: .phone, sendIDs: ["x", "y"])])
        #expect(try await store.stats().queuedItems == 0)
        #expect(try await store.scalar("SELECT count(*) FROM item_seqs") == 0)
    }

    @Test func mutationsForAMissingPairAreIgnored() async throws {
        let gone = PairID("gone")
        let store = try RelayStore(path: path)
        try await store.commit([
            .insertPair(Fixture.pair("gone")), .deletePair(gone),
            .insertItem(gone, direction: .phone, Fixture.item("a")),
            .setItemSeq(gone, direction: .phone, sendID: "a", seq: 1),
            .deleteItems(gone, direction: .phone, sendIDs: ["a"]),
            .setLastSentContext(gone, direction: .phone, Fixture.deliver("c", seq: 1, from: .phone)),
            .setSeqReserved(gone, direction: .phone, 3), .addComplicationUse(gone, Fixture.now),
            .appendPendingTransferred(gone, direction: .phone, ids: ["x"]),
            .recordFinished(gone, direction: .phone, sendIDs: ["y"]),
            // Lists go through json_each in one statement each; still nothing for a missing pair.
            .appendPendingTransferred(gone, direction: .phone, ids: ["x1", "x2"]),
            .recordFinished(gone, direction: .phone, sendIDs: ["y1", "y2"]), .deletePair(gone),
            .insertPair(Fixture.pair("p2")),
        ])

        #expect(try await reload(path).map(\.record.id) == [PairID("p2")])
        for table in ["items", "item_seqs", "directions", "finished", "complication_uses", "pending_transferred"] {
            #expect(try await store.scalar("SELECT count(*) FROM \(table)") == 0, "table \(table)")
        }
    }

    @Test func wrongPairingCodesThatStillCountLoadBackInOrderAndTheOthersAreDeleted() async throws {
        let (recorded, counting) = Fixture.wrongPairingCodes()
        let store = try RelayStore(path: path)
        try await store.commit(recorded.prefix(2).map { .recordWrongPairingCode($0) }, urgent: false)
        try await store.commit(recorded.dropFirst(2).map { .recordWrongPairingCode($0) }, urgent: false)
        let count = "SELECT count(*) FROM wrong_pairing_codes"
        #expect(try await store.scalar(count) == 4, "the last insert deleted the one that stopped counting before it")

        let reopened = try RelayStore(path: path)
        #expect(try await reopened.loadWrongPairingCodes(now: Fixture.now) == counting)
        #expect(try await reopened.load(now: Fixture.now).isEmpty, "wrong codes belong to no pair")
        let later = Fixture.now.adding(milliseconds: 30_000)
        #expect(try await reopened.loadWrongPairingCodes(now: later) == [counting[0], counting[2], counting[3]])
        #expect(try await reopened.scalar(count) == 3, "the load deleted the one that stopped counting")
    }

    @Test func failingBatchLeavesNothingBehind() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit([.insertPair(Fixture.pair("p1"))])
        var broken = Fixture.pair("p2")
        broken.watch.role = .phone  // two phones violate UNIQUE(pair_id, role)

        await #expect(throws: SQLiteError.self) {
            try await store.commit([.insertItem(p, direction: .phone, Fixture.item("a")), .insertPair(broken)])
        }
        #expect(try await store.stats() == (pairs: 1, queuedItems: 0))
        try await store.commit([.insertItem(p, direction: .phone, Fixture.item("b"))])
        #expect(try sendIDs(snapshot("p1", in: await reload(path)), .phone) == ["b"])
    }

    @Test func undecodableRowIsReportedAsCorrupt() async throws {
        let p = PairID("p1")
        try await RelayStore(path: path).commit([
            .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("a")),
        ])
        try SQLiteDatabase(path: path).execute("UPDATE items SET payload = ?", [.text("{not json")])

        let error = try await #require(throws: DatabaseFileError.self) { try await reload(path) }
        #expect(error.problem == .damaged)
        #expect(error.cause.contains("a row of table 'items' cannot be read"))
    }

    @Test func largeBatchCommitsInOneTransaction() async throws {
        let p = PairID("p1")
        let store = try RelayStore(path: path)
        try await store.commit([.insertPair(Fixture.pair("p1"))])
        let batch = (0..<100).map { StoreMutation.insertItem(p, direction: .watch, Fixture.item("i\($0)")) }
        try await store.commit(batch)
        #expect(try await store.stats().queuedItems == 100)
        #expect(await store.isInTransaction == false)
    }
}
