import Foundation
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// What a fault did, said as it was: a `no-reply` swallows the reply the relay would have
/// delivered (not a bad frame before it).
@Suite(.timeLimit(.minutes(5)))
struct ConsoleFaultAccountingTests {
    let console = ConsoleTests()

    /// A reply with an unknown `re` is refused by the core as before (`unknown_id`) and does not
    /// use up the fault: the real reply after it is swallowed. The bad one was swallowed, and
    /// the real one reached the requester.
    @Test func noReplySwallowsTheNextReplyTheRelayWouldAccept() async throws {
        let relay = try await console.startRelay { $0.relay.limits.replyTimeoutMs = 300 }
        let (phone, watch, _, _) = try await pairDevices(relay)
        let pair = try await console.consolePair(relay)
        try await console.post(relay, "/console/api/faults?target=device:\(try console.deviceID(pair, "phone"))&kind=no-reply")
        watch.send(.send(Send(id: "ask", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await watch.next() else { throw TestFailure("accepted") }
        guard case .deliver = try await phone.next() else { throw TestFailure("deliver") }
        phone.send(.reply(ClientReply(id: "r0", re: "no-such-message", payload: Payload(kind: "a"))))
        try await phone.expectError(.unknownID, re: "r0")
        phone.send(.reply(ClientReply(id: "r1", re: "ask", payload: Payload(kind: "a"))))
        try await watch.expectError(.replyTimeout, re: "ask")
        let state: ConsoleJSON.State = try await console.get(relay, "/console/api/state")
        #expect(state.fired["no-reply"] == 1, "\(state.fired)")
        await relay.stop()
    }
}
