import Primitives

/// A JSON object checked and measured without building it: what the relay needs of a payload.
///
/// The relay never reads a payload's members, only its `kind` and the size of its canonical
/// compact encoding (§3.6). Decoding a 64 KiB payload into a ``JSONValue`` tree only to count
/// what ``JSONWriter`` would write was most of the relay's time per message (perf, 2026-12-01),
/// so the scan does both in one pass over the sender's bytes, allocating only object keys.
struct JSONObjectScan: Equatable {
    /// The top-level `kind` member, when it is there.
    enum Kind: Equatable {
        case missing
        case string(String)
        /// `kind` is there but not a string.
        case other
    }

    /// Bytes of ``JSONWriter/encode(_:)`` of the parsed object.
    var canonicalSize: Int
    var kind: Kind
}

/// The scan accepts exactly what ``JSONParser/parse(_:maxDepth:)`` accepts and counts exactly
/// what ``JSONWriter/encodedSize(_:)`` would count for the parsed value: the tests compare both
/// on every vector and on generated texts. Its errors are only a signal; callers that must name
/// the error parse the bytes again with the parser.
extension JSONParser {
    /// Scans one JSON object that fills `bytes` entirely (as ``parse(_:maxDepth:)`` would, top
    /// level at depth 0); `nil` if the bytes are anything else or not valid JSON.
    static func scanObject(_ bytes: Span<UInt8>, maxDepth: Int = defaultMaxDepth) -> JSONObjectScan? {
        var p = JSONParser(buf: bytes, maxDepth: maxDepth)
        p.skipWhitespace()
        guard p.pos < bytes.count, bytes[p.pos] == UInt8(ascii: "{") else { return nil }
        var kind = JSONObjectScan.Kind.missing
        guard let size = try? p.scanObject(depth: 1, kind: &kind) else { return nil }
        p.skipWhitespace()
        return p.pos == bytes.count ? JSONObjectScan(canonicalSize: size, kind: kind) : nil
    }

