import RelayProtocol
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let v = try JSONParser.parse(Array(#"{"a":[1,-2.5,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{}}"#.utf8))
        #expect(v == ["a": [1, -2.5, true, false, nil, "x\né😀"], "b": [:]])
    }

    @Test(arguments: [
        "", " ", "{", "{\"a\":}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "tru", "\"abc", "{} {}",
        "\"\\ud800\"", "\"\\udc00x\"", "\"\\x\"", "\"a\u{01}b\"", "NaN", "[1 2]", "{\"a\" 1}", "{1:2}",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func rejectsHostileNestingWithoutExhaustingTheStack() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(Array(ok.utf8)) }
    }

    @Test func keepsIntegersExact() throws {
        #expect(try JSONParser.parse(Array("9007199254740993".utf8)) == .int(9_007_199_254_740_993))
        #expect(try JSONParser.parse(Array("1e2".utf8)) == .double(100))
    }

    @Test func writerIsCompactSortedAndRoundTrips() throws {
        let v: JSONValue = ["b": [1, "two", nil], "a": ["z": true, "y": 1.5], "é": "q\"\\\u{1}"]
        let bytes = JSONWriter.encode(v)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":{"y":1.5,"z":true},"b":[1,"two",null],"é":"q\"\\\u0001"}"#)
        #expect(try JSONParser.parse(bytes) == v)
    }
}

@Suite struct TimestampTests {
    @Test func formatsAndParsesISO8601() {
        let t = Timestamp(millisecondsSinceEpoch: 1_796_012_057_123)
        #expect(t.iso8601 == "2026-11-30T04:14:17.123Z")
        #expect(Timestamp(iso8601: "2026-11-30T04:14:17.123Z") == t)
        #expect(Timestamp(iso8601: "2026-11-30T04:14:17Z") == t.adding(milliseconds: -123))
        #expect(Timestamp(iso8601: "2026-11-30T06:14:17.123+02:00") == t)
        #expect(Timestamp(millisecondsSinceEpoch: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSinceEpoch: 253_402_300_799_999).iso8601 == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp(millisecondsSinceEpoch: 253_402_300_800_000).iso8601 == "10000-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSinceEpoch: -62_135_596_800_000).iso8601 == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSinceEpoch: 1_000_000_000_007).iso8601 == "2001-09-09T01:46:40.007Z")
        #expect(Timestamp(iso8601: "2024-02-29T00:00:00Z")?.iso8601 == "2024-02-29T00:00:00.000Z")
        #expect(Timestamp(iso8601: "2026-11-30T04:14:17.1Z") == t.adding(milliseconds: -23))
        // Found by the fuzzer: many fraction digits trapped instead of parsing.
        #expect(Timestamp(iso8601: "2026-11-30T04:14:17.1230000000000000000000000000000000090Z") == t)
    }

    @Test(arguments: ["", "2026-11-30", "2026-13-01T00:00:00Z", "2026-11-30T04:14:17", "2026-11-30T04:14:17.Z", "x026-11-30T04:14:17Z"])
    func rejectsMalformedTimestamps(_ s: String) {
        #expect(Timestamp(iso8601: s) == nil)
    }
}
