import Foundation
import RelayProtocol
import TestSupport
import Testing

/// RFC 6455 strictness of the relay's WebSocket layer, over a raw socket: frames a conforming
/// client never sends, and what the relay answers.
@Suite(.timeLimit(.minutes(1)))
struct FramingStrictnessTests {
    /// The client's close came first, so the relay's refusal completes the close handshake and
    /// the relay ends the connection (RFC 6455 §7.1.1). It used to leave that close to lws 4.1
    /// (`lws_close_reason` and -1), which then waited 5 s, its fixed close-ack timeout, for an
    /// answer to the refusal before letting go of the socket. So the wait for the end is shorter
    /// than those 5 s and not scaled: the relay now ends the connection in the same turn of its
    /// loop as it writes the close frame, as it does after echoing a well-formed close.
    @Test func aCloseFrameWithA1ByteBodyIsAProtocolError1002() async throws {
        let (relay, raw) = try await connect()
        try raw.sendFrame(opcode: 0x8, [0x03])
        let close = try await closeFrame(raw)
        #expect(await raw.waitForEnd(timeoutMilliseconds: 3_000), "the relay kept the connection after the close handshake")
        // The close counted is the one sent (it was the refused frame's 1005).
        try await eventually { try await Self.closesCounted(relay).contains(#"watchrelay_closed_connections_total{code="1002"} 1"#) }
        await relay.stop()
        #expect(close?.closeCode == 1002)
        #expect(close?.closeReason == "close frame with a 1-byte body")
    }

    @Test func aCloseReasonThatIsNotUTF8IsInvalidData1007() async throws {
        let (relay, raw) = try await connect()
        try raw.sendFrame(opcode: 0x8, [0x03, 0xE8] + [0x62, 0x79, 0x65, 0xC3, 0x28])  // 1000, "bye" + a broken 2-byte sequence
        let close = try await closeFrame(raw)
        // Ends as the 1-byte body does (aCloseFrameWithA1ByteBodyIsAProtocolError1002).
        #expect(await raw.waitForEnd(timeoutMilliseconds: 3_000), "the relay kept the connection after the close handshake")
        try await eventually { try await Self.closesCounted(relay).contains(#"watchrelay_closed_connections_total{code="1007"} 1"#) }
        await relay.stop()
        #expect(close?.closeCode == 1007)
        #expect(close?.closeReason == "close reason is not UTF-8")
    }

    @Test func aWellFormedCloseIsEchoed() async throws {
        let (relay, raw) = try await connect()
        try raw.sendFrame(opcode: 0x8, [0x03, 0xE8] + Array("bye 👋".utf8))
        let close = try await closeFrame(raw)
        await relay.stop()
        #expect(close?.closeCode == 1000)
    }

    /// RFC 6455 §7.4: codes an endpoint may not send (lws 4.1 also refuses 1012–1014, which
    /// IANA registered after the RFC) are answered with 1002 and the frame's reason.
    @Test(arguments: [999, 1005, 1013, 2999] as [UInt16])
    func aCloseCodeAClientMayNotSendIsAnswered1002(_ code: UInt16) async throws {
        let (relay, raw) = try await connect()
        try raw.sendFrame(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("why".utf8))
        let close = try await closeFrame(raw)
        await relay.stop()
        #expect(close?.closeCode == 1002, "\(code)")
        #expect(close?.closeReason == "why")
    }

    /// RFC 6455 §5.2: a 64-bit payload length's most significant bit MUST be 0. lws 4.1.6 drops
    /// the connection on it in its parser, without a close frame, as for a long control frame
    /// (below); this test fails the day the relay can send the 1002.
    @Test func aLengthWithItsTopBitSetIsAProtocolError1002() async throws {
        let (relay, raw) = try await connect()
        try raw.sendRawBytes([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0x10, 0x37, 0xFA, 0x21, 0x3D])
        let close = try await closeFrame(raw)  // nil: the connection ended without a close frame
        await relay.stop()
        withKnownIssue("lws 4.1.6 drops the connection on a 64-bit length with bit 63 set, without a close frame") {
            #expect(close?.closeCode == 1002)
        }
    }

    /// A message is the whole of its fragments (PROTOCOL.md §2.2), whatever comes between them:
    /// empty fragments, a ping (answered at once), an unsolicited pong, and TCP writes of one
    /// byte. UTF-8 is checked on the whole message: a character cut between two fragments is
    /// fine, a broken one straddling them is `bad_json`, and the connection stays.
    @Test func aMessageIsItsFragmentsWhateverComesBetweenThem() async throws {
        let (relay, raw) = try await connect()
        let broken = Array(#"{"type":"hello","id":"h\#u{E9}"#.utf8)  // ends with é's first byte…
        var bytes = RawWebSocket.frame(opcode: 0x1, Array(broken.dropLast()), masked: true, fin: false)
        bytes += RawWebSocket.frame(opcode: 0x0, [0x28] + Array(#""}"#.utf8), masked: true, fin: true)  // …then "("
        try raw.sendRawBytes(bytes)
        let refused = try await raw.readFrame(timeoutMilliseconds: Int32(10_000 * timeoutScale))
        #expect(refused.map { String(decoding: $0.payload, as: UTF8.self).contains(#""code":"bad_json""#) } == true)

        let hello = FrameCodec.encode(.hello(Hello(id: "h-\u{E9}", role: .phone, deviceName: "Fragments")))
        let cut = hello.count - 4  // inside é, two bytes before the end of the id
        bytes = RawWebSocket.frame(opcode: 0x1, [], masked: true, fin: false)
        bytes += RawWebSocket.frame(opcode: 0x0, Array(hello[..<10]), masked: true, fin: false)
        bytes += RawWebSocket.frame(opcode: 0x9, Array("p".utf8), masked: true, fin: true)
        bytes += RawWebSocket.frame(opcode: 0x0, Array(hello[10..<cut]), masked: true, fin: false)
        bytes += RawWebSocket.frame(opcode: 0xA, Array("unasked".utf8), masked: true, fin: true)
        bytes += RawWebSocket.frame(opcode: 0x0, [], masked: true, fin: false)
        bytes += RawWebSocket.frame(opcode: 0x0, Array(hello[cut...]), masked: true, fin: true)
        for byte in bytes {
            try raw.sendRawBytes([byte])
            try await Task.sleep(for: .milliseconds(1))
        }
        var pongs: [String] = [], texts: [String] = []
        while texts.isEmpty, let frame = try await raw.readFrame(timeoutMilliseconds: Int32(10_000 * timeoutScale)) {
            if frame.opcode == 0xA { pongs.append(String(decoding: frame.payload, as: UTF8.self)) }
            if frame.opcode == 0x1 { texts.append(String(decoding: frame.payload, as: UTF8.self)) }
        }
        await relay.stop()
        #expect(pongs == ["p"])
        #expect(texts.first?.contains(#""type":"welcome""#) == true, "\(texts)")
    }

    /// RFC 6455 §5.2, §5.4, §5.5: a frame out of place in the message sequence, a reserved
    /// opcode or bit, or a fragmented control frame is a protocol error: close 1002 (lws's
    /// reason names it), and the relay serves the next connection.
    @Test(arguments: [
        ("continuation without a start", [(UInt8(0x00), true)], "bad cont"),
        ("text inside an open message", [(0x01, false), (0x01, true)], "bad cont"),
        ("binary inside an open message", [(0x01, false), (0x02, true)], "bad cont"),
        ("reserved data opcode", [(0x03, true)], "bad opc"),
        ("reserved control opcode", [(0x0B, true)], "bad opc"),
        ("RSV1 without an extension", [(0x41, true)], "rsv bits"),
        ("fragmented ping", [(0x09, false)], "frag ctl"),
    ] as [(String, [(UInt8, Bool)], String)])
    func aFrameOutOfPlaceIsAProtocolError1002(_ what: String, _ frames: [(UInt8, Bool)], _ reason: String) async throws {
        let (relay, raw) = try await connect()
        let bytes = frames.flatMap { opcode, fin in RawWebSocket.frame(opcode: opcode, Array("{}".utf8), masked: true, fin: fin) }
        try raw.sendRawBytes(bytes)
        let close = try await closeFrame(raw)
        let next = try RawWebSocket(port: relay.server.port)
        try await next.upgrade(port: relay.server.port)
        try next.sendText(FrameCodec.encode(.hello(Hello(id: "h-1", role: .phone, deviceName: "Next"))))
        let welcome = try await next.readFrame(timeoutMilliseconds: Int32(10_000 * timeoutScale))
        await relay.stop()
        #expect(close?.closeCode == 1002, "\(what)")
        #expect(close?.closeReason == reason, "\(what)")
        #expect(welcome?.opcode == 0x1, "\(what): the next connection is served")
    }

    /// lws 4.1.6 processes an unmasked client frame (its server state machine records the mask
    /// bit and never checks it; upstream added the "client unmasked" 1002 check after 4.1), and
    /// the bit never reaches the callback: no public API tells a masked frame from an unmasked
    /// one. So the relay cannot refuse it on this lws; this test fails the day it can.
    @Test func anUnmaskedClientFrameIsAProtocolError1002() async throws {
        let (relay, raw) = try await connect()
        let hello = FrameCodec.encode(.hello(Hello(id: "h-1", role: .phone, deviceName: "Unmasked")))
        try raw.sendFrame(opcode: 0x1, hello, masked: false)
        try raw.sendFrame(opcode: 0x8, [0x03, 0xE8])  // then a proper close, so the test never waits on silence
        let close = try await closeFrame(raw)
        await relay.stop()
        withKnownIssue("lws 4.1.6 accepts unmasked client frames and does not expose the mask bit") {
            #expect(close?.closeCode == 1002)
        }
    }

    /// RFC 6455 §5.5.3: a pong for every ping, or for the most recent one. lws 4.1.6 keeps the
    /// first ping's payload while its pong is pending and drops the pings after it (in its
    /// parser, before any callback: "DROP PING since one pending"), so back-to-back pings get
    /// one pong, carrying the first payload. Not fixable from the callback; this test fails the
    /// day it is.
    @Test func backToBackPingsGetAPongForTheLatest() async throws {
        let (relay, raw) = try await connect()
        let hello = FrameCodec.encode(.hello(Hello(id: "h-1", role: .phone, deviceName: "Pinger")))
        // Five pings and a hello in one write. lws sends the pongs it owes when the socket is
        // next writable; the relay writes its welcome at the end of the same turn, so the
        // welcome may come first: read until both came, then briefly for any further pong.
        try raw.sendFrames((1...5).map { (0x9, Array("ping-\($0)".utf8)) } + [(0x1, hello)])
        var pongs: [String] = []
        var welcomed = false
        var wait = Int32(10_000 * timeoutScale)
        while let frame = try await raw.readFrame(timeoutMilliseconds: wait) {
            if frame.opcode == 0xA { pongs.append(String(decoding: frame.payload, as: UTF8.self)) }
            if frame.opcode == 0x1 { welcomed = true }
            if welcomed && !pongs.isEmpty { wait = 300 }
        }
        #expect(welcomed)
        await relay.stop()
        #expect(!pongs.isEmpty, "pings are answered")
        withKnownIssue("lws 4.1.6 answers the first of back-to-back pings and drops the rest") {
            #expect(pongs.last == "ping-5", "the most recent ping is answered")
        }
    }

    /// RFC 6455 §5.5: a control frame's payload is at most 125 bytes; a longer one is a
    /// protocol error, closed with 1002. lws 4.1.6 refuses it in its parser, before any
    /// callback, by dropping the TCP connection without a close frame: the client sees the
    /// connection end, not why. This test fails the day the relay can send the 1002.
    @Test func aPingOver125BytesIsAProtocolError1002() async throws {
        let (relay, raw) = try await connect()
        try raw.sendFrame(opcode: 0x9, Array(repeating: 0x70, count: 200))
        let close = try await closeFrame(raw)  // nil: the connection ended without a close frame
        await relay.stop()
        withKnownIssue("lws 4.1.6 drops the connection on a control frame over 125 bytes, without a close frame") {
            #expect(close?.closeCode == 1002)
        }
    }

    /// A relay and a raw, upgraded connection to it.
    /// The relay's `/metrics` lines of closed connections.
    static func closesCounted(_ relay: TestRelay) async throws -> [Substring] {
        try await PlainHTTP.request(port: relay.server.port, "/metrics").body.split(separator: "\n")
            .filter { $0.hasPrefix("watchrelay_closed_connections_total{") }
    }

    private func connect() async throws -> (TestRelay, RawWebSocket) {
        let relay = try await TestRelay.start()
        let raw = try RawWebSocket(port: relay.server.port)
        try await raw.upgrade(port: relay.server.port)
        return (relay, raw)
    }

    /// The close frame the relay sends before the connection ends (nil if none came).
    private func closeFrame(_ raw: RawWebSocket) async throws -> RawWebSocket.Frame? {
        while let frame = try await raw.readFrame(timeoutMilliseconds: Int32(10_000 * timeoutScale)) {
            if frame.opcode == 0x8 { return frame }
        }
        return nil
    }
}