    /// Scans the object at the current position, as ``parseValue(depth:)`` would parse it at
    /// `depth - 1` (the caller has seen the `{`); records its `kind` member in `kind`.
    mutating func scanObject(depth: Int, kind: inout JSONObjectScan.Kind) throws(Failure) -> Int {
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        var size = 2
        // Duplicate keys are refused. Up to 16 keys of printable ASCII without escapes (every
        // payload key in practice) are kept as their byte ranges and compared as bytes (for
        // ASCII, equal bytes is equal strings): no string is made and nothing is allocated. A
        // key of any other kind, or a 17th, moves them all into a set, which keeps a hostile
        // payload (thousands of keys in 64 KiB) from costing quadratic time on the lws thread.
        var plainKeys = InlineArray<16, Range<Int>>(repeating: 0..<0)
        var plainKeyCount = 0
        var keySet: Set<String>?
        var members = 0
        skipWhitespace()
        if pos < buf.count, buf[pos] == UInt8(ascii: "}") {
            pos += 1
            return size
        }
        while true {
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyStart = pos
            let isKind: Bool
            if keySet == nil, plainKeyCount < plainKeys.count, let key = plainString() {
                for i in 0..<plainKeyCount where matches(plainKeys[i], key) {
                    throw fail("duplicate key \(Excerpt.quoted(string(key)))")
                }
                plainKeys[plainKeyCount] = key
                plainKeyCount += 1
                size += key.count + 2  // written back as it came
                isKind = matches(key, "kind")
            } else {
                pos = keyStart
                let key = try parseString()
                if keySet == nil {
                    var set = Set<String>(minimumCapacity: 2 * plainKeys.count)
                    for i in 0..<plainKeyCount { set.insert(string(plainKeys[i])) }
                    keySet = set
                }
                let (inserted, held) = keySet!.insert(key)
                guard inserted else { throw fail(Self.duplicateKey(key, held)) }
                size += Self.canonicalSize(of: key, rawBytes: pos - keyStart)
                isKind = key == "kind"
            }
            members += 1
            if members > 1 { size += 1 }  // the comma before it
            size += 1  // the colon
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            skipWhitespace()
            if isKind {
                if pos < buf.count, buf[pos] == UInt8(ascii: "\"") {
                    let valueStart = pos
                    let value = try parseString()
                    kind = .string(value)
                    size += Self.canonicalSize(of: value, rawBytes: pos - valueStart)
                } else {
                    kind = .other
                    size += try scanValue(depth: depth)
                }
            } else {
                size += try scanValue(depth: depth)
            }
            skipWhitespace()
            guard pos < buf.count else { throw fail("unexpected end of input") }
            if buf[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if buf[pos] == UInt8(ascii: "}") {
                pos += 1
                return size
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    /// The canonical size of a string just parsed from `rawBytes` bytes of JSON, quotes included.
    /// Unescaped (the raw text is its UTF-8 and two quotes: any escape is longer than what it
    /// stands for), it contains nothing ``JSONWriter`` escapes (no `"`, `\` or control byte can
    /// stand unescaped in a JSON string), so it is written back as it came; only a string that
    /// had escapes is measured.
    @inline(__always)
    static func canonicalSize(of parsed: String, rawBytes: Int) -> Int {
        rawBytes == parsed.utf8.count + 2 ? rawBytes : JSONWriter.encodedSize(.string(parsed))
    }

    /// The canonical size of the value at the current position (``parseValue(depth:)``'s rules).
    private mutating func scanValue(depth: Int) throws(Failure) -> Int {
        guard pos < buf.count else { throw fail("unexpected end of input") }
        switch buf[pos] {
        case UInt8(ascii: "{"):
            var nestedKind = JSONObjectScan.Kind.missing  // only the top level's `kind` counts
            return try scanObject(depth: depth + 1, kind: &nestedKind)
        case UInt8(ascii: "["): return try scanArray(depth: depth + 1)
        case UInt8(ascii: "\""): return try scanString()
        case UInt8(ascii: "t"): try expectLiteral("true"); return 4
        case UInt8(ascii: "f"): try expectLiteral("false"); return 5
        case UInt8(ascii: "n"): try expectLiteral("null"); return 4
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try scanNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func scanArray(depth: Int) throws(Failure) -> Int {
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        var size = 2
        var count = 0
        skipWhitespace()
        if pos < buf.count, buf[pos] == UInt8(ascii: "]") {
            pos += 1
            return size
        }
        while true {
            skipWhitespace()
            size += try scanValue(depth: depth)
            if count > 0 { size += 1 }
            count += 1
            skipWhitespace()
            guard pos < buf.count else { throw fail("unexpected end of input") }
            if buf[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if buf[pos] == UInt8(ascii: "]") {
                pos += 1
                return size
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    /// A number's canonical size: integers that fit `Int64` keep their spelling (but `-0` is
    /// `0`); everything else is what ``JSONWriter`` writes for the `Double` (rare in payloads, so
    /// only that case makes a `String`).
    private mutating func scanNumber() throws(Failure) -> Int {
        let number = try readNumber()
        if number.isInteger, number.integerDigits <= 18 {
            // Fits Int64 whatever the digits; written back as spelled, except "-0".
            return number.isNegativeZero ? 1 : pos - number.start
        }
        let text = string(number.start..<pos)
        if number.isInteger, let i = Int64(text) { return JSONWriter.encodedSize(.int(i)) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range") }
        return JSONWriter.encodedSize(.double(d))
    }

    /// A string value's canonical size, quotes included, validated as ``parseString()`` does:
    /// no control characters, valid escapes and surrogate pairs, valid UTF-8.
    private mutating func scanString() throws(Failure) -> Int {
        pos += 1  // opening quote
        var size = 2
        while true {
            // 64, 32, then 8 plain bytes at a time: a 64 KiB payload is mostly one long string,
            // and byte-at-a-time this loop was 35 % of the relay's time per message (perf).
            let run = plainRun()
            pos += run
            size += run
            guard pos < buf.count else { throw fail("unterminated string") }
            let b = buf[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                return size
            }
            if b < 0x20 { throw fail("control character in string") }
            if b == UInt8(ascii: "\\") {
                size += try scanEscape()
            } else if b < 0x80 {
                size += 1
                pos += 1
            } else {
                let n = utf8SequenceLength(at: pos)
                if n == 0 { throw fail("invalid UTF-8 in string") }
                size += n
                pos += n
            }
        }
    }

    /// How many bytes from `pos` on, in whole blocks of 64, then 32, then words of eight, are
    /// plain string bytes (ASCII, not a control character, `"` or `\`): they count one byte each
    /// in the canonical encoding.
    ///
    /// 32 bytes a step as two 16-byte vectors: on a 64 KiB string this was 2.5 µs through a raw
    /// pointer, against 7.6 µs eight bytes a step (`-O`, the AMD EPYC VM), and the scan was 7–8 %
    /// of the relay's time per 64 KiB message (perf, 2026-12-02); relay CPU per 64 KiB message
    /// 114.4 → 105.8 µs. On the Intel Xeon VM of 2026-12-03, through the span: 4.8 µs 32 bytes
    /// a step, 4.0 µs 64 bytes a step (four vectors tested with one branch), where the scan was
    /// again 6.2 % of the relay's samples per 64 KiB message.
    ///
    /// The loads read the span's bytes, bounds-checked like every other read here (3.5 µs
    /// through a raw pointer against 4.5 µs through the span, 32 bytes a step, on the Xeon
    /// VM). They are `unsafe` only for the types they
    /// make: a byte span has no padding to read, and every bit pattern is a valid
    /// `SIMD16<UInt8>` or `UInt64`.
    private func plainRun() -> Int {
        let raw = unsafe buf.bytes
        var i = pos
        while i + 64 <= buf.count {
            let special =
                (Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self))
                    | Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i + 16, as: SIMD16<UInt8>.self)))
                | (Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i + 32, as: SIMD16<UInt8>.self))
                    | Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i + 48, as: SIMD16<UInt8>.self)))
            if special[0] | special[1] != 0 { break }
            i += 64
        }
        while i + 32 <= buf.count {
            let special =
                Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self))
                | Self.specialBytes(unsafe raw.unsafeLoadUnaligned(fromByteOffset: i + 16, as: SIMD16<UInt8>.self))
            if special[0] | special[1] != 0 { break }
            i += 32
        }
        while i + 8 <= buf.count {
            let word = unsafe raw.unsafeLoadUnaligned(fromByteOffset: i, as: UInt64.self)
            if Self.hasSpecialByte(word) { break }
            i += 8
        }
        return i - pos
    }

    /// The refusal of a member name `key` after `held`: the same name twice, or (§3.1) two names
    /// that differ only by Unicode normalization, which a Swift dictionary (a payload's
    /// `[String: Any]` on the receiving side) cannot hold both of.
    /// Names are quoted cut (``Excerpt``) and at most ``namedCodePoints`` code points of each are
    /// listed: a client's name may be most of a mebibyte, and the error must not echo it.
    static func duplicateKey(_ key: String, _ held: String) -> String {
        if sameID(key, held) { return "duplicate key \(Excerpt.quoted(key))" }
        let codePoints = { (s: String) in
            s.unicodeScalars.prefix(namedCodePoints).map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
                + (s.unicodeScalars.count > namedCodePoints ? " …" : "")
        }
        return "keys \(Excerpt.quoted(held)) (\(codePoints(held))) and \(Excerpt.quoted(key)) (\(codePoints(key))) differ only by "
            + "Unicode normalization: a dictionary on the receiving side holds one of them"
    }

    /// How many code points of a name ``duplicateKey(_:_:)`` lists.
    static let namedCodePoints = 24

    /// Nonzero lanes where a byte of `bytes` is ≥ 0x80 or < 0x20, `"` (0x22) or `\` (0x5C);
    /// zero if there is none. The casts reinterpret 16 bytes as 16 bytes (a mask's lanes are 0
    /// or -1), valid for every bit pattern.
    ///
    /// One comparison finds three of the four: flipping bit 1 turns `"` into 0x20 and no other
    /// byte into it, keeps every byte below 0x20 below it and every byte ≥ 0x80 negative, so
    /// "below 0x21 as a signed byte" is exactly "below 0x20, ≥ 0x80 or `"`" (checked for all 256
    /// bytes in `JSONScanTests`).
    @inline(__always)
    static func specialBytes(_ bytes: SIMD16<UInt8>) -> SIMD2<UInt64> {
        // The constants' types are spelled out: written `SIMD16(repeating:)`, the release build
        // compared lane by lane (a loop of 16 per comparison, 12× slower than eight bytes a step).
        let flipped = unsafe unsafeBitCast(bytes ^ SIMD16<UInt8>(repeating: 0x02), to: SIMD16<Int8>.self)
        let mask = (flipped .< SIMD16<Int8>(repeating: 0x21)) .| (bytes .== SIMD16<UInt8>(repeating: 0x5C))
        return unsafe unsafeBitCast(mask, to: SIMD2<UInt64>.self)
    }

    /// Whether any byte of `word` is ≥ 0x80, < 0x20, `"` (0x22) or `\` (0x5C). Exact for "any"
    /// (the classic has-zero-byte tricks never miss one), which is all the caller needs.
    static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let below20 = (word &- ones &* 0x20) & ~word
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        return (word | below20 | isQuote | isBackslash) & highs != 0
    }

