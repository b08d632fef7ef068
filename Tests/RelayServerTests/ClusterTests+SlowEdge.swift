import Foundation
import RedisClient
import RelayProtocol
import TestSupport
import Testing

extension ClusterTests {
    /// docs/REDIS.md, "A slow edge": the leader publishes to an edge without waiting, Redis cuts
    /// off a subscriber past `client-output-buffer-limit pubsub`, and the edge, seeing its
    /// subscription break, closes its forwarded clients with 1001; they reconnect and resume
    /// with nothing lost or doubled, and the leader stops counting them as connected.
    ///
    /// Several pairs, not one: while the edge stands still no ack comes back, so the leader
    /// publishes at most one delivery window (1 MiB) per forwarded watch, and the kernel's
    /// socket buffers (Redis's send buffer grows to `tcp_wmem`'s maximum, 4 MiB by default, the
    /// edge's receive buffer holds `tcp_rmem`'s default) take that much before Redis's own output
    /// buffer, the one the limit counts, holds a byte. One window per pair past those, and 4 more.
    @Test func aSlowEdgeCutOffByRedisClosesItsClientsWith1001AndTheyResumeLosingNothing() async throws {
        let cluster = try await Cluster(["a", "b"], debugLogs: true)
        let buffered = Self.tcpBufferBytes("tcp_wmem", 2) + Self.tcpBufferBytes("tcp_rmem", 1) + 65536
        // Phones on the leader, watches forwarded by b: every delivery is a PUBLISH to b.
        var pairs: [(phone: TestDevice, watch: TestDevice, watchToken: String, ids: [String])] = []
        for p in 0..<(buffered >> 20) + 4 {
            let (phone, watch, _, watchToken) = try await Self.pair(cluster, phone: "a", watch: "b")
            pairs.append((phone, watch, watchToken, (0..<72).map { "p\(p)-\($0)" }))
        }
        let redis = RedisClient(endpoint: cluster.redis.endpoint)
        @Sendable func subscribersOfB() async -> Int64? {
            let reply = await redis.execute([RedisCommand("PUBSUB", "NUMSUB", "wr:node:b")])[0]
            return (try? reply.get())?.elements?.last?.integer
        }
        #expect(await subscribersOfB() == 1)
        let limit = await redis.execute([
            RedisCommand("CONFIG", "SET", "client-output-buffer-limit", "pubsub 65536 32768 1")
        ])[0]
        #expect((try? limit.get()) == .status("OK"), "\(limit)")

        // b stands still while each phone sends 72 × 16 KiB: the leader accepts them all and
        // publishes a window's worth per watch to b (8 MiB here), past the buffers and the limit.
        let b = cluster.nodes["b"]!.process.processIdentifier
        try await cluster.nodes["b"]!.freeze()
        do {
            defer { kill(b, SIGCONT) }
            let filler = JSONValue.string(String(repeating: "x", count: 16 * 1024))
            for pair in pairs {
                for (i, id) in pair.ids.enumerated() {
                    let payload = Payload(kind: "test.item", ["n": .int(Int64(i)), "filler": filler])
                    pair.phone.send(.send(Send(id: id, mode: .userInfo, payload: payload)))
                }
            }
            for pair in pairs {
                var accepted: [String] = []
                while accepted.count < pair.ids.count {
                    if case .accepted(let a) = try await pair.phone.next(Self.wait) { accepted.append(a.re) }
                }
                #expect(accepted == pair.ids, "the leader accepts without waiting for the edge")
            }
            try await eventually(Self.wait, "redis to cut off the stopped edge's subscription") {
                await subscribersOfB() == 0
            }
        }

        // b reads what reached its socket, then the end of it: each watch gets some deliveries
        // and then 1001; the leader hears that it left (its phone sees it go).
        var seen: [[Int64: String]] = []
        for pair in pairs {
            var bySeq: [Int64: String] = [:]
            var end = ""
            while end.isEmpty {
                do {
                    if case .deliver(let d) = try await pair.watch.next(Self.wait) {
                        if let before = bySeq[d.seq] { #expect(before == d.id, "one seq, one item") }
                        bySeq[d.seq] = d.id
                        pair.watch.send(.ack(Ack(seq: d.seq)))
                    }
                } catch { end = String(describing: error) }
            }
            #expect(end.contains("closed (1001 relay leader changing)"), "\(end)")
            seen.append(bySeq)
        }
        #expect(cluster.log("b").contains("cluster subscription lost"), "\(cluster.log("b"))")
        for pair in pairs {
            var presence: PeerChange?
            while presence == nil {
                do {
                    if case .peer(let p) = try await pair.phone.next(Self.wait) { presence = p }
                } catch {
                    throw TestFailure("the leader never told the phone that its watch left b (\(error))")
                }
            }
            #expect(presence?.connected == false, "the phone sees its watch go")
            // So a message to it fails at once, not lost in a channel nobody reads (§8.2).
            pair.phone.send(.send(Send(id: "m-away", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
            while true {
                let frame = try await pair.phone.next(Self.wait)
                if case .error(let e) = frame, e.re == "m-away" {
                    #expect(e.code == .notReachable)
                    break
                }
                if case .accepted(let a) = frame, a.re == "m-away" {
                    Issue.record("a message to a watch that left was accepted")
                    break
                }
            }
        }
        try await eventually(Self.wait, "b to subscribe again") { await subscribersOfB() == 1 }

        // Each watch comes back through the same edge and gets the rest, each item once, in order.
        var watches: [TestDevice] = []
        for (pair, bySeq) in zip(pairs, seen) {
            let watch = try await Self.reconnect(
                .watch, token: pair.watchToken, lastSeq: bySeq.keys.max(), cluster: cluster, nodes: ["b"])
            let delivered = try await Self.receive(
                pair.ids.count, watch: watch, token: pair.watchToken, cluster: cluster, nodes: ["b"], seen: bySeq)
            #expect(delivered == pair.ids, "every accepted item once, in FIFO order, across the cut-off")
            watches.append(watch)
        }

        // Both nodes keep serving: a message and its reply cross them again, and the acks each
        // watch sent before it (the same edge, so the same order) left nothing outstanding.
        for (pair, watch) in zip(pairs, watches) {
            watch.send(.send(Send(id: "m-after", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
            while true {
                if case .deliver(let m) = try await pair.phone.next(Self.wait) {
                    #expect(m.id == "m-after")
                    break
                }
            }
            pair.phone.send(.reply(ClientReply(id: "r-after", re: "m-after", payload: Payload(kind: "a"))))
            while true {
                if case .reply(let r) = try await watch.next(Self.wait) {
                    #expect(r.re == "m-after")
                    break
                }
            }
            pair.phone.send(.outstanding(Request(id: "o-after")))
            while true {
                if case .outstanding(let o) = try await pair.phone.next(Self.wait) {
                    #expect(o.ids == [], "everything delivered was acked: nothing left, nothing doubled")
                    break
                }
            }
        }
        await redis.close()
        await cluster.stop()
    }

    /// Field `index` of /proc/sys/net/ipv4/`name` (min, default, max), or 4 MiB if unreadable.
    static func tcpBufferBytes(_ name: String, _ index: Int) -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8)) ?? ""
        let fields = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        return fields.count == 3 ? fields[index] : 4 << 20
    }
}
