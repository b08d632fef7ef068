import Foundation
import RelayProtocol
import TestSupport
import Testing

/// How the relay's frames look on the wire to a watch reading raw frames.
@Suite(.timeLimit(.minutes(1)))
struct DeliverFramingTests {
    /// A `deliver` of a payload at the 64 KiB limit is one frame (FIN set, no continuation), and
    /// one `send()` on the relay: the transport's fragment size leaves room for the envelope.
    /// A context four times as large comes as continuation frames and arrives whole.
    @Test func aDeliverAtThe64KiBLimitIsOneFrameAndALargerContextComesInFragments() async throws {
        let relay = try await TestRelay.start()
        let (phone, watch, _, watchToken) = try await pairDevices(relay)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer gone
        let pad = { (bytes: Int) in String(repeating: "x", count: bytes - #"{"kind":"k","pad":""}"#.utf8.count) }
        let userInfo = #"{"kind":"k","pad":"\#(pad(65536))"}"#
        let context = #"{"kind":"k","pad":"\#(pad(262_144))"}"#
        phone.sendRaw(#"{"type":"send","id":"u-1","mode":"userInfo","payload":"# + userInfo + "}")
        guard case .accepted = try await phone.next() else { throw TestFailure("expected accepted u-1") }
        phone.sendRaw(#"{"type":"send","id":"c-1","mode":"context","payload":"# + context + "}")
        guard case .accepted = try await phone.next() else { throw TestFailure("expected accepted c-1") }

        let raw = try RawWebSocket(port: relay.server.port, receiveBuffer: 1 << 20)
        try await raw.upgrade(port: relay.server.port)
        try raw.sendText(FrameCodec.encode(.hello(Hello(id: "h-1", role: .watch, deviceName: "Raw", token: watchToken))))
        var messages: [(frames: [RawWebSocket.Frame], text: [UInt8])] = []
        var frames: [RawWebSocket.Frame] = []
        while messages.count < 3, let frame = try await raw.readFrame(timeoutMilliseconds: Int32(10_000 * timeoutScale)) {
            guard frame.opcode != 0x9 else { continue }
            frames.append(frame)
            if frame.isFinal {
                messages.append((frames, frames.flatMap(\.payload)))
                frames = []
            }
        }
        try #require(messages.count == 3)  // welcome, then the context and the userInfo in some order
        let delivers = try messages.dropFirst().map { message -> (Deliver, Int) in
            guard case .deliver(let d) = try FrameCodec.decodeRelayFrame(message.text) else { throw TestFailure("expected deliver") }
            return (d, message.frames.count)
        }
        let userInfoDeliver = try #require(delivers.first { $0.0.id == "u-1" })
        let contextDeliver = try #require(delivers.first { $0.0.id == "c-1" })
        #expect(userInfoDeliver.1 == 1)
        #expect(contextDeliver.1 > 1)
        #expect(messages.dropFirst().allSatisfy { $0.frames.dropFirst().allSatisfy { $0.opcode == 0 } })
        let single = messages.dropFirst().first { $0.frames.count == 1 }.map { String(decoding: $0.text, as: UTF8.self) }
        #expect(single?.contains(userInfo) == true)
        await relay.stop()
    }
}