    /// One escape (at the backslash): the size of what ``JSONWriter`` writes for what it means.
    private mutating func scanEscape() throws(Failure) -> Int {
        pos += 1
        guard pos < buf.count else { throw fail("unterminated escape") }
        let e = buf[pos]
        pos += 1
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            return 2
        case UInt8(ascii: "/"): return 1
        case UInt8(ascii: "u"):
            let scalar = try readUnicodeEscape()
            switch scalar {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: return 2
            case 0..<0x20: return 6
            case 0..<0x80: return 1
            case 0..<0x800: return 2
            case 0..<0x10000: return 3
            default: return 4
            }
        default:
            throw fail("invalid escape")
        }
    }

    /// The length of the well-formed UTF-8 sequence of a non-ASCII lead byte at `i`, or 0 if
    /// it is not one (overlong forms, surrogates and code points above U+10FFFF are not).
    private func utf8SequenceLength(at i: Int) -> Int {
        let lead = buf[i]
        let n: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: n = 2
        case 0xE0: n = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: n = 3
        case 0xED: n = 3; high = 0x9F
        case 0xF0: n = 4; low = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4: n = 4; high = 0x8F
        default: return 0
        }
        guard i + n <= buf.count else { return 0 }
        let second = buf[i + 1]
        guard second >= low, second <= high else { return 0 }
        for k in 2..<n where buf[i + k] & 0xC0 != 0x80 { return 0 }
        return n
    }
}
