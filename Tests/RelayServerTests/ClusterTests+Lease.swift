import Foundation
import Primitives
import RedisClient
import RelayProtocol
import RelayRedisStore
import TestSupport
import Testing
import WebSocketTransport

@testable import RelayServer

/// The leader lease's safety: a leader keeps its lease while it loads a large store, and stops
/// acting as leader before Redis can have let its lease expire (docs/REDIS.md, "Leader lease").
extension ClusterTests {
    /// The lease expired while a new leader loaded a store that took longer than the TTL to
    /// read: nothing renewed it, so a second node took it and led too (two leaders). The load is
    /// held at the loader's hook while Redis reports every change of `wr:leader`.
    @Test func aLeaderLoadingALargeStoreKeepsItsLeaseAndNoSecondNodeLeads() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let leaseEvents = try await LeaderKeyEvents.start(redis)
        let gate = LoadGate()
        @Sendable func node(_ id: String, hook: (@Sendable () -> Void)? = nil) async throws -> RelayServer {
            try await Self.leaseNode(id, redis, in: dir, loaded: hook)
        }
        // a's start returns once it leads with its state loaded: not while the load is held.
        let starting = Task { try await node("a") { gate.hold() } }
        #expect(try await leaseEvents.next(Self.wait) == "expire", "a took the lease (SET … PX)")
        try await gate.reached(Self.wait)

        // Four renewals while the load is held: more than the TTL since a took the lease (a
        // renewal every third of it), so an unrenewed lease would have expired by now.
        var renewals = 0
        while renewals < 4 {
            let event = try await leaseEvents.next(Self.wait)
            #expect(event == "expire", "the lease is only renewed while a loads, not \(event)")
            guard event == "expire" else { break }
            renewals += 1
        }
        // b's start returns after its first round: it found a leading (no new epoch).
        let b = try await node("b")
        let admin = RedisClient(endpoint: redis.endpoint)
        let state = await admin.execute([RedisCommand("GET", "wr:leader"), RedisCommand("GET", "wr:epoch")])
        #expect(try state[0].get().text == "a:1" && state[1].get().text == "1", "no second leadership: \(state)")

