import Foundation
@_spi(Testing) @testable import RelayProtocol
import TestSupport
import Testing

/// The relay scans payloads instead of parsing them (``JSONObjectScan``). The scan must accept
/// exactly the texts the strict parser accepts and count exactly what the writer would write for
/// the parsed value, or a limit (§3.6) would be checked against the wrong size.
@Suite struct JSONScanTests {
    /// What the parser and the writer say of `text`: the canonical size and `kind` of the
    /// object, or nil when it is not a valid JSON object.
    static func reference(_ bytes: [UInt8]) -> JSONObjectScan? {
        guard case .object(let o)? = try? JSONParser.parse(bytes) else { return nil }
        let kind: JSONObjectScan.Kind
        switch o["kind"] {
        case nil: kind = .missing
        case .string(let s)?: kind = .string(s)
        case _?: kind = .other
        }
        return JSONObjectScan(canonicalSize: JSONWriter.encodedSize(.object(o)), kind: kind)
    }

    static func scan(_ bytes: [UInt8]) -> JSONObjectScan? {
        JSONParser.scanObject(bytes.span)
    }

    static let edgeCases: [String] = [
        #"{}"#, #" { } "#, #"{"kind":"a"}"#, #"{"kind":1}"#, #"{"kind":null}"#, #"{"kind":{"kind":"x"}}"#,
        #"{"a":{"kind":"nested"}}"#, #"{"kind":"a","kind":"b"}"#, #"{"a":1,"a":1}"#, #"{"a":{"b":1,"b":2}}"#,
        #"{"n":-0}"#, #"{"n":0}"#, #"{"n":-1}"#, #"{"n":007}"#, #"{"n":-}"#, #"{"n":1.}"#, #"{"n":.5}"#,
        #"{"n":9223372036854775807}"#, #"{"n":-9223372036854775808}"#, #"{"n":9223372036854775808}"#,
        #"{"n":999999999999999999}"#, #"{"n":-999999999999999999}"#, #"{"n":1000000000000000000}"#,
        #"{"n":123456789012345678901234567890}"#, #"{"n":1e400}"#, #"{"n":-1e400}"#, #"{"n":1e-400}"#,
        #"{"n":1.0}"#, #"{"n":1.5}"#, #"{"n":-0.0}"#, #"{"n":1E2}"#, #"{"n":1e+2}"#, #"{"n":123e-2}"#,
        #"{"n":1e15}"#, #"{"n":999999999999999.0}"#, #"{"n":0.1}"#, #"{"n":5e-324}"#, #"{"n":1e}"#,
        #"{"s":"\u0000\u001f\u0020\u007f\u0080\u07ff\u0800\uffff"}"#, #"{"s":"\ud83d\ude00"}"#,
        #"{"s":"\ud83d"}"#, #"{"s":"\ude00"}"#, #"{"s":"\ud83d\u0041"}"#, #"{"s":"\"\\\/\b\f\n\r\t"}"#,
        #"{"s":"\x"}"#, #"{"s":"\u12"}"#, #"{"s":"\u12G4"}"#, #"{"s":"abc}"#, #"{"s":"é€😀"}"#,
        #"{"\n":"key with escape","\u00e9":1}"#, #"{"é":1,"\u00e9":2}"#, #"{"a":[]}"#, #"{"a":[1,2,[3,{}]]}"#,
        #"{"a":[1,]}"#, #"{"a":[,1]}"#, #"{"a":,}"#, #"{"a" 1}"#, #"{"a":1,}"#, #"{,}"#, #"{"a":1}x"#,
        #"{"a":true,"b":false,"c":null}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"[1]"#, #""s""#, #"1"#, "",
        "{\"a\":\"\t\"}", "{\"a\":1}\n", "\u{FEFF}{}",
        // Keys and `kind` with and without escapes (an unescaped one is measured by its raw length).
        #"{"kind":"a\nb"}"#, #"{"kind":"\u00e9"}"#, #"{"kind":"é😀"}"#, #"{"kind":"\/"}"#, #"{"kind":"\u0001"}"#,
        #"{"\"":1}"#, #"{"\\":1,"\/":2}"#, #"{"é😀":1}"#, #"{"k\u0000":1}"#, #"{"kind":""}"#, #"{"":1}"#,
        // Plain keys are compared as bytes until a key of another kind moves them into a set.
        #"{"a":1,"é":2,"a":3}"#, #"{"a":1,"\u0061":2}"#, #"{"\u0061":1,"a":2}"#, #"{"kind":1,"k\u0069nd":"x"}"#,
        #"{"k\u0069nd":"x","b":1}"#, #"{"a":1,"\u00e9":2,"é":3}"#, #"{"e\u0301":1,"é":2}"#, #"{"a\u007f":1,"a":2}"#,
        #"{"a":1,"ab":2,"b":3,"ba":4}"#, #"{"":1,"":2}"#, "{\"a\u{7F}\":1,\"a\u{7F}\":2}",
    ]

