import RedisClient
import RelayCore
import RelayProtocol
import RelayStore
import TestSupport
import Testing

@testable import RelayRedisStore

/// The Redis store against a real `redis-server` (appendfsync always): every batch read back
/// by a new store instance (a restart of the relay), with SQLite's store as the reference.
@Suite(.timeLimit(.minutes(3)))
struct RedisRelayStorageTests {
    @Test func newStoreLoadsNothing() async throws {
        let redis = try await RedisServerProcess.start()
        #expect(try RedisRelayStorage(endpoint: redis.endpoint).loadAll(now: Fixture.now).isEmpty)
        await redis.stop()
    }

    @Test func theIndexLeavesUnsentPayloadsInRedisAndTheyReadBackByID() async throws {
        let redis = try await RedisServerProcess.start()
        let storage = RedisRelayStorage(endpoint: redis.endpoint)
        let p = PairID("p1")
        let unsent = Fixture.item("a")
        try storage.apply(
            [
                .insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, unsent),
                .insertItem(p, direction: .phone, Fixture.item("b", seq: 2)),
            ], urgent: true)
        let items = try #require(try storage.loadIndex(now: Fixture.now).first?.directions[.phone]?.items)
        #expect(items.map(\.isPayloadLoaded) == [false, true], "only the sent item keeps its payload")
        #expect(items.first?.size == unsent.size)
        let read = try storage.loadPayloads(p, direction: .phone, sendIDs: ["a", "gone"])
        #expect(read == [ExactID("a"): unsent.payload], "an id not stored is left out")
        #expect(try storage.loadPayloads(PairID("nope"), direction: .watch, sendIDs: ["a"]).isEmpty)
        await redis.stop()
    }

    @Test func everyMutationLoadsBackAsFromSQLite() async throws {
        let p = PairID("p1")
        var renamed = Fixture.pair("p1")
        // Its app uninstalled (PROTOCOL.md §7.1): the flag is stored as the rest of the record.
        renamed.watch = DeviceRecord(id: DeviceID("new-watch"), role: .watch, name: "New", tokenHash: "ab", appInstalled: false)
        let batches: [[StoreMutation]] = [
            [.insertPair(Fixture.pair("p1")), .insertPair(Fixture.pair("p0", createdAt: Fixture.now.adding(milliseconds: -5)))],
            [
                .insertItem(p, direction: .phone, Fixture.item("a", mode: .context)),
                .insertItem(p, direction: .phone, Fixture.item("b")),
                .insertItem(p, direction: .watch, Fixture.item("w1", mode: .complication, seq: 3)),
                .insertItem(p, direction: .phone, Fixture.item("c")),
                .setItemSeq(p, direction: .phone, sendID: "b", seq: 5),
                .setItemSeq(p, direction: .phone, sendID: "never-queued", seq: 6),
                .deleteItems(p, direction: .phone, sendIDs: ["a"]),
                .setLastSentContext(p, direction: .phone, Fixture.deliver("ctx-2", seq: 7, from: .phone)),
                .setSeqReserved(p, direction: .phone, 64), .setSeqReserved(p, direction: .watch, 128),
                .addComplicationUse(p, Fixture.now.adding(milliseconds: -25 * Fixture.hour)),
                .addComplicationUse(p, Fixture.now.adding(milliseconds: -Fixture.hour)),
                .addComplicationUse(p, Fixture.now), .addComplicationUse(p, Fixture.now),
                .appendPendingTransferred(p, direction: .watch, ids: ["x"]),
                .appendPendingTransferred(p, direction: .watch, ids: ["y"]),
                .recordFinished(p, direction: .phone, sendIDs: ["a", "old-1"]),
                .recordCancelled(p, direction: .phone, sendID: "gone-1"), .recordCancelled(p, direction: .watch, sendID: "f0"),
            ],
            [
                .insertPair(renamed), .clearPendingTransferred(p, direction: .watch),
                .setLastSentContext(p, direction: .phone, Fixture.deliver("ctx-3", seq: 9, from: .phone)),
                .recordFinished(p, direction: .watch, sendIDs: (0..<1100).map { "f\($0)" }),
                .insertItem(PairID("p0"), direction: .watch, Fixture.item("p0-item")),
            ],
        ]
        let redis = try await RedisServerProcess.start()
        let reference = try SQLiteRelayStorage(path: ":memory:")
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        for batch in batches {
            try reference.apply(batch, urgent: true)
            try store.apply(batch, urgent: true)
        }
        let expected = try reference.loadAll(now: Fixture.now)
        let loaded = try RedisRelayStorage(endpoint: redis.endpoint).loadAll(now: Fixture.now)
        #expect(loaded.map(\.record.id) == [PairID("p0"), PairID("p1")])
        #expect(loaded == expected)
        #expect(loaded.last?.record.watch.appInstalled == false && loaded.last?.record.phone.appInstalled == true)
        #expect(loaded.last?.complicationUses.count == 3, "the use older than 24 h is pruned")
        await redis.stop()
    }

    /// PROTOCOL.md §3.7: a payload read back from Redis is the sender's bytes, as SQLite's store
    /// keeps them: big integers, `-0`, `1.0`, escapes, whitespace and member order. (The soak
    /// in scripts/chaos_soak.py found queued items and the last context re-encoded, key-sorted,
    /// after every restart and every read of an unsent payload.)
    @Test func storedPayloadsKeepTheSendersBytes() async throws {
        let raws = [
            #"{"kind":"big","n":18446744073709551616,"m":-0,"f":1.0,"e":1E0}"#,
            #"{"z":1, "kind":"esc","a":"\u00e9","b":"é","c":"\/","d":"\ud83d\udc99"}"#,
            "{ \"kind\" : \"ws\" ,\n\t\"a\" : [ 1 , { } ] \r\n}",
        ]
        func payload(_ raw: String) throws -> Payload { try Payload(bytes: Array(raw.utf8)) }
        let p = PairID("p1")
        let context = Deliver(
            seq: 9, mode: .context, id: "ctx", from: .phone, sentAt: Fixture.now, payload: try payload(raws[2]), wantsReply: nil)
        var batch: [StoreMutation] = [.insertPair(Fixture.pair("p1")), .setLastSentContext(p, direction: .phone, context)]
        for (i, raw) in raws.enumerated() {
            let item = QueuedItem(
                sendID: "u\(i)", mode: .userInfo, payload: try payload(raw), acceptedAt: Fixture.now, seq: i == 0 ? 3 : nil)
            batch.append(.insertItem(p, direction: .phone, item))
        }
        let redis = try await RedisServerProcess.start()
        try RedisRelayStorage(endpoint: redis.endpoint).apply(batch, urgent: true)

        // A new store instance: the relay restarted.
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        let direction = try #require(try store.loadAll(now: Fixture.now).first?.directions[.phone])
        #expect(direction.items.map { String(decoding: $0.payload.bytes, as: UTF8.self) } == raws)
        #expect(direction.lastSentContext.map { String(decoding: $0.payload.bytes, as: UTF8.self) } == raws[2])
        let read = try store.loadPayloads(p, direction: .phone, sendIDs: ["u0", "u1", "u2"])
        #expect((0..<3).map { read[ExactID("u\($0)")].map { String(decoding: $0.bytes, as: UTF8.self) } } == raws)
        await redis.stop()
    }

    /// Values written before payloads kept their bytes (the payload re-encoded compact and
    /// key-sorted inside the item, the context as its `deliver`'s JSON) still load, as what
    /// they hold: a relay upgraded on a store it filled before keeps its queue.
    @Test func itemsAndContextsWrittenTheOldWayStillLoad() async throws {
        let payload = try Payload(bytes: Array(#"{"kind":"old","z":[1,2],"a":"é"}"#.utf8))
        let compact = JSONWriter.encode(payload.json)
        let p = PairID("p1")
        let context = Deliver(seq: 9, mode: .context, id: "ctx", from: .phone, sentAt: Fixture.now, payload: payload, wantsReply: nil)
        let item = QueuedItem(sendID: "u0", mode: .userInfo, payload: payload, acceptedAt: Fixture.now, seq: 3)
        let redis = try await RedisServerProcess.start()
        let writer = RedisRelayStorage(endpoint: redis.endpoint)
        try writer.apply(
            [.insertPair(Fixture.pair("p1")), .setLastSentContext(p, direction: .phone, context), .insertItem(p, direction: .phone, item)],
            urgent: true)
        // Overwritten as the store wrote them before.
        let oldItem = JSONWriter.encode(
            .object(["acceptedAt": .int(Fixture.now.millisecondsSinceEpoch), "mode": .string("userInfo"), "payload": payload.json]))
        _ = try await writer.client.execute([
            RedisCommand("HSET", "wr:pair:p1:phone:items", "u0", String(decoding: oldItem, as: UTF8.self)),
            RedisCommand("HSET", "wr:pair:p1:phone", "context", String(decoding: context.jsonBytes, as: UTF8.self)),
        ])[1].get()

        let direction = try #require(try RedisRelayStorage(endpoint: redis.endpoint).loadAll(now: Fixture.now).first?.directions[.phone])
        #expect(direction.items.map { Array($0.payload.bytes) } == [compact])
        #expect(direction.items.map(\.payload.json) == [payload.json])
        #expect(direction.items.map(\.seq) == [3])
        #expect(direction.lastSentContext.map { Array($0.payload.bytes) } == compact)
        #expect(direction.lastSentContext?.seq == 9)
        await redis.stop()
    }

    @Test func wrongPairingCodesThatStillCountLoadBackInOrderAsFromSQLite() async throws {
        let (recorded, counting) = Fixture.wrongPairingCodes()
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        let reference = try SQLiteRelayStorage(path: ":memory:")
        for batch in [recorded.prefix(2), recorded.dropFirst(2)] {
            try store.apply(batch.map { .recordWrongPairingCode($0) }, urgent: false)
            try reference.apply(batch.map { .recordWrongPairingCode($0) }, urgent: false)
        }
        func length() async throws -> Int64? {
            try await store.client.execute([RedisCommand("LLEN", "wr:pairing:wrong")])[0].get().integer
        }
        #expect(try await length() == 4, "the last write removed the one that had stopped counting, behind the head")

        let loaded = try RedisRelayStorage(endpoint: redis.endpoint).loadWrongPairingCodes(now: Fixture.now)
        #expect(loaded == counting)
        #expect(loaded == (try reference.loadWrongPairingCodes(now: Fixture.now)))
        #expect(try store.loadAll(now: Fixture.now).isEmpty, "wrong codes belong to no pair")
        let soon = Fixture.now.adding(milliseconds: 30_000)
        #expect(try store.loadWrongPairingCodes(now: soon) == [counting[0], counting[2], counting[3]])
        #expect(try await length() == 3, "the load removed the one that stopped counting by its time")

        // A new one removes those at the head that stopped counting by its time.
        let later = Fixture.now.adding(milliseconds: 2 * Fixture.hour)
        let next = WrongPairingCode(address: "192.0.2.1", at: later, countsUntil: later.adding(milliseconds: 120_000))
        try store.apply([.recordWrongPairingCode(next)], urgent: false)
        #expect(try await length() == 1)
        #expect(try store.loadWrongPairingCodes(now: later) == [next])

        _ = await store.client.execute([RedisCommand("RPUSH", "wr:pairing:wrong", "not an entry")])
        #expect {
            try store.loadWrongPairingCodes(now: later)
        } throws: { error in
            guard case .corruptValue(let key, _)? = error as? RedisRelayStorageError else { return false }
            return key == "wr:pairing:wrong"
        }
        await redis.stop()
    }

    @Test func itemsKeepAcceptanceOrderAcrossDeletesAndBatches() async throws {
        let p = PairID("p1")
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        var expected: [String] = []
        try store.apply([.insertPair(Fixture.pair("p1"))], urgent: true)
        for batch in 0..<5 {
            let ids = (0..<40).map { "b\(batch)-\($0)" }
            expected += ids
            try store.apply(ids.map { .insertItem(p, direction: .phone, Fixture.item($0)) }, urgent: true)
            let doomed = [ids[3], ids[17], ids[39]]
            expected.removeAll { doomed.contains($0) }
            try store.apply([.deleteItems(p, direction: .phone, sendIDs: doomed)], urgent: false)
        }
        let loaded = try RedisRelayStorage(endpoint: redis.endpoint).loadAll(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.items.map(\.sendID) == expected)
        await redis.stop()
    }

    @Test func deletePairRemovesEveryKeyAndLaterMutationsForItAreIgnored() async throws {
        let gone = PairID("gone")
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        try store.apply(
            [
                .insertPair(Fixture.pair("gone")), .insertItem(gone, direction: .phone, Fixture.item("a")),
                .setSeqReserved(gone, direction: .watch, 9), .addComplicationUse(gone, Fixture.now),
                .recordFinished(gone, direction: .phone, sendIDs: ["f"]), .insertPair(Fixture.pair("p2")),
            ], urgent: true)
        try store.apply(
            [
                .deletePair(gone), .insertItem(gone, direction: .phone, Fixture.item("b")),
                .setItemSeq(gone, direction: .phone, sendID: "b", seq: 1),
                .setLastSentContext(gone, direction: .phone, Fixture.deliver("c", seq: 1, from: .phone)),
                .setSeqReserved(gone, direction: .phone, 3), .addComplicationUse(gone, Fixture.now),
                .appendPendingTransferred(gone, direction: .phone, ids: ["x"]),
                .recordFinished(gone, direction: .phone, sendIDs: ["y"]),
            ], urgent: true)
        #expect(try store.loadAll(now: Fixture.now).map(\.record.id) == [PairID("p2")])
        let keys = try await store.client.execute([RedisCommand("KEYS", "*gone*")])[0].get()
        #expect(keys == .array([]), "every key of the pair is gone: \(keys)")
        await redis.stop()
    }

    @Test func aBatchNumberIsAppliedOnceEvenWhenSentTwice() async throws {
        // What a retry after a lost reply does: the same batch number again.
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let script = RedisRelayScripts.apply
        func send(_ batch: String) async throws -> RedisValue {
            try await client.execute([
                RedisCommand("EVAL", script, "0", "wr:", "node-a", batch, "1024", "", "pair", "p", "1", "pi", "pn", "pt", "1", "wi", "wn", "wt", "1",
                    "item", "p", "phone", "s1", #"{"acceptedAt":1,"mode":"userInfo","payload":{"kind":"k"}}"#, ""),
            ])[0].get()
        }
        #expect(try await send("1") == .integer(2))
        #expect(try await send("1") == .integer(0), "already applied: skipped")
        let order = try await client.execute([RedisCommand("HGET", "wr:pair:p:phone", "order")])[0].get()
        #expect(order.integer == 1, "the item was queued once")
        await client.close()
        await redis.stop()
    }

    @Test func killNineOfRedisAfterApplyLosesNothing() async throws {
        let p = PairID("p1")
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        try store.apply([.insertPair(Fixture.pair("p1"))], urgent: true)
        for i in 0..<50 {
            try store.apply([.insertItem(p, direction: .phone, Fixture.item("i\(i)"))], urgent: true)
        }
        await redis.kill9()
        try await redis.restart()
        let loaded = try RedisRelayStorage(endpoint: redis.endpoint).loadAll(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.items.map(\.sendID) == (0..<50).map { "i\($0)" })
        await redis.stop()
    }

    @Test func unreachableRedisIsAnErrorAndTheStoreRecoversWhenItIsBack() async throws {
        let p = PairID("p1")
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint, timeoutMilliseconds: 1000)
        try store.apply([.insertPair(Fixture.pair("p1"))], urgent: true)
        await redis.kill9()
        let batch: [StoreMutation] = [.insertItem(p, direction: .phone, Fixture.item("while-down"))]
        #expect {
            try store.apply(batch, urgent: true)
        } throws: { error in
            guard case .unreachable? = error as? RedisRelayStorageError else { return false }
            return true
        }
        try await redis.restart()
        try store.apply(batch, urgent: true)  // the committer's retry
        let loaded = try store.loadAll(now: Fixture.now)
        #expect(loaded.first?.directions[.phone]?.items.map(\.sendID) == ["while-down"])
        await redis.stop()
    }

    @Test func undecodableValueIsReportedAsCorrupt() async throws {
        let p = PairID("p1")
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        try store.apply([.insertPair(Fixture.pair("p1")), .insertItem(p, direction: .phone, Fixture.item("a"))], urgent: true)
        _ = await store.client.execute([RedisCommand("HSET", "wr:pair:p1:phone:items", "a", "{not json")])
        #expect {
            try store.loadAll(now: Fixture.now)
        } throws: { error in
            guard case .corruptValue(let key, _)? = error as? RedisRelayStorageError else { return false }
            return key == "wr:pair:p1:phone:items"
        }
        await redis.stop()
    }

    @Test func durabilityWarningNamesWeakerSettings() async throws {
        let redis = try await RedisServerProcess.start()
        let store = RedisRelayStorage(endpoint: redis.endpoint)
        #expect(store.durabilityWarning() == nil)
        _ = await store.client.execute([RedisCommand("CONFIG", "SET", "appendfsync", "everysec")])
        #expect(store.durabilityWarning()?.contains("appendfsync everysec") == true)
        await redis.stop()
    }
}
