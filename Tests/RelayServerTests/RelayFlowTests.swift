import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GitExplorerPayloads
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// The relay end to end over real sockets on loopback, with lws clients; every test on both
/// stores (SQLite, and Redis on a `redis-server` of the test's own).
@Suite(.timeLimit(.minutes(5)))
struct RelayFlowTests {
    @Test(arguments: TestStore.all) func pairingEndToEndGivesTokensThatResume(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let phone = try await relay.device(.phone, name: "Jiwoo's iPhone")
        let welcome = try await phone.hello()
        #expect(welcome.paired == false)
        phone.send(.pairBegin(Request(id: "pb")))
        guard case .pairCode(let code) = try await phone.next() else { throw TestFailure("pair.code") }
        #expect(code.code.count == 6 && code.code.allSatisfy(\.isNumber))

        let watch = try await relay.device(.watch, name: "Jiwoo's Watch")
        try await watch.hello()
        let wrong = code.code == "000000" ? "000001" : "000000"
        watch.send(.pairJoin(PairJoin(id: "pj0", code: wrong)))
        try await watch.expectError(.pairingCodeInvalid, re: "pj0")
        watch.send(.pairJoin(PairJoin(id: "pj1", code: code.code)))
        guard case .paired(let wp) = try await watch.next(), case .paired(let pp) = try await phone.next() else {
            throw TestFailure("paired")
        }
        #expect(wp.re == "pj1" && pp.re == nil)
        #expect(wp.token != pp.token && wp.token.count >= 43)
        #expect(wp.peer.name == "Jiwoo's iPhone" && pp.peer.name == "Jiwoo's Watch")

        // Both come back with their tokens.
        watch.connection.close()
        _ = try await watch.closed()
        guard case .peer(let gone) = try await phone.next() else { throw TestFailure("peer") }
        #expect(gone.connected == false)
        let watch2 = try await relay.device(.watch)
        let w2 = try await watch2.hello(token: wp.token)
        #expect(w2.paired && w2.pairID == wp.pairID && w2.peer?.connected == true)
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func messageWithReplyIsForwardedAndBackgroundMakesTheWatchUnreachable(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let (phone, watch, _, _) = try await pairDevices(relay)
        let ask = Send(id: "m1", mode: .message, payload: LoginCommand.reposRequest("octocat").payload, wantsReply: true)
        watch.send(.send(ask))
        guard case .accepted(let a) = try await watch.next() else { throw TestFailure("accepted") }
        #expect(a.re == "m1")
        guard case .deliver(let d) = try await phone.next() else { throw TestFailure("deliver") }
        #expect(d.mode == .message && d.wantsReply == true && d.from == .watch && d.seq == 1)
        phone.send(.reply(ClientReply(id: "r1", re: "m1", payload: Payload(kind: "profile.repos.error", ["login": "octocat", "code": "user_not_found", "message": "no"]))))
        guard case .reply(let r) = try await watch.next() else { throw TestFailure("reply") }
        #expect(r.re == "m1" && r.payload.kind == "profile.repos.error")

        watch.send(.state(StateChange(foreground: false)))
        guard case .peer(let p) = try await phone.next() else { throw TestFailure("peer") }
        #expect(p.connected && !p.reachable)
        phone.send(.send(Send(id: "m2", mode: .message, payload: Payload(kind: "ping"))))
        try await phone.expectError(.notReachable, re: "m2")

        // The engine hands its counters over per step: the frames, the error and the first
        // delivery's latency are all counted.
        let text = relay.server.metrics.render()
        #expect(text.contains(#"watchrelay_frames_sent_total{type="deliver"} 1"#), "\(text)")
        #expect(text.contains(#"watchrelay_frames_sent_total{type="accepted"} 1"#))
        #expect(text.contains(#"watchrelay_frames_sent_total{type="reply"} 1"#))
        #expect(text.contains(#"watchrelay_errors_total{code="not_reachable"} 1"#))
        #expect(text.contains(#"watchrelay_delivery_latency_seconds_count{mode="message"} 1"#))
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func replyTimeoutReachesTheSender(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store) { $0.relay.limits.replyTimeoutMs = 300 }
        let (phone, watch, _, _) = try await pairDevices(relay)
        phone.send(.send(Send(id: "m1", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await phone.next(), case .deliver = try await watch.next() else { throw TestFailure("deliver") }
        try await phone.expectError(.replyTimeout, re: "m1")
        // A late reply is unknown.
        watch.send(.reply(ClientReply(id: "r1", re: "m1", payload: Payload(kind: "a"))))
        try await watch.expectError(.unknownID, re: "r1")
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func contextLatestWinsAndComesBackInWelcome(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let (phone, watch, _, watchToken) = try await pairDevices(relay)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer gone
        for r in 1...2 {
            phone.send(.send(Send(id: "c\(r)", mode: .context, payload: FavoritesSnapshot(revision: Int64(r), users: []).payload)))
            guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        }
        let watch2 = try await relay.device(.watch)
        let w = try await watch2.hello(token: watchToken)
        #expect(w.context == nil)
        guard case .deliver(let d) = try await watch2.next() else { throw TestFailure("deliver") }
        #expect(d.id == "c2" && d.mode == .context)
        watch2.send(.ack(Ack(seq: d.seq)))
        watch2.connection.close()
        _ = try await watch2.closed()
        let watch3 = try await relay.device(.watch)
        let w3 = try await watch3.hello(token: watchToken, lastSeq: d.seq)
        #expect(w3.context?.id == "c2")
        #expect(try FavoritesSnapshot(reader: ObjectReader(w3.context!.payload.members)).revision == 2)
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func userInfoIsFIFOAndAckedItemsAreTransferred(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let (phone, watch, _, _) = try await pairDevices(relay)
        for i in 1...3 { phone.send(userInfo("u\(i)", i)) }
        var seqs: [Int64] = []
        for i in 1...3 {
            guard case .accepted(let a) = try await phone.next() else { throw TestFailure("accepted") }
            #expect(a.re == "u\(i)")
            guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
            #expect(d.id == "u\(i)")
            seqs.append(d.seq)
        }
        #expect(seqs == seqs.sorted() && Set(seqs).count == 3)
        watch.send(.ack(Ack(seq: seqs[2])))
        guard case .transferred(let t) = try await phone.next() else { throw TestFailure("transferred") }
        #expect(t.ids == ["u1", "u2", "u3"])
        phone.send(.outstanding(Request(id: "o1")))
        guard case .outstanding(let o) = try await phone.next() else { throw TestFailure("outstanding") }
        #expect(o.ids.isEmpty)
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func complicationsCountDownThenFallBackToUserInfo(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store) { $0.relay.limits.complicationsPerDay = 2 }
        let (phone, watch, _, _) = try await pairDevices(relay)
        var remaining: [Int?] = []
        var fallback: [DeliveryMode?] = []
        for i in 1...3 {
            phone.send(.send(Send(id: "c\(i)", mode: .complication, payload: Payload(kind: "complication"))))
            guard case .accepted(let a) = try await phone.next() else { throw TestFailure("accepted") }
            remaining.append(a.remaining)
            fallback.append(a.fallback)
            guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
            #expect(d.mode == (i < 3 ? .complication : .userInfo))
        }
        #expect(remaining == [1, 0, 0])
        #expect(fallback == [nil, nil, .userInfo])
        watch.send(.send(Send(id: "w1", mode: .complication, payload: Payload(kind: "complication"))))
        try await watch.expectError(.notSupported, re: "w1")
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func resumeAfterReconnectRedeliversWhatIsAboveLastSeq(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let (phone, watch, _, watchToken) = try await pairDevices(relay)
        for i in 1...3 { phone.send(userInfo("u\(i)", i)) }
        var delivered: [Deliver] = []
        for _ in 1...3 {
            _ = try await phone.next()
            guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
            delivered.append(d)
        }
        watch.connection.close()  // no ack
        _ = try await watch.closed()
        let watch2 = try await relay.device(.watch)
        try await watch2.hello(token: watchToken, lastSeq: delivered[0].seq)
        for expected in delivered.dropFirst() {
            guard case .deliver(let d) = try await watch2.next() else { throw TestFailure("deliver") }
            #expect(d.id == expected.id && d.seq == expected.seq)
        }
        await relay.stop()
    }

    @Test(arguments: TestStore.all) func healthzAndMetricsAnswerOnTheSamePort(store: TestStore) async throws {
        let relay = try await TestRelay.start(store: store)
        let base = relay.url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1", with: "")
        let (health, hr) = try await URLSession.shared.data(from: URL(string: base + "/healthz")!)
        #expect((hr as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: health, as: UTF8.self).hasPrefix("ok"))
        let (metrics, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
        #expect(String(decoding: metrics, as: UTF8.self).contains("watchrelay_pairs"))
        await relay.stop()
    }
}
