import Foundation
import RedisClient
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

extension ClusterTests {
    /// A forwarded connection's frames cross Redis on the node's publishing connection. When
    /// that connection breaks while the subscriptions stay up (an idle client dropped by Redis's
    /// `timeout`, `CLIENT KILL`, a write timeout), the publishes of that moment are lost and the
    /// next ones go out on a new connection: a `deliver` went missing in the middle, the watch
    /// acked the next seq (cumulative) and the missing item was deleted, undelivered. The node
    /// must treat a failed publish as a broken link: close the forwarded clients with 1001, so
    /// they resume and get what was lost, in order.
    @Test func aPublishLostToABrokenConnectionIsNotSkippedButResumed() async throws {
        let pair = try await InProcessPair.start()
        let (redis, clients, a, b, phone, watch) = (pair.redis, pair.clients, pair.a, pair.b, pair.phone, pair.watch)
        phone.send(userInfo("u1"))
        guard case .accepted = try await phone.next(Self.wait) else { throw TestFailure("accepted u1") }
        guard case .deliver(let d1) = try await watch.next(Self.wait) else { throw TestFailure("deliver u1") }
        watch.send(.ack(Ack(seq: d1.seq)))

        // Every plain connection of both nodes is cut (not the subscriptions): the leader's next
        // PUBLISH, u2's deliver to b, fails; u3's goes out on a new connection.
        let admin = RedisClient(endpoint: redis.endpoint)
        let killed = await admin.execute([RedisCommand("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")])[0]
        #expect(((try? killed.get())?.integer ?? 0) > 0, "\(killed)")
        for id in ["u2", "u3"] {
            phone.send(userInfo(id))
            while true {
                if case .accepted(let accepted) = try await phone.next(Self.wait), accepted.re == id { break }
            }
        }

        var current = watch
        var lastSeq = d1.seq
        var delivered: [String] = []
        while !delivered.contains("u3") {
            do {
                guard case .deliver(let d) = try await current.next(Self.wait) else { continue }
                if d.seq > lastSeq {
                    delivered.append(d.id)
                    lastSeq = d.seq
                }
                current.send(.ack(Ack(seq: d.seq)))
            } catch {
                // Closed with 1001: resume through either node.
                current = try await Self.reconnect(
                    .watch, token: pair.watchToken, lastSeq: lastSeq, urls: [b.url, a.url], clients: clients)
            }
        }
        #expect(delivered == ["u2", "u3"], "u2 was accepted: it must not be skipped")
        await admin.close()
        await clients.shutdown()
        await b.shutdown()
        await a.shutdown()
        await redis.stop()
    }
}
