@_spi(Testing) import RelayProtocol
import TestSupport
import Testing

/// A payload reaches the receiver byte for byte as the sender wrote it (PROTOCOL.md §3.7
/// "exactly as sent"): both decoders keep its bytes, and `deliver`, `reply`, `welcome.context`
/// and the store splice them; numbers, escapes and whitespace are never rewritten.
@Suite struct PayloadBytesTests {
    /// Spellings a re-encoder would change.
    static let payloads: [String] = [
        #"{"kind":"big","n":18446744073709551616}"#,
        #"{"kind":"big","n":-9223372036854775809,"m":123456789012345678901234567890}"#,
        #"{"kind":"zero","n":-0,"f":-0.0,"e":0e0}"#,
        #"{"kind":"one","a":1.0,"b":1,"c":1E0,"d":10e-1,"x":1.5e+300}"#,
        #"{"kind":"esc","a":"\u00e9","b":"é","c":"\/","d":"\ud83d\udc99","e":"\u0041\t"}"#,
        "{ \"kind\" : \"ws\" ,\n\t\"a\" : [ 1 , { } , [ ] ] \r\n}",
        #"{"z":1,"kind":"order","a":{"y":2,"b":3}}"#,
    ]

    static func frame(_ type: String, _ payload: String, extra: String = "") -> [UInt8] {
        let head = type == "send" ? #"{"type":"send","id":"s-1","mode":"userInfo","payload":"# : #"{"type":"reply","id":"r-1","re":"m-1","payload":"#
        return Array((head + payload + extra + "}").utf8)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static let sentAt = Timestamp(millisecondsSinceEpoch: 1_780_000_000_123)

    @Test(arguments: payloads)
    func bothDecodersKeepTheSendersBytes(_ raw: String) throws {
        // Without and with an unknown member (which sends the fast path to the general decoder).
        for bytes in [Self.frame("send", raw), Self.frame("send", raw, extra: #","future":[1]"#)] {
            for decoded in [try FrameCodec.decodeClientFrame(bytes), try FrameCodec.decodeClientGeneric(bytes)] {
                guard case .send(let s) = decoded else {
                    Issue.record("not a send: \(decoded)")
                    continue
                }
                #expect(s.payload.encoded == Array(raw.utf8))
                // The limits still count the canonical compact encoding (§3.6), not the spelling.
                #expect(s.payload.encodedSize == JSONWriter.encode(s.payload.json).count)
                #expect(JSONWriter.encodedSize(s.payload.json) == JSONWriter.encode(s.payload.json).count)
            }
        }
        guard case .reply(let r) = try FrameCodec.decodeClientFrame(Self.frame("reply", raw)) else {
            Issue.record("not a reply")
            return
        }
        #expect(r.payload.encoded == Array(raw.utf8))
    }

    @Test(arguments: payloads)
    func relayFramesAndTheStoreSpliceTheBytes(_ raw: String) throws {
        guard case .send(let s) = try FrameCodec.decodeClientFrame(Self.frame("send", raw)),
            case .reply(let r) = try FrameCodec.decodeClientFrame(Self.frame("reply", raw))
        else {
            Issue.record("not a send and a reply")
            return
        }
        let d = Deliver(seq: 3, mode: .context, id: s.id, from: .phone, sentAt: Self.sentAt, payload: s.payload)
        let spliced = Array((#""payload":"# + raw + #","sentAt""#).utf8)

        let deliver = FrameCodec.encode(.deliver(d))
        #expect(Self.contains(deliver, spliced))
        #expect(try FrameCodec.decodeRelayFrame(deliver) == .deliver(d))

        let reply = FrameCodec.encode(.reply(RelayReply(re: "m-1", payload: r.payload)))
        #expect(reply == Array((#"{"payload":"# + raw + #","re":"m-1","type":"reply"}"#).utf8))

        let welcome = Welcome(re: "h-1", session: "s-9", role: .watch, paired: true, limits: .default, context: d)
        let welcomeBytes = FrameCodec.encode(.welcome(welcome))
        #expect(Self.contains(welcomeBytes, spliced))
        #expect(try FrameCodec.decodeRelayFrame(welcomeBytes) == .welcome(welcome))

        // What the store writes and reads back (an item's payload, a direction's last context).
        #expect(Self.contains(d.storedBytes, spliced))
        #expect(try Deliver(storedBytes: d.storedBytes).payload.encoded == Array(raw.utf8))
        #expect(try Payload(bytes: Array(raw.utf8)).encoded == Array(raw.utf8))
    }

    @Test func theExactPayloadVectorKeepsItsBytes() throws {
        let v = try #require(Vectors.validClient.first { $0.name == "valid/client/send.exact-payload.json" })
        guard case .send(let s) = try FrameCodec.decodeClientFrame(v.bytes) else {
            Issue.record("not a send")
            return
        }
        let text = String(decoding: v.bytes, as: UTF8.self)
        let start = try #require(text.range(of: #"{ "kind""#)).lowerBound
        let end = try #require(text.range(of: #""é/" }"#)).upperBound
        #expect(s.payload.encoded == Array(text[start..<end].utf8))
    }

    @Test func aPayloadMadeHereIsWrittenCompactAndEqualityComparesValues() throws {
        let made = Payload(kind: "one", ["a": 1])
        let sent = try Payload(bytes: Array(#" {"a" : 1, "kind":"one"} "#.utf8))
        #expect(made.encoded == Array(#"{"a":1,"kind":"one"}"#.utf8))
        #expect(sent == made)
        #expect(sent.encodedSize == made.encodedSize)
        var changed = sent
        changed.members["a"] = 2
        #expect(changed.encoded == Array(#"{"a":2,"kind":"one"}"#.utf8))
    }

    @Test func aNumberBeyondADoubleIsRejectedByBothDecoders() {
        let bytes = Self.frame("send", #"{"kind":"huge","n":1e400}"#)
        let fast = #expect(throws: ProtocolError.self) { try FrameCodec.decodeClientFrame(bytes) }
        #expect(fast?.code == .badJSON)
        let general = #expect(throws: ProtocolError.self) { try FrameCodec.decodeClientGeneric(bytes) }
        #expect(general?.code == .badJSON)
    }

    @Test func storedBytesThatAreNotAnObjectAreRejected() {
        #expect(throws: ProtocolError.self) { try Payload(bytes: Array("[1]".utf8)) }
        #expect(throws: ProtocolError.self) { try Payload(bytes: Array(#"{"kind":"#.utf8)) }
    }

    @Test func nestingIsCountedOnBracketsOutsideStrings() throws {
        #expect(Payload(kind: "k").nestingDepth == 1)
        #expect(try Payload(bytes: Array(#"{"a":[{}],"b":{"c":[]}}"#.utf8)).nestingDepth == 3)
        // Brackets inside strings, behind escaped quotes and backslashes, are text.
        let text = #"{"s":"[[{\"[\\","t":"\u005b{"}"#
        #expect(try Payload(bytes: Array(text.utf8)).nestingDepth == 1)
        #expect(Payload(kind: "k", ["s": "]]]{{{\"\\"]).nestingDepth == 1)
        #expect(Payload.nested(depth: Payload.maxNestingDepth).nestingDepth == 63)
    }

    /// A welcome puts its context's payload two levels down: at the payload limit it nests 65
    /// levels, which a relay frame may (PROTOCOL.md §3.1), and one more is refused.
    @Test func aWelcomeCarryingAContextAtTheDepthLimitDecodes() throws {
        func welcome(_ payload: Payload) -> [UInt8] {
            Array(
                #"{"type":"welcome","re":"w-1","protocol":1,"session":"s-1","role":"watch","paired":true,"pairId":"pr-1","peer":{"name":"P","connected":true,"reachable":true},"limits":{"messageBytes":65536,"userInfoBytes":65536,"contextBytes":262144,"replyTimeoutMs":10000,"complicationsPerDay":50,"complicationsRemaining":50,"windowItems":256,"windowBytes":1048576},"context":{"seq":1,"mode":"context","id":"p-1","from":"phone","sentAt":"2026-11-30T03:40:09.517Z","payload":"#
                    .utf8) + payload.bytes + Array("}}".utf8)
        }
        let atLimit = Payload.nested(depth: Payload.maxNestingDepth)
        guard case .welcome(let w) = try FrameCodec.decodeRelayFrame(welcome(atLimit)) else {
            Issue.record("not a welcome")
            return
        }
        #expect(w.context?.payload == atLimit)
        #expect(throws: ProtocolError.self) {
            try FrameCodec.decodeRelayFrame(welcome(Payload.nested(depth: Payload.maxNestingDepth + 1)))
        }
    }
}
