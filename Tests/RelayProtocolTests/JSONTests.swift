import Foundation
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

@Suite struct JSONWriterDecimalTests {
    /// `writeDecimal` stands in for `String(value)` in the hot frames: it must spell every
    /// integer the same way, at the edges and in between.
    @Test func decimalsAreWrittenAsStringWouldWriteThem() {
        var values: [Int64] = [0, 1, 9, 10, 99, 100, -1, -9, -10, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { values.append(Int64.random(in: .min ... .max, using: &generator)) }
        for v in values {
            var out: [UInt8] = [0x41]
            JSONWriter.writeDecimal(v, into: &out)
            #expect(out == [0x41] + Array(String(v).utf8), "\(v)")
            var small: [UInt8] = []
            JSONWriter.writeDecimal(Int(truncatingIfNeeded: v), into: &small)
            #expect(small == Array(String(Int(truncatingIfNeeded: v)).utf8))
        }
        var big: [UInt8] = []
        JSONWriter.writeDecimal(UInt64.max, into: &big)
        #expect(big == Array("18446744073709551615".utf8))
    }
}

extension TimestampTests {
    /// The fixed-width writer (years 0...9999) against Foundation's formatter, and back through
    /// the parser; years outside that range keep the general form.
    @Test func theFixedWidthFormAgreesWithTheGeneralOne() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let from1600: Int64 = -11_676_096_000_000  // 1600-01-01T00:00:00Z
        let year0001: Int64 = -62_135_596_800_000
        let year9999End: Int64 = 253_402_300_799_999
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let ms = Int64.random(in: from1600...year9999End, using: &generator)
            let t = Timestamp(millisecondsSinceEpoch: ms)
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            #expect(t.iso8601 == formatter.string(from: date), "\(ms)")
            let anyYear = Timestamp(millisecondsSinceEpoch: Int64.random(in: year0001...year9999End, using: &generator))
            #expect(Timestamp(iso8601: anyYear.iso8601) == anyYear)
        }
        #expect(Timestamp(millisecondsSinceEpoch: year0001 - 1).iso8601 == "0000-12-31T23:59:59.999Z")
        #expect(Timestamp(millisecondsSinceEpoch: -62_167_219_200_001).iso8601 == "-1-12-31T23:59:59.999Z")
    }
}
