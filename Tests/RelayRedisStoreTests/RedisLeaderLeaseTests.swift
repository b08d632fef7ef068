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

    /// `wr:applied` names each store instance that applied a batch, so a retry after a lost reply
    /// is applied once. It grew by one entry per leadership, for ever; a leader's first batch
    /// now leaves only its own (every earlier leader is fenced: none can apply one again).
    @Test func eachLeadershipLeavesOneEntryInTheAppliedHash() async throws {
        let redis = try await RedisServerProcess.start()
        let client = RedisClient(endpoint: redis.endpoint)
        let lease = RedisLeaderLease(client: client, node: "a", ttlMilliseconds: 60_000)
        for round in 1...3 {
            let held = try lease.acquire()
            let store = RedisRelayStorage(endpoint: redis.endpoint, fencingEpoch: held.epoch)
            try store.apply([.insertPair(Fixture.pair("p\(round)"))], urgent: true)
            try store.apply([.insertItem(PairID("p\(round)"), direction: .phone, Fixture.item("s\(round)"))], urgent: true)
            let entries = try await client.execute([RedisCommand("HLEN", "wr:applied")])[0].get()
            #expect(entries.integer == 1, "round \(round): \(entries)")
            try lease.release(held)
        }
        await client.close()
        await redis.stop()
    }

    /// A leader acts on its lease for at most `validity` after sending the call Redis confirmed,
    /// which is a quarter shorter than the TTL Redis counts from later: it stops before Redis can
    /// have let the lease expire. It renews twice within that time (one failed renewal is
    /// retried), and its client gives up a stalled read before the validity ends (it used to
    /// wait 2 s on a 1 s lease).
    @Test(arguments: [100, 600, 1000, 1500, 5000, 600_000])
    func aLeaderMayActOnItsLeaseOnlyForLessThanItsTTL(ttl: Int) {
        let lease = RedisLeaderLease(
            client: RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1")), node: "a", ttlMilliseconds: ttl)
        let ttlDuration = Duration.milliseconds(ttl)
        #expect(lease.validity <= ttlDuration - ttlDuration / 4)
        #expect(lease.renewalInterval * 2 < lease.validity)
        #expect(.milliseconds(RedisLeaderLease.clientTimeoutMilliseconds(ttlMilliseconds: ttl)) < lease.validity)
    }

    @Test func nodeIDsAreCheckedBecauseTheyNameKeysAndChannels() {
        #expect(RedisLeaderLease.validNodeID("node-1_A"))
        #expect(!RedisLeaderLease.validNodeID(""))
        #expect(!RedisLeaderLease.validNodeID("a:b"))
        #expect(!RedisLeaderLease.validNodeID("a b"))
        #expect(!RedisLeaderLease.validNodeID(String(repeating: "x", count: 65)))
    }
}
