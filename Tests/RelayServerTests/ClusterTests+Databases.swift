import Foundation
import RedisClient
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

extension ClusterTests {
    /// `--store redis://HOST:PORT/DB` keeps a cluster's keys in its database, but Redis pub/sub
    /// ignores databases: two clusters on one Redis (staging on /1, production on /2, both with
    /// the runbook's node ids) heard each other's forwarding, and a leader of one served the
    /// clients of the other's edge.
    @Test func clustersOnTwoDatabasesOfOneRedisDoNotHearEachOther() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        @Sendable func node(_ id: String, database: Int) async throws -> RelayServer {
            try await RelayServer.startForTest(in: dir.path + "/\(database)-\(id)") {
                $0.redis = RedisEndpoint(host: "127.0.0.1", port: redis.port, database: database)
                $0.cluster = ClusterConfiguration(nodeID: id, leaseTTLMilliseconds: Cluster.leaseTTL)
            }
        }
        let a1 = try await node("a", database: 1)
        let b1 = try await node("b", database: 1)
        let a2 = try await node("a", database: 2)
        let phone = try await TestDevice.connect(b1.url, clients: clients, role: .phone, name: "Test phone")
        try await phone.hello()
        phone.send(.pairBegin(Request(id: "pb-1")))
        guard case .pairCode = try await phone.next(Self.wait) else { throw TestFailure("pair.code") }
        await #expect(throws: (any Error).self, "one answer to one request, from the phone's own cluster") {
            _ = try await phone.next(1)
        }
        #expect(await a1.stats.connections == 1)
        #expect(await a2.stats.connections == 0, "the other database's leader never saw the phone")
        await clients.shutdown()
        for node in [b1, a2, a1] { await node.shutdown() }
        await redis.stop()
    }
}