        gate.open()
        let a = try await starting.value
        // a leads: a phone on it and one forwarded by b both get pairing codes from its core.
        for url in [a.url, b.url] { _ = try await Self.phoneWithCode(via: url, clients) }
        let after = await admin.execute([RedisCommand("GET", "wr:epoch")])
        #expect(try after[0].get().text == "1")
        await clients.shutdown()
        await b.shutdown()
        await a.shutdown()
        await admin.close()
        await leaseEvents.close()
        await redis.stop()
    }

    /// A renewal that fails while a starting leader loads its state (its connection cut by
    /// `CLIENT KILL`: the next call on it fails, and Redis answers again at once) is retried as
    /// a running leader's is. It ended the start: the node released the lease it still held and
    /// `serve` exited with the error.
    @Test func aRenewalThatFailsWhileAStartingLeaderLoadsIsRetried() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let leaseEvents = try await LeaderKeyEvents.start(redis)
        let gate = LoadGate()
        defer { gate.open() }
        let starting = Task { try await Self.leaseNode("a", redis, in: dir) { gate.hold() } }
        #expect(try await leaseEvents.next(Self.wait) == "expire", "a took the lease (SET … PX)")
        try await gate.reached(Self.wait)

        // Every plain connection is cut, the lease's among them; then a marker on the events'
        // channel: what comes after it came after the cut.
        let admin = RedisClient(endpoint: redis.endpoint)
        let killed = await admin.execute([RedisCommand("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")])[0]
        #expect(((try? killed.get())?.integer ?? 0) > 0, "\(killed)")
        _ = await admin.execute([RedisCommand("PUBLISH", "__keyspace@0__:wr:leader", "cut")])
        while try await leaseEvents.next(Self.wait) != "cut" {}
        // A `del` here was the lease given up with the start.
        #expect(try await leaseEvents.next(Self.wait) == "expire", "the lease renewed after the failed renewal")

        gate.open()
        let a = try await starting.value
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        _ = try await Self.phoneWithCode(via: a.url, clients)
        let epoch = await admin.execute([RedisCommand("GET", "wr:epoch")])
        #expect(try epoch[0].get().text == "1", "a leads with the lease it took")
        await clients.shutdown()
        await a.shutdown()
        await admin.close()
        await leaseEvents.close()
        await redis.stop()
    }

    /// A stop while a node loaded the state it was to lead with returned with the loader thread
    /// still reading Redis (its result dropped once done): a stopped node left work running on
    /// its store. Now the stop closes the load's store, so the load fails at its next call, and
    /// returns once the loader thread is done. The store is large: its load outlasts a stop.
    @Test func aStopDuringALoadReturnsOnlyOnceTheLoaderThreadEnded() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        try await Self.storePairs(20_000, in: redis)
        let a = try await Self.leaseNode("a", redis, in: dir)
        let gate = LoadGate()
        defer { gate.open() }
        // The loader thread's id (`/proc/thread-self` is `PID/task/TID`).
        let loader = LockedState<String?>(nil)
        let b = try await Self.leaseNode("b", redis, in: dir) {
            let task = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
            loader.withLock { $0 = task?.split(separator: "/").last.map(String.init) }
            gate.hold()
        }
        // a's stop releases the lease: b takes it at its next round and starts loading.
        await a.shutdown()
        try await gate.reached(Self.takeover)

        // b stops as its load goes on.
        let stopping = Task { await b.shutdown() }
        gate.open()
        await stopping.value
        let thread = try #require(loader.withLock { $0 })
        let comm = try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8)
        #expect(comm == nil, "the loader thread (\(comm ?? "")) still ran after the node's stop returned")
        await redis.stop()
    }

    /// The lease client's read timeout (2 s) was longer than the lease (1 s in tests), and a
    /// renewal that failed left the leader leading: a leader whose Redis stalled kept serving
    /// its clients past the moment Redis let its lease expire. Now it steps down once no
    /// renewal was confirmed within three quarters of the TTL after it was sent, while Redis
    /// still stands still, and leads again with a new epoch when Redis is back.
    @Test func aLeaderWhoseRenewalsStallStepsDownWhileRedisStandsStill() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let a = try await RelayServer.startForTest(in: dir.path) {
            $0.redis = redis.endpoint
            $0.cluster = ClusterConfiguration(nodeID: "a", leaseTTLMilliseconds: Cluster.leaseTTL)
        }
        let (phone, _) = try await Self.phoneWithCode(via: a.url, clients)

        let pid = try #require(redis.processIdentifier)
        try await stopAndWait(pid, what: "redis-server")
        let closed: UInt16?
        do {
            closed = try await phone.closed(Self.wait)
        } catch {
            kill(pid, SIGCONT)
            throw error
        }
        kill(pid, SIGCONT)
        #expect(closed == 1001, "the leader stepped down while Redis stood still")

        // Redis is back: a takes a new lease (the old one expired or is released) and leads.
        let admin = RedisClient(endpoint: redis.endpoint)
        try await eventually(Self.takeover, "a to lead again with a new epoch") {
            (try? await admin.execute([RedisCommand("GET", "wr:leader")])[0].get())?.text == "a:2"
        }
        try await eventually(Self.takeover, "a to serve a phone again") {
            // Closed with 1001 until the new engine is handed over.
            guard let again = try? await TestDevice.connect(a.url, clients: clients, role: .phone, name: "Test phone"),
                (try? await again.hello()) != nil
            else { return false }
            again.send(.pairBegin(Request(id: "pb-2")))
            guard case .pairCode? = try? await again.next(Self.wait) else { return false }
            return true
        }
        await clients.shutdown()
        await a.shutdown()
        await admin.close()
        await redis.stop()
    }
}

