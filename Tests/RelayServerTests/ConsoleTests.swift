import Foundation
import Primitives
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// `serve --console` over real HTTP and WebSockets on loopback: the token, the JSON API, and
/// faults that reach the devices (reachability, delay, drop, disconnect, no reply, budget).
@Suite(.timeLimit(.minutes(5)))
struct ConsoleTests {
    static let token = "console-test-token"
    let bearer = "Authorization: Bearer \(ConsoleTests.token)"

    func startRelay(_ configure: @escaping @Sendable (inout RelayServerConfiguration) -> Void = { _ in }) async throws -> TestRelay {
        try await TestRelay.start {
            $0.console = ConsoleConfiguration(token: ConsoleTests.token)
            configure(&$0)
        }
    }

    func get<T: Decodable>(_ relay: TestRelay, _ target: String, as type: T.Type = ConsoleJSON.State.self) async throws -> T {
        let r = try await PlainHTTP.request(port: relay.server.port, target, headers: [bearer])
        #expect(r.status == 200, "\(target): \(r.status) \(r.body)")
        return try JSONDecoder().decode(T.self, from: Data(r.body.utf8))
    }

    func frames(_ relay: TestRelay, _ query: String = "") async throws -> [ConsoleJSON.Frame] {
        try await get(relay, "/console/api/frames" + query, as: ConsoleJSON.Frames.self).frames
    }

    @discardableResult
    func post(_ relay: TestRelay, _ target: String, status: Int = 200) async throws -> String {
        let r = try await PlainHTTP.request(port: relay.server.port, target, method: "POST", headers: [bearer])
        #expect(r.status == status, "\(target): \(r.status) \(r.body)")
        return r.body
    }

    /// The pair of the console's state (waits until the engine published it).
    func consolePair(
        _ relay: TestRelay, where condition: @escaping @Sendable (ConsoleJSON.Pair) -> Bool = { _ in true }
    ) async throws -> ConsoleJSON.Pair {
        let found = LockedState<ConsoleJSON.Pair?>(nil)
        try await eventually(10, "the console to show the pair") {
            let state = try await self.get(relay, "/console/api/state")
            guard let pair = state.pairs.first, condition(pair) else { return false }
            found.withLock { $0 = pair }
            return true
        }
        return try #require(found.withLock { $0 })
    }

    func deviceID(_ pair: ConsoleJSON.Pair, _ role: String) throws -> String {
        try #require(pair.devices.first { $0.role == role }?.id)
    }

