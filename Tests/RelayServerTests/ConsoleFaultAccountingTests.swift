import Foundation
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// What a fault did, said as it was: a `no-reply` swallows the reply the relay would have
/// delivered (not a bad frame before it), a `disconnect` on a device not connected waits for it
/// to connect (it was dropped without a word), and `/metrics` counts as sent only the frames
/// that went (not those a fault dropped, and held ones when they go).
@Suite(.timeLimit(.minutes(5)))
struct ConsoleFaultAccountingTests {
    let console = ConsoleTests()

    /// A reply with an unknown `re` is refused by the core as before (`unknown_id`) and does not
    /// use up the fault: the real reply after it is swallowed. The bad one was swallowed, and
    /// the real one reached the requester.
    @Test func noReplySwallowsTheNextReplyTheRelayWouldAccept() async throws {
        let (relay, phone, watch) = try await askedWithNoReplyOnThePhone()
        phone.send(.reply(ClientReply(id: "r0", re: "no-such-message", payload: Payload(kind: "a"))))
        try await phone.expectError(.unknownID, re: "r0")
        phone.send(.reply(ClientReply(id: "r1", re: "ask", payload: Payload(kind: "a"))))
        try await watch.expectError(.replyTimeout, re: "ask")
        // The console's state is its last inspection (at most 150 ms behind).
        try await eventually(10, "the console to count the fault fired") {
            let state: ConsoleJSON.State = try await console.get(relay, "/console/api/state")
            return state.fired["no-reply"] == 1
        }
        await relay.stop()
    }

    /// A reply written with escapes (`"\u0074ype":"r\u0065ply"`) is a reply to the core, so it is
    /// one to the fault too: swallowed, and the requester times out (the fault read the frame's
    /// raw bytes for `"type"` and let it through).
    @Test func noReplySwallowsAReplyWhoseTypeIsWrittenWithEscapes() async throws {
        let (relay, phone, watch) = try await askedWithNoReplyOnThePhone()
        phone.sendRaw(#"{"\u0074ype":"r\u0065ply","id":"r1","re":"ask","payload":{"kind":"a"}}"#)
        try await watch.expectError(.replyTimeout, re: "ask")
        await relay.stop()
    }

    /// A relay with a paired phone and watch, a `no-reply` fault on the phone, and a message
    /// from the watch (id `ask`) that wants a reply, delivered to the phone.
    private func askedWithNoReplyOnThePhone() async throws -> (TestRelay, phone: TestDevice, watch: TestDevice) {
        // Long enough for the reply to come first on a loaded machine: one after the timeout is
        // not one the relay would accept, and rightly not swallowed.
        let relay = try await console.startRelay { $0.relay.limits.replyTimeoutMs = min(4_000, Int(1_500 * timeoutScale)) }
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await console.consolePair(relay)
        try await console.post(relay, "/console/api/faults?target=device:\(try console.deviceID(pair, "phone"))&kind=no-reply")
        watch.send(.send(Send(id: "ask", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await watch.next() else { throw TestFailure("accepted") }
        guard case .deliver = try await phone.next() else { throw TestFailure("deliver") }
        return (relay, phone, watch)
    }

    /// A `disconnect` set while its device is away stays in force (listed, the answer says it
    /// waits) and fires once the device is back: its new connection is closed with 1001.
    @Test func disconnectOfADeviceAwayFiresWhenItConnects() async throws {
        let relay = try await console.startRelay()
        let (_, watch, _, watchToken) = try await pairDevices(relay)
        let watchID = try console.deviceID(try await console.consolePair(relay), "watch")
        watch.connection.close()
        _ = try await console.consolePair(relay) { $0.devices.contains { $0.role == "watch" && !$0.connected } }
        let answer = try await console.post(relay, "/console/api/faults?target=device:\(watchID)&kind=disconnect")
        #expect(answer.contains("not connected"), "\(answer)")
        let pending: ConsoleJSON.State = try await console.get(relay, "/console/api/state")
        #expect(pending.faults.contains { $0.kind == "disconnect" && $0.target == "device:\(watchID)" }, "\(pending.faults)")
        #expect(pending.fired["disconnect"] == nil, "\(pending.fired)")
        let again = try await relay.device(.watch)
        try await again.hello(token: watchToken)
        #expect(try await again.closed() == CloseCode.goingAway.rawValue)
        try await eventually(10, "the disconnect counted as fired") {
            let state: ConsoleJSON.State = try await console.get(relay, "/console/api/state")
            return state.fired["disconnect"] == 1 && !state.faults.contains { $0.kind == "disconnect" }
        }
        await relay.stop()
    }

    /// `watchrelay_frames_sent_total` counts what went: not a message a `drop` dropped, and a
    /// frame a `delay` holds only once it goes.
    @Test func framesSentCountsNeitherDroppedNorHeldFrames() async throws {
        let relay = try await console.startRelay()
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await console.consolePair(relay)
        let watchID = try console.deviceID(pair, "watch")
        try await console.post(relay, "/console/api/faults?target=device:\(watchID)&kind=drop&p=1")
        phone.send(.send(Send(id: "m-lost", mode: .message, payload: Payload(kind: "ping"))))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        try await console.post(relay, "/console/api/faults/clear")
        try await console.post(relay, "/console/api/faults?target=device:\(watchID)&kind=delay&ms=3000")
        phone.send(userInfo("u-held"))
        guard case .accepted = try await phone.next() else { throw TestFailure("accepted") }
        let held = try await PlainHTTP.request(port: relay.server.port, "/metrics").body
        #expect(!held.contains(#"watchrelay_frames_sent_total{type="deliver"}"#), "\(held)")
        guard case .deliver(let d) = try await watch.next() else { throw TestFailure("deliver") }
        #expect(d.id == "u-held")
        let sent = try await PlainHTTP.request(port: relay.server.port, "/metrics").body
        #expect(sent.contains(#"watchrelay_frames_sent_total{type="deliver"} 1"#), "\(sent)")
        await relay.stop()
    }
}