extension ClusterTests {
    /// An in-process cluster node `id` on `redis` whose loader thread runs `loaded` as it starts,
    /// before it reads the state (``RelayServerConfiguration/clusterLoadHook``).
    static func leaseNode(
        _ id: String, _ redis: RedisServerProcess, in dir: TemporaryDirectory, loaded: (@Sendable () -> Void)? = nil
    ) async throws -> RelayServer {
        try await RelayServer.startForTest(in: dir.path) {
            $0.redis = redis.endpoint
            $0.cluster = ClusterConfiguration(nodeID: id, leaseTTLMilliseconds: Cluster.leaseTTL)
            $0.clusterLoadHook = loaded
        }
    }
}

extension ClusterTests {
    /// Stores `count` pairs in `redis` as a relay does, in batches, on a thread of its own (a
    /// store's calls block their thread).
    static func storePairs(_ count: Int, in redis: RedisServerProcess) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let writer = Thread {
                done.resume(
                    with: Result {
                        let storage = RedisRelayStorage(endpoint: redis.endpoint)
                        for start in stride(from: 0, to: count, by: 1000) {
                            let pairs = (start..<min(count, start + 1000)).map { StoreFixture.pair("p\($0)") }
                            try storage.apply(pairs.map { .insertPair($0) }, urgent: false)
                        }
                    })
            }
            writer.start()
        }
    }
}

/// Holds a cluster node's load at its hook until the test opens it.
private final class LoadGate: Sendable {
    private let state = LockedState<(reached: Bool, open: Bool)>((false, false))
    private let condition = NSCondition()

    /// Blocks the loader thread (a thread of the node's own) until ``open()``.
    func hold() {
        state.withLock { $0.reached = true }
        condition.lock()
        while !state.withLock({ $0.open }) { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        state.withLock { $0.open = true }
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a load is held at the hook.
    func reached(_ seconds: Double) async throws {
        try await eventually(seconds, "the load to reach its hook") { self.state.withLock { $0.reached } }
    }
}

/// Redis's keyspace events of `wr:leader` (`expire` for a lease taken or renewed, `expired`,
/// `del`), in order, through pub/sub.
private final class LeaderKeyEvents: Sendable {
    private let subscriber: RedisSubscriber
    private let events: AsyncStream<String>.Iterator.Box

    private init(subscriber: RedisSubscriber, events: AsyncStream<String>.Iterator.Box) {
        self.subscriber = subscriber
        self.events = events
    }

    /// Turns keyspace events on (generic commands and expiries) and subscribes; returns once subscribed.
    static func start(_ redis: RedisServerProcess) async throws -> LeaderKeyEvents {
        let admin = RedisClient(endpoint: redis.endpoint)
        _ = try await admin.execute([RedisCommand("CONFIG", "SET", "notify-keyspace-events", "Kgx")])[0].get()
        await admin.close()
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        let subscriber = RedisSubscriber(endpoint: redis.endpoint, channels: ["__keyspace@0__:wr:leader"]) { event in
            switch event {
            case .subscribed: sink.yield("subscribed")
            case .message(_, let payload): sink.yield(String(decoding: payload, as: UTF8.self))
            case .disconnected(let error): sink.yield("disconnected: \(error)")
            }
        }
        let events = LeaderKeyEvents(subscriber: subscriber, events: .init(stream.makeAsyncIterator()))
        guard try await events.next(ClusterTests.wait) == "subscribed" else { throw TestFailure("keyspace subscription") }
        return events
    }

    func next(_ seconds: Double) async throws -> String {
        let box = events
        guard let event = try await withTimeout(seconds, "a keyspace event of wr:leader", { await box.next() }) else {
            throw TestFailure("the keyspace events ended")
        }
        return event
    }

    func close() async { await subscriber.close() }
}
