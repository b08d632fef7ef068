import Foundation
@_spi(Testing) @testable import RelayProtocol
import GitExplorerPayloads
import Testing

@Suite struct VectorTests {
    @Test func vectorsArePresent() {
        #expect(Vectors.validClient.count >= ClientFrame.types.count)
        #expect(Vectors.validRelay.count >= RelayFrame.types.count)
        #expect(Vectors.validPayload.count >= PayloadKind.all.count)
        #expect(Vectors.invalid.count >= 20)
        let sidecars = (try? FileManager.default.contentsOfDirectory(atPath: Vectors.root.appendingPathComponent("invalid").path))?
            .filter { $0.hasSuffix(".expect.json") }.count ?? 0
        #expect(sidecars == Vectors.invalid.count, "every invalid vector has a readable sidecar")
    }

    @Test func everyFrameTypeHasAValidVector() {
        for t in ClientFrame.types {
            #expect(Vectors.validClient.contains { Vectors.typePrefix($0.name, known: ClientFrame.types.map(\.rawValue)) == t.rawValue }, "client \(t)")
        }
        for t in RelayFrame.types {
            #expect(Vectors.validRelay.contains { Vectors.typePrefix($0.name, known: RelayFrame.types.map(\.rawValue)) == t.rawValue }, "relay \(t)")
        }
    }

    @Test(arguments: Vectors.validClient)
    func validClientVectorDecodesAndReencodesToAnEqualValue(_ v: Vector) throws {
        let frame = try FrameCodec.decodeClientFrame(v.bytes)
        #expect(Vectors.typePrefix(v.name, known: ClientFrame.types.map(\.rawValue)) == frame.type.rawValue)
        let bytes = FrameCodec.encode(frame)
        #expect(try FrameCodec.decodeClientFrame(bytes) == frame)
        #expect(FrameCodec.encode(try FrameCodec.decodeClientFrame(bytes)) == bytes, "encoding is deterministic")
        // The same JSON as the vector, modulo formatting, key order and unknown fields.
        if !v.name.contains("unknown-fields") {
            #expect(try normalizedTimestamps(JSONParser.parse(bytes)) == normalizedTimestamps(JSONParser.parse(v.bytes)))
        }
        try Limits.default.check(frame)
    }

    @Test(arguments: Vectors.validRelay)
    func validRelayVectorDecodesAndReencodesToAnEqualValue(_ v: Vector) throws {
        let frame = try FrameCodec.decodeRelayFrame(v.bytes)
        #expect(Vectors.typePrefix(v.name, known: RelayFrame.types.map(\.rawValue)) == frame.type.rawValue)
        let bytes = FrameCodec.encode(frame)
        #expect(try FrameCodec.decodeRelayFrame(bytes) == frame)
        // The direct writers of `deliver` and `accepted` write what the generic path writes.
        #expect(bytes == FrameCodec.encodeGeneric(frame))
        if !v.name.contains("unknown-fields") {
            #expect(try normalizedTimestamps(JSONParser.parse(bytes)) == normalizedTimestamps(JSONParser.parse(v.bytes)))
        }
    }

    @Test(arguments: Vectors.validPayload)
    func validPayloadVectorDecodesAsItsKind(_ v: Vector) throws {
        let json = try JSONParser.parse(v.bytes)
        let payload = try Payload(json: json)
        // `wc.*` payloads belong to the WatchConnectivity module, not to GitExplorer's app
        // payloads: WatchConnectivityTests (PropertyListTests) round-trips those vectors.
        if payload.kind?.hasPrefix("wc.") == true { return }
        if let app = try AppPayload(payload) {
            #expect(try normalizedTimestamps(JSONParser.parse(JSONWriter.encode(app.payload.json))) == normalizedTimestamps(json))
            #expect(try AppPayload(Payload(json: app.payload.json)) == app)
        } else {
            // Model vectors (user, repo) decode as their model.
            if v.name.contains("user") {
                let user = try User(json: json)
                #expect(try User(json: user.json) == user)
            } else {
                let repo = try Repo(json: json)
                #expect(try Repo(json: repo.json) == repo)
            }
        }
    }

    @Test(arguments: Vectors.invalid)
    func invalidVectorIsRejectedWithExactlyItsCode(_ v: InvalidVector) throws {
        let expected = ErrorCode(rawValue: v.expect.code)
        #expect(ErrorCode.all.contains(expected), "a protocol code")
        switch v.expect.stage {
        case "codec":
            if v.expect.binary == true {
                #expect(expected == .unsupportedFrame)
                return
            }
            let error = #expect(throws: ProtocolError.self) { try FrameCodec.decodeClientFrame(v.vector.bytes) }
            #expect(error?.code == expected)
            if let field = v.expect.field { #expect(error?.field == field) }
        case "limits":
            let frame = try FrameCodec.decodeClientFrame(v.vector.bytes)
            let error = #expect(throws: ProtocolError.self) { try Limits.default.check(frame) }
            #expect(error?.code == expected)
        case "session":
            // Structurally valid; the relay's state machine rejects it (RelayCore and server tests).
            _ = try FrameCodec.decodeClientFrame(v.vector.bytes)
        default:
            Issue.record("unknown stage \(v.expect.stage)")
        }
    }

    /// Timestamps re-encode with milliseconds and optional nulls are omitted: compare
    /// instants, and treat `null` members as absent.
    private func normalizedTimestamps(_ v: JSONValue) -> JSONValue {
        switch v {
        case .string(let s):
            if s.count >= 20, s.hasSuffix("Z"), let t = Timestamp(iso8601: s) { return .string(t.iso8601) }
            return v
        case .double(let d): return Int64(exactly: d).map(JSONValue.int) ?? v
        case .array(let a): return .array(a.map(normalizedTimestamps))
        case .object(let o): return .object(o.filter { $0.value != .null }.mapValues(normalizedTimestamps))
        default: return v
        }
    }
}

@Suite struct HotFrameEncodingTests {
    static let payloads: [Payload] = [
        Payload(kind: "k"),
        Payload(kind: "é \" \\ \n \u{1}", ["z": [1, 2.5, nil, true], "a": ["nested": "x"], "ü": "y"]),
        Payload(kind: "big", ["s": .string(String(repeating: "ab", count: 5000))]),
    ]

