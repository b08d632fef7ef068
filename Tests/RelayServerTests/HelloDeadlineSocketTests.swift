import Foundation
import RelayProtocol
import TestSupport
import Testing

/// A connection that answers pings but never says `hello` is closed at the `hello` deadline
/// with `hello_required` and 1008 (PROTOCOL.md §5.1), over a real socket.
@Suite(.timeLimit(.minutes(1)))
struct HelloDeadlineSocketTests {
    @Test func aConnectionThatAnswersPingsButNeverSaysHelloIsClosedWith1008() async throws {
        let relay = try await TestRelay.start { c in
            c.relay.helloTimeoutMs = 2_500
            c.pingAfterSeconds = 1  // pings come before the deadline, and are answered
            c.hangupAfterSeconds = 60
        }
        let raw = try RawWebSocket(port: relay.server.port)
        try await raw.upgrade(port: relay.server.port)

        let (texts, pings, close) = try await raw.readUntilClosedAnsweringPings(
            timeoutMilliseconds: Int32(10_000 * timeoutScale))
        await relay.stop()

        #expect(pings >= 1, "the relay pinged the silent connection, and got its pong")
        let errors = texts.compactMap { try? FrameCodec.decodeRelayFrame($0) }.compactMap { frame -> ErrorFrame? in
            if case .error(let e) = frame { e } else { nil }
        }
        #expect(errors.map(\.code) == [.helloRequired])
        #expect(errors.first?.message == "no hello within 2.5 s of connecting")
        #expect(close?.closeCode == 1008)
        #expect(close?.closeReason == "no hello in time")
    }
}
