import RedisClient
import RelayCore
import RelayProtocol
import TestSupport
import Testing

@testable import RelayRedisStore

/// The leader lease and the apply script's fencing against a real `redis-server`.
@Suite(.timeLimit(.minutes(2)))
struct RedisLeaderLeaseTests {
    @Test func oneNodeTakesTheLeaseAndTheOtherSeesItHeld() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let a = RedisLeaderLease(client: client, node: "node-a", ttlMilliseconds: 60_000)
        let b = RedisLeaderLease(client: client, node: "node-b", ttlMilliseconds: 60_000)
        #expect(try a.current() == nil)
        let lease = try a.acquire()
        #expect(lease == RedisLease(node: "node-a", epoch: 1))
        #expect(try b.acquire() == lease, "held: b gets a's lease back, no new epoch")
        #expect(try a.acquire() == lease)
        #expect(try a.tryAcquire() == (lease, false), "held, even under a's own id: not taken by this call")
        #expect(try b.renew(RedisLease(node: "node-b", epoch: 1)) == false)
        #expect(try a.renew(lease))
        #expect(try b.current() == lease)
        await client.close()
        await redis.stop()
    }

    @Test func anExpiredLeaseIsTakenOverWithANewEpochAndTheOldLeaderCannotRenew() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let a = RedisLeaderLease(client: client, node: "a", ttlMilliseconds: 100)
        let b = RedisLeaderLease(client: client, node: "b", ttlMilliseconds: 60_000)
        let first = try a.acquire()
        try await eventually(10, "a's lease to expire") { try b.current() == nil }
        let second = try b.acquire()
        #expect(second == RedisLease(node: "b", epoch: first.epoch + 1))
        #expect(try a.renew(first) == false, "deposed: a must step down")
        #expect(try b.current() == second)
        await client.close()
        await redis.stop()
    }

    @Test func aLeaseThatExpiredWhileNobodyTookOverIsRenewedWithItsEpoch() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let a = RedisLeaderLease(client: client, node: "a", ttlMilliseconds: 100)
        let lease = try a.acquire()
        try await eventually(10, "the lease to expire") { try a.current() == nil }
        #expect(try a.renew(lease))
        #expect(try a.current() == lease)
        await client.close()
        await redis.stop()
    }

    @Test func releaseLetsAnotherNodeTakeOverAtOnce() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let a = RedisLeaderLease(client: client, node: "a", ttlMilliseconds: 60_000)
        let b = RedisLeaderLease(client: client, node: "b", ttlMilliseconds: 60_000)
        let lease = try a.acquire()
        try b.release(RedisLease(node: "b", epoch: lease.epoch))
        #expect(try b.current() == lease, "b cannot release a's lease")
        try a.release(lease)
        #expect(try b.acquire() == RedisLease(node: "b", epoch: 2))
        await client.close()
        await redis.stop()
    }

    @Test func aDeposedLeadersBatchIsRefusedAndChangesNothing() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let a = RedisLeaderLease(client: client, node: "a", ttlMilliseconds: 100)
        let b = RedisLeaderLease(client: client, node: "b", ttlMilliseconds: 60_000)
        let first = try a.acquire()
        let oldStore = RedisRelayStorage(endpoint: redis.endpoint, fencingEpoch: first.epoch)
        try oldStore.apply([.insertPair(Fixture.pair("p1"))], urgent: true)
        try await eventually(10, "a's lease to expire") { try b.current() == nil }
        let second = try b.acquire()
        let newStore = RedisRelayStorage(endpoint: redis.endpoint, fencingEpoch: second.epoch)
        let p = PairID("p1")
        #expect {
            try oldStore.apply([.insertItem(p, direction: .phone, Fixture.item("late"))], urgent: true)
        } throws: { error in
            guard case .fenced = error as? RedisRelayStorageError else { return false }
            return true
        }
        try newStore.apply([.insertItem(p, direction: .phone, Fixture.item("new"))], urgent: true)
        let items = try #require(try newStore.loadAll(now: Fixture.now).first?.directions[.phone]?.items)
        #expect(items.map(\.sendID) == ["new"], "the deposed leader's item is not stored")
        // A store without an epoch (one node alone) is not fenced.
        try RedisRelayStorage(endpoint: redis.endpoint).apply([.insertPair(Fixture.pair("p2"))], urgent: true)
        await client.close()
        await redis.stop()
    }

    @Test func nodeIDsAreCheckedBecauseTheyNameKeysAndChannels() {
        #expect(RedisLeaderLease.validNodeID("node-1_A"))
        #expect(!RedisLeaderLease.validNodeID(""))
        #expect(!RedisLeaderLease.validNodeID("a:b"))
        #expect(!RedisLeaderLease.validNodeID("a b"))
        #expect(!RedisLeaderLease.validNodeID(String(repeating: "x", count: 65)))
    }
}
