import Foundation
import RedisClient
import RelayCore
import RelayProtocol
import RelayRedisStore
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

/// The relay on Redis when `redis-server` dies: nothing accepted is lost, the waiting clients
/// are closed with 1011 (PROTOCOL.md §2.3), and the relay recovers by itself once Redis is back.
@Suite(.timeLimit(.minutes(5)), .serialized)
struct RedisStoreFailureTests {
    @Test func redisKilledMidFlowLosesNothingAcceptedAndTheRelayRecoversWhenItIsBack() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        var server = try await RelayServer.startForTest(in: dir.path) { $0.redis = redis.endpoint }
        let (phone0, watch0, phoneToken, watchToken) = try await pairDevices(url: server.url, clients: clients)
        watch0.connection.close()
        _ = try await watch0.closed()

        // Everything the phone sent is accepted: in Redis, fsynced.
        let ids = (0..<40).map { "u\($0)" }
        var accepted = Set<String>()
        for (i, id) in ids.prefix(20).enumerated() { phone0.send(userInfo(id, i)) }
        while accepted.count < 20 {
            if case .accepted(let a) = try await phone0.next() { accepted.insert(a.re) }
        }
        // redis-server dies; what the phone sends now cannot be stored: no `accepted` for it,
        // and once the commit failed 3 times the relay closes the waiting phone with 1011.
        await redis.kill9()
        for (i, id) in ids.enumerated().dropFirst(20) { phone0.send(userInfo(id, i)) }
        #expect(try await phone0.closed(30) == 1011)
        // A device saying hello while the commit still fails (a new one needs its record
        // stored) is closed with 1011 at the committer's next failed attempt: it used to get
        // no answer at all until Redis was back (the black-box probe of docs/REDIS.md).
        let newcomer = try await TestDevice.connect(server.url, clients: clients, role: .watch, name: "New watch")
        newcomer.send(.hello(Hello(id: "h-new", role: .watch, deviceName: "New watch")))
        #expect(try await newcomer.closed(30) == 1011)

        // Redis is back (its append-only file replayed): the same relay takes the phone again.
        try await redis.restart()
        let phone1 = try await TestDevice.connect(server.url, clients: clients, role: .phone, name: "Test phone")
        try await phone1.hello(token: phoneToken)
        for (i, id) in ids.enumerated() where !accepted.contains(id) { phone1.send(userInfo(id, i)) }
        while accepted.count < ids.count {
            if case .accepted(let a) = try await phone1.next(20) { accepted.insert(a.re) }
        }
        await server.shutdown()

        // Redis dies again; a new relay (a restarted node) loads everything from it.
        await redis.kill9()
        try await redis.restart()
        server = try await RelayServer.startForTest(in: dir.path) { $0.redis = redis.endpoint }
        let watch = try await TestDevice.connect(server.url, clients: clients, role: .watch, name: "Test watch")
        try await watch.hello(token: watchToken, lastSeq: 0)
        var delivered: [String] = []
        while delivered.count < ids.count {
            guard case .deliver(let d) = try await watch.next(20) else { continue }
            delivered.append(d.id)
        }
        #expect(delivered == ids, "every accepted item, once, in FIFO order")
        await clients.shutdown()
        await server.shutdown()
        await redis.stop()
    }

    @Test func relayRefusesToStartWhileRedisIsUnreachable() async throws {
        let port = try ClosedPort()
        let dir = TemporaryDirectory()
        await #expect {
            _ = try await RelayServer.startForTest(in: dir.path) {
                $0.redis = RedisEndpoint(host: "127.0.0.1", port: port.port)
            }
        } throws: { error in
            guard case .unreachable? = error as? RedisRelayStorageError else { return false }
            return true
        }
    }

    /// docs/REDIS.md: "no Redis call blocks a cooperative-pool thread". A relay starting on a
    /// Redis that takes the connection and never answers waits out its timeouts; as many such
    /// starts as the pool has threads blocked all of them (the load ran on the caller's task),
    /// and nothing else async in the process ran meanwhile.
    @Test func startingOnARedisThatDoesNotAnswerBlocksNoCooperativeThread() async throws {
        let silent = try SilentPort()
        let dir = TemporaryDirectory()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                group.addTask {
                    _ = try? await RelayServer.startForTest(in: dir.path) {
                        $0.redis = RedisEndpoint(host: "127.0.0.1", port: silent.port)
                    }
                }
            }
            let clock = ContinuousClock()
            let slept = try await clock.measure { try await Task.sleep(for: .milliseconds(300)) }
            #expect(slept < .milliseconds(1500), "a sleep of 300 ms took \(slept): the pool was blocked")
            try await group.waitForAll()
        }
    }
}
