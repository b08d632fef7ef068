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
        let (phone, _) = try await Self.phoneWithCode(via: b1.url, clients)
        await #expect(throws: (any Error).self, "one answer to one request, from the phone's own cluster") {
            _ = try await phone.next(1)
        }
        #expect(await a1.stats.connections == 1)
        #expect(await a2.stats.connections == 0, "the other database's leader never saw the phone")
        await clients.shutdown()
        for node in [b1, a2, a1] { await node.shutdown() }
        await redis.stop()
    }

    /// `serve --store` keeps its state in the URL's database; `--db` (the SQLite file, which a
    /// user may take for the Redis database) and `--sync` were ignored without a word beside it:
    /// now they are a usage error (exit 2, as every other).
    @Test(arguments: [["--db", "2"], ["--db", "relay.db"], ["--sync", "normal"]])
    func serveOnRedisRefusesTheSQLiteOptions(sqlite: [String]) async throws {
        let redis = try await RedisServerProcess.start()
        let refused = try await StandaloneRelayTests.run(
            ["serve", "--port", "0", "--store", redis.url, "--exit-on-stdin-eof"] + sqlite, executable: watchrelayBinary)
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.err.contains("--db and --sync are for the SQLite file: they do not go with --store"), "\(refused.err)")
        #expect(refused.err.contains("redis://HOST:PORT/DB"), "\(refused.err)")
        #expect(refused.out.isEmpty, "it did not start")

        // The database is the URL's: a node on /3 leads there, and database 0 stays empty.
        let dir = TemporaryDirectory()
        let node = try await RelayProcess.start(
            db: dir.path("unused.db"), extra: ["--store", "redis://127.0.0.1:\(redis.port)/3", "--node-id", "a"])
        let three = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: redis.port, database: 3))
        #expect(try await three.execute([RedisCommand("GET", "wr:leader")])[0].get().text == "a:1")
        let zero = RedisClient(endpoint: redis.endpoint)
        #expect(try await zero.execute([RedisCommand("DBSIZE")])[0].get() == .integer(0))
        await three.close()
        await zero.close()
        await node.stop()
        await redis.stop()
    }
}
