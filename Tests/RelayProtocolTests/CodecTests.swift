import Foundation
import GitExplorerPayloads
import RelayProtocol
import Testing

@Suite struct FrameCodecTests {
    @Test func errorsNameTheFieldAndCarryTheFrameID() {
        let bytes = Array(#"{"type":"send","id":"m1","mode":"message","payload":{"login":"x"}}"#.utf8)
        let error = #expect(throws: ProtocolError.self) { try FrameCodec.decodeClientFrame(bytes) }
        #expect(error?.code == .badFrame)
        #expect(error?.field == "payload.kind")
        #expect(error?.re == "m1")
    }

    /// PROTOCOL.md §3.4: an integer field written with a fraction or exponent is read as a
    /// double, as JSONSerialization and JSON Schema validators read it; plain digits exactly.
    @Test(arguments: [
        ("42.0", Int64(42)), ("4.2e1", 42), ("1.0000000000000001", 1),
        ("9007199254740993.0", 9_007_199_254_740_992), ("9007199254740993", 9_007_199_254_740_993),
    ])
    func anIntegerFieldReadsItsNumberAsPROTOCOLSays(text: String, seq: Int64) throws {
        let bytes = Array(#"{"type":"ack","seq":\#(text)}"#.utf8)
        #expect(try FrameCodec.decodeClientFrame(bytes) == .ack(Ack(seq: seq)))
    }

    @Test func unknownFieldsAreIgnored() throws {
        let bytes = Array(#"{"type":"pair.begin","id":"p1","future":{"x":1}}"#.utf8)
        #expect(try FrameCodec.decodeClientFrame(bytes) == .pairBegin(Request(id: "p1")))
    }

    @Test func encodingIsDeterministicAndSorted() {
        let frame = RelayFrame.accepted(Accepted(re: "u1", remaining: 49))
        #expect(String(decoding: FrameCodec.encode(frame), as: UTF8.self) == #"{"re":"u1","remaining":49,"type":"accepted"}"#)
    }

    @Test func payloadLimitsCountCompactBytes() throws {
        let big = String(repeating: "x", count: 65536 - #"{"kind":"k","s":""}"#.utf8.count)
        let atLimit = Send(id: "a", mode: .message, payload: Payload(kind: "k", ["s": .string(big)]))
        #expect(atLimit.payload.encodedSize == 65536)
        try Limits.default.check(.send(atLimit))
        var over = atLimit
        over.payload.members["s"] = .string(big + "y")
        #expect(throws: ProtocolError(.payloadTooLarge, field: "payload", "payload is 65537 bytes; the limit is 65536", re: "a")) {
            try Limits.default.check(.send(over))
        }
        over.mode = .context
        try Limits.default.check(.send(over))
    }

    @Test func everyPrefixOfAValidFrameIsRejectedWithoutCrashing() {
        for v in Vectors.validClient where v.bytes.count < 4096 {
            let end = v.bytes.lastIndex(of: UInt8(ascii: "}")) ?? 0
            for n in 0..<end {
                #expect(throws: ProtocolError.self) { try FrameCodec.decodeClientFrame(v.bytes.prefix(n)) }
            }
        }
    }

    @Test func codableConformanceAgreesWithTheCodec() throws {
        let user = User(login: "octocat", id: 583231, name: "The Octocat", avatarURL: "https://a/1", htmlURL: "https://g/octocat", publicRepos: 8, followers: 20, following: 9)
        let snapshot = FavoritesSnapshot(revision: 3, users: [user])
        let data = try JSONEncoder().encode(snapshot)
        #expect(try JSONDecoder().decode(FavoritesSnapshot.self, from: data) == snapshot)
        #expect(try FavoritesSnapshot(json: JSONParser.parse(Array(data))) == snapshot)
    }

    @Test func errorCodesMapToWatchConnectivity() {
        #expect(ErrorCode.payloadTooLarge.wcCode == 7009)
        #expect(ErrorCode.notReachable.wcCode == 7007)
        #expect(ErrorCode.replyTimeout.wcCode == 7012)
        #expect(ErrorCode.notPaired.wcCode == 7005)
        #expect(ErrorCode.notSupported.wcCode == 7002)
        #expect(ErrorCode.internal.wcCode == 7001)
        #expect(ErrorCode.quotaExceeded.wcCode == 7015)
        #expect(ErrorCode.watchAppNotInstalled.wcCode == 7006)
        #expect(ErrorCode.companionAppNotInstalled.wcCode == 7018)
        #expect(ErrorCode.all.count == 23)
    }
}