    @Test(arguments: payloads, [true, false, nil] as [Bool?])
    func deliverIsWrittenAsTheGenericPathWritesIt(_ payload: Payload, wantsReply: Bool?) {
        for mode in [DeliveryMode.message, .userInfo, .context, .complication] {
            let d = Deliver(
                seq: 9_007_199_254_740_993, mode: mode, id: "id \"q\"", from: .watch,
                sentAt: Timestamp(millisecondsSinceEpoch: 1_780_000_000_123), payload: payload, wantsReply: wantsReply)
            #expect(FrameCodec.encode(.deliver(d)) == FrameCodec.encodeGeneric(.deliver(d)))
        }
    }

    @Test(arguments: [nil, 0, 49] as [Int?], [nil, DeliveryMode.userInfo] as [DeliveryMode?])
    func acceptedIsWrittenAsTheGenericPathWritesIt(_ remaining: Int?, fallback: DeliveryMode?) {
        let a = Accepted(re: "r\u{7}é", remaining: remaining, fallback: fallback)
        #expect(FrameCodec.encode(.accepted(a)) == FrameCodec.encodeGeneric(.accepted(a)))
    }

    @Test func aPayloadKeepsItsEncodingInStepWithItsMembers() {
        var p = Payload(kind: "a", ["n": 1])
        #expect(p.encoded == JSONWriter.encode(p.json))
        p.members["n"] = "two"
        #expect(p.encoded == JSONWriter.encode(p.json))
        #expect(p == Payload(kind: "a", ["n": "two"]))
    }
}

@Suite struct FastDecodeTests {
    /// Both decoders on the same bytes: equal frames, or the same error (code, field, re).
    static func sameOutcome(_ bytes: [UInt8]) -> Bool {
        let fast = Result { () throws(ProtocolError) in try FrameCodec.decodeClientFrame(bytes) }
        let general = Result { () throws(ProtocolError) in try FrameCodec.decodeClientGeneric(bytes) }
        switch (fast, general) {
        case (.success(let a), .success(let b)): return a == b
        case (.failure(let a), .failure(let b)): return a.code == b.code && a.field == b.field && a.re == b.re
        default: return false
        }
    }

    @Test(arguments: Vectors.validClient + Vectors.invalid.map(\.vector))
    func theFastPathAgreesWithTheGeneralDecoderOnEveryVector(_ v: Vector) {
        #expect(Self.sameOutcome(v.bytes))
    }

    @Test(arguments: [
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"userInfo","payload":{"kind":"k","n":[1,2.5,null]},"wantsReply":false}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"},"wantsReply":null}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"},"extra":1}"#,
        #"{"type":"send","id":"a","id":"b","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"Message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":""}}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":1}}"#,
        #"{"type":"send","id":"a","mode":"message","payload":[]}"#,
        #"{"type":"send","id":"a","mode":"message"}"#,
        #" {"type":"send","id":"a","mode":"message","payload":{"kind":"k"}} "#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"}} x"#,
        #"{"type":"ack","seq":3}"#,
        #"{"type":"ack","seq":3,"id":"x"}"#,
        #"{"type":"ack","seq":3.0}"#,
        #"{"type":"ack","seq":0}"#,
        #"{"type":"ack","seq":"3"}"#,
        #"{"type":"ack"}"#,
        #"{"seq":1,"type":"ack","type":"ack"}"#,
        // Keys and the `type` and `mode` values are matched as bytes: escaped, they go to the
        // general decoder, which must give the same frame.
        #"{"\u0074ype":"send","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"s\u0065nd","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"messag\u0065","payload":{"kind":"k"}}"#,
        #"{"type":"send","i\u0064":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a\u00e9","mode":"message","payload":{"kind":"k\n"}}"#,
        #"{"type":"ack","s\u0065q":2}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"},"wantsReply":true,"wantsReply":true}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"},"seq":1}"#,
        #"{"type":"ack","seq":1,"mode":"message"}"#,
        #"{"type":"ack","seq":1,"payload":{"kind":"k"}}"#,
        #"{"type":"ack","seq":1,"wantsReply":true}"#,
        #"{"type":"ack","seq":9223372036854775807}"#,
        #"{"type":"ack","seq":-1}"#,
        #"{"type":"Send","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"sendx","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"messages","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"complication","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"context","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"userInfo","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":1,"mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":1,"payload":{"kind":"k"}}"#,
        #"{"type":1,"id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"typ":"send","id":"a","mode":"message","payload":{"kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"},}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k"}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"k","kind":"k"}}"#,
        #"{"type":"send","id":"a","mode":"message","payload":{"kind":"é"}}"#,
        #"{"type" : "send" , "id" : "a" , "mode" : "message" , "payload" : { "kind" : "k" } , "wantsReply" : false }"#,
        #"{}"#, #"[]"#, #"{"type":"send""#, #"{"type":"send","#, "{\"type\":\"se\tnd\"}",
    ])
    func theFastPathAgreesWithTheGeneralDecoderOnEdgeCases(_ text: String) {
        #expect(Self.sameOutcome(Array(text.utf8)), "\(text)")
    }
}