    @Test func everyConsoleRequestNeedsTheToken() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        #expect(try await PlainHTTP.request(port: port, "/console").status == 401)
        #expect(try await PlainHTTP.request(port: port, "/console?token=wrong").status == 401)
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(try await PlainHTTP.request(port: port, "/console/api/faults/clear", method: "POST").status == 401)
        let page = try await PlainHTTP.request(port: port, "/console?token=\(Self.token)")
        #expect(page.status == 200 && page.body.contains("WatchRelay console") && page.headers.contains("text/html"))
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", headers: [bearer]).status == 200)
        #expect(try await PlainHTTP.request(port: port, "/console/api/nothing", headers: [bearer]).status == 404)
        #expect(try await PlainHTTP.request(port: port, "/console/api/faults/clear", headers: [bearer]).status == 405)
        #expect(try await PlainHTTP.request(port: port, "/metrics").status == 200)
        #expect(relay.server.consoleURL == "http://127.0.0.1:\(port)/console?token=\(Self.token)")
        await relay.stop()
    }

    /// `?=` is an argument whose name and value are both empty: reading the query for the token
    /// indexed past the end and stopped the relay (Swift's index-out-of-range trap), before the
    /// token was checked, so any client could do it.
    @Test func aQueryArgumentWithoutANameIsAnsweredAndTheRelayKeepsServing() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        for target in ["/console?=", "/console/api/state?a=1&=&token=wrong", "/console/api/state?%3D", "/console?=x"] {
            #expect(try await PlainHTTP.request(port: port, target).status == 401, "\(target)")
        }
        #expect(try await PlainHTTP.request(port: port, "/console/api/state?=&token=\(Self.token)").status == 200)
        #expect(try await PlainHTTP.request(port: port, "/healthz?=").status == 200)
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", headers: [bearer]).status == 200)
        await relay.stop()
    }

    @Test func withoutTheConsoleFlagThereIsNoConsole() async throws {
        let relay = try await TestRelay.start()
        #expect(try await PlainHTTP.request(port: relay.server.port, "/console?token=x").status == 404)
        #expect(relay.server.consoleURL == nil)
        await relay.stop()
    }

    @Test func aNonLoopbackInterfaceWithoutTLSIsRefused() async throws {
        let dir = TemporaryDirectory()
        await #expect(throws: ConsoleError.insecureInterface("0.0.0.0")) {
            _ = try await RelayServer.startForTest(in: dir.path) {
                $0.host = "0.0.0.0"
                $0.console = ConsoleConfiguration(token: "t")
            }
        }
        // Allowed on purpose, or with TLS (checked without binding: tests stay on loopback).
        #expect(throws: Never.self) { try ConsoleConfiguration(allowsInsecureInterface: true).check(host: "0.0.0.0", tls: false) }
        #expect(throws: Never.self) { try ConsoleConfiguration().check(host: "0.0.0.0", tls: true) }
        #expect(throws: Never.self) { try ConsoleConfiguration().check(host: "127.0.0.1", tls: false) }
    }

    @Test func stateShowsThePairItsDevicesAndAQueuedItem() async throws {
        let relay = try await startRelay()
        let (phone, watch, _, _) = try await pairDevices(relay)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer: watch gone
        phone.send(userInfo("u-queued", 1))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        let pair = try await consolePair(relay) { pair in
            pair.directions.first { $0.from == "phone" }?.items.contains { $0.id == "u-queued" } == true
        }
        let watchDevice = try #require(pair.devices.first { $0.role == "watch" })
        #expect(!watchDevice.connected && !watchDevice.reachable)
        let phoneDevice = try #require(pair.devices.first { $0.role == "phone" })
        #expect(phoneDevice.connected && phoneDevice.lastSeen != nil)
        let item = try #require(pair.directions.first?.items.first)
        #expect(item.mode == "userInfo" && item.kind == "test.item" && item.seq == nil && !item.outstanding)
        // The frame log has the send, newest first, and filters by pair.
        let log = try await frames(relay, "?pair=\(pair.id)")
        #expect(log.first?.type == "accepted")
        #expect(log.contains { $0.type == "send" && $0.preview.contains("u-queued") })
        #expect(try await frames(relay, "?pair=nope").isEmpty)
        await relay.stop()
    }

    @Test func forcedUnreachableTellsThePeerFailsMessagesAndClearsInOneCall() async throws {
        let relay = try await startRelay()
        let (phone, _, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        let watchID = try deviceID(pair, "watch")
        let set = try await post(relay, "/console/api/faults?target=device:\(watchID)&kind=unreachable")
        #expect(!set.contains("warning"), "a device the console shows: \(set)")
        guard case .peer(let off) = try await phone.next() else { throw TestFailure("peer") }
        #expect(off.connected && !off.reachable)
        phone.send(.send(Send(id: "m1", mode: .message, payload: Payload(kind: "ping"))))
        try await phone.expectError(.notReachable, re: "m1")
        let metrics = try await PlainHTTP.request(port: relay.server.port, "/metrics").body
        #expect(metrics.contains(#"watchrelay_faults_active{kind="unreachable"} 1"#))
        let faults = try await PlainHTTP.request(port: relay.server.port, "/console/api/faults", headers: [bearer]).body
        #expect(faults.contains("device:\(watchID)"))
        try await post(relay, "/console/api/faults/clear")
        guard case .peer(let on) = try await phone.next() else { throw TestFailure("peer") }
        #expect(on.connected && on.reachable)
        // A mistyped id is set, with a warning that names it.
        let typo = try await post(relay, "/console/api/faults?target=device:\(watchID)x&kind=unreachable")
        #expect(typo.contains(#""warning":"no device:\#(watchID)x in the console's view"#), "\(typo)")
        await relay.stop()
    }

    @Test func delayedDeliveriesStillArriveInOrder() async throws {
        let relay = try await startRelay()
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=device:\(try deviceID(pair, "watch"))&kind=delay&ms=200")
        for n in 1...3 { phone.send(userInfo("u\(n)", n)) }
        for n in 1...3 {
            guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
            #expect(d.id == "u\(n)")
        }
        #expect(try await frames(relay).contains { $0.type == "deliver" && $0.fault == "held" })
        let state: ConsoleJSON.State = try await get(relay, "/console/api/state")
        #expect(state.fired["delay", default: 0] >= 3)
        await relay.stop()
    }

    @Test func slowWritesSpaceFramesButLoseNone() async throws {
        let relay = try await startRelay()
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        // 500 ms apart, not 50: each delivery follows its item's commit, and under ThreadSanitizer
        // on a loaded machine the three once reached the gate so far apart that only one was held.
        try await post(relay, "/console/api/faults?target=device:\(try deviceID(pair, "watch"))&kind=slow-writes&ms=500")
        for n in 1...3 { phone.send(userInfo("s\(n)", n)) }
        for n in 1...3 {
            guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
            #expect(d.id == "s\(n)")
        }
        let state: ConsoleJSON.State = try await get(relay, "/console/api/state")
        #expect(state.fired["slow-writes", default: 0] >= 2)
        await relay.stop()
    }

    /// Frames a `delay` holds count towards the connection's outbound cap: past it the device
    /// is closed as a slow consumer (1008) and its durable items are redelivered when it is back.
    /// The gate held them in memory without bound: messages, which no window limits, as many as
    /// their sender sent.
    @Test func framesHeldByADelayCountTowardsTheSlowConsumerCap() async throws {
        let relay = try await startRelay { $0.maxQueuedBytesPerConnection = 64 << 10 }
        let (phone, watch, _, watchToken) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        let target = "device:\(try deviceID(pair, "watch"))"
        try await post(relay, "/console/api/faults?target=\(target)&kind=delay&ms=600000")
        phone.send(userInfo("u-1", 1))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        let big = String(repeating: "x", count: 8_000)
        for n in 1...20 {
            phone.send(.send(Send(id: "m\(n)", mode: .message, payload: Payload(kind: "big", ["s": .string(big)]))))
        }
        #expect(try await watch.closed() == 1008)
        try await post(relay, "/console/api/faults/clear?target=\(target)")
        let again = try await relay.device(.watch)
        try await again.hello(token: watchToken)
        guard case .deliver(let d) = try await again.next() else { throw TestFailure("deliver") }
        #expect(d.id == "u-1")
        await relay.stop()
    }

    @Test func dropLosesMessagesButNeverDurableItems() async throws {
        let relay = try await startRelay()
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=pair:\(pair.id)&kind=drop&p=1")
        phone.send(.send(Send(id: "m-lost", mode: .message, payload: Payload(kind: "ping"))))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        phone.send(userInfo("u-kept"))
        guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
        #expect(d.id == "u-kept" && d.mode == .userInfo)
        let metrics = try await PlainHTTP.request(port: relay.server.port, "/metrics").body
        #expect(metrics.contains(#"watchrelay_faults_fired_total{kind="drop"} 1"#))
        await relay.stop()
    }

    @Test func disconnectClosesTheDeviceAndItsItemIsRedelivered() async throws {
        let relay = try await startRelay()
        let (phone, watch, _, watchToken) = try await pairDevices(relay)
        phone.send(userInfo("u-1"))
        guard case .deliver(let first) = try await watch.next() else { throw TestFailure("deliver") }
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=device:\(try deviceID(pair, "watch"))&kind=disconnect")
        #expect(try await watch.closed() == CloseCode.goingAway.rawValue)
        let again = try await relay.device(.watch)
        try await again.hello(token: watchToken)
        guard case .deliver(let redelivered) = try await again.next() else { throw TestFailure("redeliver") }
        #expect(redelivered.id == "u-1" && redelivered.seq == first.seq)
        await relay.stop()
    }

    @Test func noReplySwallowsTheNextReplyAndTheRequesterTimesOut() async throws {
        let relay = try await startRelay { $0.relay.limits.replyTimeoutMs = 300 }
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=device:\(try deviceID(pair, "phone"))&kind=no-reply")
        watch.send(.send(Send(id: "ask", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await watch.next() else { throw TestFailure("accepted") }
        guard case .deliver = try await phone.next() else { throw TestFailure("deliver") }
        phone.send(.reply(ClientReply(id: "r", re: "ask", payload: Payload(kind: "a"))))
        try await watch.expectError(.replyTimeout, re: "ask")
        await relay.stop()
    }

    /// Frames go with their keys sorted, the payload before the frame's own `type`: a payload
    /// member named `type` made the console take a message for a reply (and swallow it, its
    /// sender never accepted) and a reply for something else (the fault never fired).
    @Test func noReplyKnowsAReplyByItsFrameTypeNotByItsPayload() async throws {
        // Long enough for the reply to come first on a loaded machine (a late one is not swallowed),
        // short of the 5 s the watch waits for its error.
        let relay = try await startRelay { $0.relay.limits.replyTimeoutMs = min(4_000, Int(1_500 * timeoutScale)) }
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=device:\(try deviceID(pair, "phone"))&kind=no-reply")
        phone.send(.send(Send(id: "note", mode: .message, payload: Payload(kind: "n", ["type": .string("reply")]))))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        guard case .deliver(let note) = try await watch.next() else { throw TestFailure("deliver") }
        #expect(note.id == "note")
        watch.send(.send(Send(id: "ask", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await watch.next() else { throw TestFailure("accepted") }
        guard case .deliver = try await phone.next() else { throw TestFailure("deliver") }
        phone.send(.reply(ClientReply(id: "r", re: "ask", payload: Payload(kind: "a", ["type": .string("answer")]))))
        try await watch.expectError(.replyTimeout, re: "ask")
        let logged = try await frames(relay)
        #expect(logged.contains { $0.type == "send" && $0.preview.contains(#""id":"note""#) }, "\(logged.map(\.type))")
        #expect(logged.contains { $0.type == "reply" && $0.fault == "swallowed" }, "\(logged.map(\.type))")
        await relay.stop()
    }

    @Test func complicationBudgetSetToZeroTurnsTransfersIntoUserInfo() async throws {
        let relay = try await startRelay()
        let (phone, _, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        try await post(relay, "/console/api/faults?target=pair:\(pair.id)&kind=complication-budget&left=0")
        try await eventually(10, "the budget in the console") {
            try await consolePair(relay).complicationsLeft == 0
        }
        phone.send(.send(Send(id: "c1", mode: .complication, payload: Payload(kind: "c"))))
        guard case .accepted(let a) = try await phone.next() else { throw TestFailure("accepted") }
        #expect(a.remaining == 0 && a.fallback == .userInfo)
        await relay.stop()
    }

    /// Setting a pair's budget again starts it over, even at the same `left`: the engine
    /// compared the plan's value with the one it applied last, so once the pair had spent some,
    /// setting the same `left` again changed nothing.
    @Test func settingTheSameComplicationBudgetAgainStartsItOver() async throws {
        let relay = try await startRelay()
        let (phone, _, _, _) = try await pairDevices(relay)
        let pair = try await consolePair(relay)
        let fault = "/console/api/faults?target=pair:\(pair.id)&kind=complication-budget&left=1"
        try await post(relay, fault)
        try await eventually(10, "the budget in the console") { try await consolePair(relay).complicationsLeft == 1 }
        phone.send(.send(Send(id: "c1", mode: .complication, payload: Payload(kind: "c"))))
        guard case .accepted(let first) = try await phone.next() else { throw TestFailure("accepted") }
        #expect(first.remaining == 0 && first.fallback == nil)
        try await eventually(10, "the spent budget in the console") { try await consolePair(relay).complicationsLeft == 0 }
        try await post(relay, fault)
        try await eventually(10, "the budget set again in the console") { try await consolePair(relay).complicationsLeft == 1 }
        phone.send(.send(Send(id: "c2", mode: .complication, payload: Payload(kind: "c"))))
        guard case .accepted(let second) = try await phone.next() else { throw TestFailure("accepted") }
        #expect(second.remaining == 0 && second.fallback == nil, "\(second)")
        await relay.stop()
    }

    /// What a walkthrough of the API found: other methods read as GET, a lowercase `bearer`
    /// refused, non-numbers ignored, `after` with no way to page back, a JSON body's fields
    /// silently missing.
    @Test func methodsSchemeParametersAndPagingAreChecked() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        for method in ["PUT", "DELETE", "PATCH"] {
            let r = try await PlainHTTP.request(port: port, "/console/api/faults", method: method, headers: [bearer])
            #expect(r.status == 405, "\(method): \(r.status) \(r.body)")
            #expect(r.headers.lowercased().contains("allow: get, head, post"), "\(r.headers)")
        }
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", method: "HEAD", headers: [bearer]).status == 200)
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", method: "POST", headers: [bearer]).status == 405)
        let lowercase = "authorization: bearer \(Self.token)"
        #expect(try await PlainHTTP.request(port: port, "/console/api/state", headers: [lowercase]).status == 200)
        for query in ["limit=abc", "after=1.5", "before=x"] {
            let r = try await PlainHTTP.request(port: port, "/console/api/frames?" + query, headers: [bearer])
            #expect(r.status == 400 && r.body.contains("must be an integer"), "\(query): \(r.status) \(r.body)")
        }
        #expect(try await post(relay, "/console/api/faults", status: 400).contains("query parameters"))

        let (phone, watch, _, _) = try await pairDevices(relay)
        let all = try await frames(relay)
        try #require(all.count >= 4, "\(all.map(\.number))")
        let numbers = all.map(\.number)
        #expect(numbers == numbers.sorted(by: >), "newest first")
        let cut = numbers[1]
        #expect(try await frames(relay, "?before=\(cut)&limit=2").map(\.number) == Array(numbers.filter { $0 < cut }.prefix(2)))
        #expect(try await frames(relay, "?after=\(numbers.last!)&before=\(cut)").map(\.number) == numbers.filter { $0 < cut && $0 > numbers.last! })
        phone.connection.close()
        watch.connection.close()
        await relay.stop()
    }

    /// HEAD is allowed wherever GET is (RFC 9110 §9.3.2), as the 405s' `Allow: GET, HEAD` say:
    /// `HEAD /console/api/events` and `HEAD /console/` were refused (405, 404), and the page's
    /// path with a slash answered another method 404.
    @Test func headIsAnsweredWhereverGetIs() async throws {
        let relay = try await startRelay()
        let port = relay.server.port
        let hub = try #require(relay.server.console)
        for path in ["/console", "/console/", "/console/api/state", "/console/api/frames", "/console/api/faults", "/console/api/events"] {
            let r = try await PlainHTTP.request(port: port, path, method: "HEAD", headers: [bearer])
            #expect(r.status == 200, "HEAD \(path): \(r.status) \(r.headers)")
            #expect(r.body.isEmpty, "HEAD \(path): \(r.body)")
        }
        #expect(hub.subscriberCount == 0, "a HEAD opens no event stream")
        let put = try await PlainHTTP.request(port: port, "/console/", method: "PUT", headers: [bearer])
        #expect(put.status == 405 && put.headers.lowercased().contains("allow: get, head"), "\(put.status) \(put.headers)")
        await relay.stop()
    }

    @Test func badFaultsAreRefusedWithAReason() async throws {
        let relay = try await startRelay()
        #expect(try await post(relay, "/console/api/faults?target=device:x&kind=explode", status: 400).contains("kind must be"))
        #expect(try await post(relay, "/console/api/faults?target=x&kind=delay&ms=5", status: 400).contains("target"))
        #expect(try await post(relay, "/console/api/faults?target=device:x&kind=delay", status: 400).contains("ms"))
        #expect(try await post(relay, "/console/api/faults?target=device:x&kind=delay&ms=abc", status: 400).contains("integer"))
        await relay.stop()
    }
}