    @Test func edgeCasesAgreeWithTheParserAndTheWriter() {
        for text in Self.edgeCases {
            let bytes = Array(text.utf8)
            #expect(Self.scan(bytes) == Self.reference(bytes), "\(text)")
        }
    }

    @Test func invalidUTF8IsRefusedAsByTheParser() {
        let sequences: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xC2, 0x7F], [0xC2, 0x80], [0xDF, 0xBF],
            [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBF],
            [0xEE, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE1, 0x80, 0x22], [0xF1, 0x80, 0x80],
            [0xC3, 0x5C, 0x6E],
        ]
        for seq in sequences {
            for bytes in [Array(#"{"s":""#.utf8) + seq + Array(#""}"#.utf8), Array(#"{""#.utf8) + seq + Array(#"":1}"#.utf8)] {
                #expect(Self.scan(bytes) == Self.reference(bytes), "\(seq)")
            }
        }
    }

    @Test func theWordTestFindsEverySpecialByteAtEveryPosition() {
        let special: (UInt8) -> Bool = { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 }
        for filler: UInt8 in [0x20, 0x41, 0x7F, 0x5B, 0x21, 0x23] {
            for position in 0..<8 {
                for byte in 0...255 {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[position] = UInt8(byte)
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    #expect(JSONParser.hasSpecialByte(word) == bytes.contains(where: special))
                }
            }
        }
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let word = rng.next() & (rng.below(2) == 0 ? 0x7F7F_7F7F_7F7F_7F7F : ~0)
            let bytes = withUnsafeBytes(of: word) { Array($0) }
            #expect(JSONParser.hasSpecialByte(word) == bytes.contains(where: special))
        }
    }

    @Test func theVectorTestFindsEverySpecialByteAtEveryLane() {
        let special: (UInt8) -> Bool = { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 }
        for filler: UInt8 in [0x20, 0x41, 0x7F, 0x5B, 0x21, 0x23] {
            for lane in 0..<16 {
                for byte in 0...255 {
                    var bytes = SIMD16<UInt8>(repeating: filler)
                    bytes[lane] = UInt8(byte)
                    let found = JSONParser.specialBytes(bytes)
                    #expect((found[0] | found[1] != 0) == special(UInt8(byte)), "byte \(byte) in lane \(lane)")
                }
            }
        }
    }

    /// Strings long enough for several 64- and 32-byte steps, a special byte anywhere in them.
    @Test func stringsOfManyBlocksWithASpecialByteAnywhereAgree() {
        for special: [UInt8] in [[0x22], [0x5C, 0x74], [0x1F], [0x7F], [0xC3, 0xA9], [0xFF], [0xE2, 0x82]] {
            for offset in stride(from: 0, through: 200, by: 7) {
                var body = [UInt8](repeating: 0x7A, count: 230)
                body.insert(contentsOf: special, at: offset)
                let bytes = Array(#"{"kind":"k","s":""#.utf8) + body + Array(#""}"#.utf8)
                #expect(Self.scan(bytes) == Self.reference(bytes), "\(special) at \(offset)")
            }
        }
    }

    @Test func longStringsWithASpecialByteAtAnyOffsetAgree() {
        let specials: [[UInt8]] = [[0x22], [0x5C, 0x6E], [0x5C, 0x75, 0x30, 0x30, 0x31, 0x66], [0x09], [0xC3, 0xA9],
            [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xC3], [0xED, 0xA0, 0x80]]
        for special in specials {
            for offset in 0..<40 {
                for length in [offset, offset + 1, offset + 9, 64] where length >= offset {
                    var body = [UInt8](repeating: 0x61, count: length)
                    body.insert(contentsOf: special, at: offset)
                    let bytes = Array(#"{"kind":"k","s":""#.utf8) + body + Array(#""}"#.utf8)
                    #expect(Self.scan(bytes) == Self.reference(bytes), "\(special) at \(offset) of \(length)")
                }
            }
        }
    }

    /// Past 16 keys duplicates are found through a set: the result must not change.
    @Test func manyKeysAgreeAndADuplicateFarInIsFound() {
        for count in [15, 16, 17, 5_000] {
            let members = (0..<count).map { #""k\#($0)":\#($0)"# }
            for extra in ["", #","k3":0"#, #","k\#(count - 1)":0"#] {
                let bytes = Array(("{" + members.joined(separator: ",") + extra + "}").utf8)
                #expect(Self.scan(bytes) == Self.reference(bytes), "\(count) keys\(extra)")
            }
        }
    }

    @Test func nestingIsLimitedAtTheParsersDepth() {
        for depth in [1, 63, 64, 65, 200] {
            let text = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
            let mixed = "{\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
            for t in [text, mixed] {
                let bytes = Array(t.utf8)
                #expect(Self.scan(bytes) == Self.reference(bytes), "depth \(depth)")
            }
        }
    }

    @Test func generatedTextsAndTheirMutationsAgree() {
        var rng = SeededGenerator(seed: 0x5EED_2026_1201)
        var accepted = 0
        for _ in 0..<3_000 {
            let valid = Array(JSONTextGenerator.object(depth: 0, rng: &rng).utf8)
            #expect(Self.scan(valid) == Self.reference(valid), "\(String(decoding: valid, as: UTF8.self))")
            if Self.scan(valid) != nil { accepted += 1 }
            var mutated = valid
            JSONTextGenerator.mutate(&mutated, rng: &rng)
            #expect(Self.scan(mutated) == Self.reference(mutated), "\(mutated)")
        }
        #expect(accepted > 2_500)
    }

    @Test func everyPayloadInTheVectorsScansAsItParses() throws {
        var checked = 0
        for vector in Vectors.validClient + Vectors.validRelay + Vectors.validPayload {
            let raw: [UInt8]
            if let member = JSONParser.rawMember(["payload"], in: ArraySlice(vector.bytes)) {
                raw = Array(member)
            } else if vector.name.hasPrefix("valid/payload") {
                raw = vector.bytes
            } else {
                continue
            }
            guard Self.reference(raw) != nil else { continue }
            #expect(Self.scan(raw) == Self.reference(raw), "\(vector.name)")
            checked += 1
        }
        #expect(checked > 10)
    }

    @Test func theFastPathsPayloadEqualsTheGeneralDecodersInSizeAndKind() throws {
        for vector in Vectors.validClient {
            guard case .send(let fast) = try FrameCodec.decodeClientFrame(vector.bytes),
                case .send(let general) = try FrameCodec.decodeClientGeneric(vector.bytes)
            else { continue }
            #expect(fast.payload.encodedSize == general.payload.encodedSize, "\(vector.name)")
            #expect(fast.payload.kind == general.payload.kind, "\(vector.name)")
            #expect(fast.payload.encoded == general.payload.encoded, "\(vector.name)")
            #expect(fast.payload == general.payload, "\(vector.name)")
        }
    }

    /// The fast path counts an id's or a kind's code points only when its UTF-8 is longer than
    /// the limit: at and around the limits, with 1- to 4-byte code points, it decides as the
    /// general decoder does (same frame, or the same error).
    @Test func idsAndKindsAtTheirLimitsDecodeAsInTheGeneralDecoder() throws {
        for scalar in ["a", "é", "€", "😀"] {
            for count in [0, 1, 16, 63, 64, 65, 127, 128, 129] {
                let text = String(repeating: scalar, count: count)
                #expect(FrameCodec.hasCodePoints(text, atMost: 64) == (1...64).contains(count))
                #expect(FrameCodec.hasCodePoints(text, atMost: 128) == (1...128).contains(count))
                for frame in [
                    #"{"id":"\#(text)","mode":"message","payload":{"kind":"k"},"type":"send"}"#,
                    #"{"id":"m1","mode":"message","payload":{"kind":"\#(text)"},"type":"send"}"#,
                ] {
                    let bytes = Array(frame.utf8)
                    let fast = Result { () throws(ProtocolError) in try FrameCodec.decodeClientFrame(bytes) }
                    let general = Result { () throws(ProtocolError) in try FrameCodec.decodeClientGeneric(bytes) }
                    switch (fast, general) {
                    case (.success(let a), .success(let b)): #expect(a == b, "\(frame)")
                    case (.failure(let a), .failure(let b)): #expect(a.code == b.code && a.field == b.field, "\(frame)")
                    default: Issue.record("the paths disagree on \(frame): \(fast) vs \(general)")
                    }
                }
            }
        }
    }

    @Test func aPayloadKeptAsBytesStillReadsAsItsMembers() throws {
        let raw = #"{ "kind" : "k", "n": 1.50, "s":"\u00e9" }"#
        let payload = try Payload(bytes: Array(raw.utf8))
        #expect(payload.kind == "k")
        #expect(payload.members == ["kind": .string("k"), "n": .double(1.5), "s": .string("é")])
        #expect(payload.encoded == Array(raw.utf8))
        #expect(payload.encodedSize == JSONWriter.encodedSize(.object(payload.members)))
        #expect(payload == Payload(kind: "k", ["n": .double(1.5), "s": .string("é")]))
        var changed = payload
        changed.members["n"] = .int(2)
        #expect(changed.encoded == Array(#"{"kind":"k","n":2,"s":"é"}"#.utf8))
        #expect(changed.encodedSize == changed.encoded.count)
        changed.members["kind"] = .int(1)
        #expect(changed.kind == nil)
    }

    @Test func storedBytesThatAreNotAnObjectGetTheParsersError() {
        for (text, code) in [("[1]", ErrorCode.badFrame), ("{", .badJSON), (#"{"a":1,"a":2}"#, .badJSON)] {
            #expect(throws: ProtocolError.self, "\(text)") { try Payload(bytes: Array(text.utf8)) }
            do {
                _ = try Payload(bytes: Array(text.utf8))
            } catch {
                #expect(error.code == code, "\(text)")
            }
        }
    }
}

extension SeededGenerator {
    /// A uniform value in 0..<n.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// Random JSON texts with the spellings that matter to the canonical size: whitespace,
/// escapes, non-ASCII, every number form, nesting, a `kind` of any type.
enum JSONTextGenerator {
    static let strings = [
        "", "a", "kind", "é", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\u0000", "\\u001F", "\\u00e9", "\\ud83d\\ude00",
        "\\b\\f\\r\\t", "tab\\tend", "€uro", "\\u2028", "long string with spaces",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "42", "1.0", "-0.0", "1.5", "1e2", "1E-2", "12.5e+3", "999999999999999999",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e15", "123456789.125", "1e308",
        "2.5e-5", "0.1",
    ]
    static let spaces = ["", "", "", " ", "\n", "\t ", "\r\n"]

    static func ws(_ rng: inout SeededGenerator) -> String { spaces[rng.below(spaces.count)] }

    static func string(_ rng: inout SeededGenerator) -> String { "\"" + strings[rng.below(strings.count)] + "\"" }

    static func value(depth: Int, rng: inout SeededGenerator) -> String {
        switch rng.below(depth > 3 ? 5 : 7) {
        case 0: return string(&rng)
        case 1: return numbers[rng.below(numbers.count)]
        case 2: return ["true", "false", "null"][rng.below(3)]
        case 3, 4: return string(&rng)
        case 5: return object(depth: depth + 1, rng: &rng)
        default:
            let n = rng.below(4)
            let items = (0..<n).map { _ in ws(&rng) + value(depth: depth + 1, rng: &rng) + ws(&rng) }
            return "[" + items.joined(separator: ",") + ws(&rng) + "]"
        }
    }

    static func object(depth: Int, rng: inout SeededGenerator) -> String {
        let n = rng.below(depth == 0 ? 7 : 4)
        var keys: [String] = []
        var members: [String] = []
        if depth == 0, rng.below(4) > 0 {
            keys.append("\"kind\"")
            members.append(ws(&rng) + "\"kind\"" + ws(&rng) + ":" + ws(&rng) + value(depth: depth, rng: &rng))
        }
        for i in 0..<n {
            // Sometimes a duplicate key, which both must refuse.
            let key = rng.below(40) == 0 && !keys.isEmpty ? keys[0] : "\"k\(i)\(strings[rng.below(strings.count)])\""
            keys.append(key)
            members.append(ws(&rng) + key + ws(&rng) + ":" + ws(&rng) + value(depth: depth, rng: &rng) + ws(&rng))
        }
        return ws(&rng) + "{" + members.joined(separator: ",") + ws(&rng) + "}" + ws(&rng)
    }

    /// Changes one byte, drops one or inserts one.
    static func mutate(_ bytes: inout [UInt8], rng: inout SeededGenerator) {
        guard !bytes.isEmpty else { return }
        let at = rng.below(bytes.count)
        let interesting: [UInt8] = [0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x30, 0x2D, 0x65, 0x00, 0x1F, 0x80, 0xC3, 0xED, 0xFF]
        switch rng.below(3) {
        case 0: bytes[at] = interesting[rng.below(interesting.count)]
        case 1: bytes.remove(at: at)
        default: bytes.insert(interesting[rng.below(interesting.count)], at: at)
        }
    }
}
