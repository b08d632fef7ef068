/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Rejects invalid UTF-8, lone surrogate escapes, control characters in strings, leading
/// zeros, trailing garbage and nesting deeper than ``maxDepth`` (hostile input must get an
/// error, never exhaust the stack) and duplicate object keys (ambiguous: which one counts?).
///
/// It reads the bytes through a `Span` (so it cannot outlive them: `~Escapable`), and every read
/// is bounds-checked: this is the relay's first contact with a peer's bytes, and DESIGN.md keeps
/// unsafe pointers in WebSocketTransport.
public struct JSONParser: ~Escapable {
    /// The deepest nesting of arrays and objects accepted (default 64).
    public static let defaultMaxDepth = 64

    /// Why parsing failed, with the byte offset.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Parses one JSON text that fills `bytes` entirely.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        let array = Array(bytes)
        var p = JSONParser(buf: array.span, maxDepth: maxDepth)
        p.skipWhitespace()
        let v = try p.parseValue(depth: 0)
        p.skipWhitespace()
        if p.pos != array.count { throw p.fail("trailing characters after the JSON value") }
        return v
    }

    /// The members of a top-level object, in order (``rawMember(_:in:)``): `nil` for anything
    /// else or anything wrong (not an object, a duplicate key, more than 16 members, trailing
    /// bytes, …).
    ///
    /// Each member carries the byte range of its value in `bytes`, so a payload can keep the
    /// sender's bytes exactly as they came.
    static func topLevelMembers(_ bytes: ArraySlice<UInt8>) -> [TopLevelMember]? {
        var p = JSONParser(buf: bytes.span, maxDepth: defaultMaxDepth)
        return try? p.parseTopLevelMembers()
    }

    /// One member of a top-level object, with the range of its value's bytes (offsets from the start).
    typealias TopLevelMember = (key: String, value: JSONValue, range: Range<Int>)

    /// The bytes of the value at `path` (member names, outermost first) in an object already
    /// known to be valid JSON; `nil` when a name is missing or a value on the way is not an object.
    static func rawMember(_ path: [String], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let first = path.first, let members = topLevelMembers(bytes),
            let member = members.first(where: { $0.key == first })
        else { return nil }
        let start = bytes.startIndex
        let raw = bytes[(start + member.range.lowerBound)..<(start + member.range.upperBound)]
        return path.count == 1 ? raw : rawMember(Array(path.dropFirst()), in: raw)
    }

    private mutating func parseTopLevelMembers() throws(Failure) -> [TopLevelMember]? {
        skipWhitespace()
        guard pos < buf.count, buf[pos] == UInt8(ascii: "{") else { return nil }
        pos += 1
        var members: [TopLevelMember] = []
        members.reserveCapacity(8)
        skipWhitespace()
        if pos < buf.count, buf[pos] == UInt8(ascii: "}") {
            pos += 1
        } else {
            while true {
                skipWhitespace()
                guard pos < buf.count, buf[pos] == UInt8(ascii: "\"") else { return nil }
                let key = try parseString()
                // Frames are small: a linear scan finds duplicates without hashing. A frame with
                // more members than any frame type has goes to the general path (a dictionary),
                // so a hostile one cannot make this scan quadratic.
                if members.count >= 16 || members.contains(where: { $0.key == key }) { return nil }
                skipWhitespace()
                guard pos < buf.count, buf[pos] == UInt8(ascii: ":") else { return nil }
                pos += 1
                skipWhitespace()
                let start = pos
                let value = try parseValue(depth: 1)
                members.append((key, value, start..<pos))
                guard let last = afterMember() else { return nil }
                if last { break }
            }
        }
        skipWhitespace()
        return pos == buf.count ? members : nil
    }

    /// Whether the bytes in `range` are `text`'s UTF-8 (a literal: its `utf8` view reads the
    /// bytes in place).
    @inline(__always)
    func matches(_ range: Range<Int>, _ text: String) -> Bool {
        let expected = text.utf8
        guard range.count == expected.count else { return false }
        var i = range.lowerBound
        for byte in expected {
            if buf[i] != byte { return false }
            i += 1
        }
        return true
    }

    /// Whether the bytes in two ranges are the same.
    @inline(__always)
    func matches(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i < a.count {
            if buf[a.lowerBound + i] != buf[b.lowerBound + i] { return false }
            i += 1
        }
        return true
    }

    /// The bytes of the string at `pos` (its opening quote) when it is printable ASCII with no
    /// escape, moving past its closing quote; nil otherwise (with `pos` anywhere in the string:
    /// the caller gives up or goes back).
    mutating func plainString() -> Range<Int>? {
        pos += 1
        let start = pos
        while pos < buf.count {
            let b = buf[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                return start..<(pos - 1)
            }
            if b < 0x20 || b >= 0x80 || b == UInt8(ascii: "\\") { return nil }
            pos += 1
        }
        return nil
    }

    /// Past what follows an object's member: `false` after a `,` (another member comes), `true`
    /// after the closing `}`, nil for anything else.
    mutating func afterMember() -> Bool? {
        skipWhitespace()
        guard pos < buf.count else { return nil }
        switch buf[pos] {
        case UInt8(ascii: ","): pos += 1; return false
        case UInt8(ascii: "}"): pos += 1; return true
        default: return nil
        }
    }

    let buf: Span<UInt8>
    var pos = 0
    let maxDepth: Int

    @_lifetime(copy buf)
    init(buf: Span<UInt8>, maxDepth: Int) {
        self.buf = buf
        self.maxDepth = maxDepth
    }

    func fail(_ reason: String) -> Failure { Failure(offset: pos, reason: reason) }

    @inline(__always)
    mutating func skipWhitespace() {
        while pos < buf.count {
            switch buf[pos] {
            case 0x20, 0x0A, 0x0D, 0x09: pos += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard pos < buf.count else { throw fail("unexpected end of input") }
        switch buf[pos] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func expectLiteral(_ word: String) throws(Failure) {
        let n = word.utf8.count
        guard pos + n <= buf.count, matches(pos..<pos + n, word) else {
            throw fail(pos + n <= buf.count ? "invalid literal" : "unexpected end of input")
        }
        pos += n
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if pos < buf.count, buf[pos] == UInt8(ascii: "}") {
            pos += 1
            return .object(members)
        }
        // Frames have up to 8 fields: one allocation instead of growing 1 → 2 → 4 → 8.
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            skipWhitespace()
            let keyOffset = pos
            if members.updateValue(try parseValue(depth: depth), forKey: key) != nil {
                // The dictionary keeps the first spelling of the key: compare the two.
                let held = members.index(forKey: key).map { members[$0].key } ?? key
                throw Failure(offset: keyOffset, reason: Self.duplicateKey(key, held))
            }
            skipWhitespace()
            guard pos < buf.count else { throw fail("unexpected end of input") }
            if buf[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if buf[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(members)
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth)") }
        pos += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if pos < buf.count, buf[pos] == UInt8(ascii: "]") {
            pos += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard pos < buf.count else { throw fail("unexpected end of input") }
            if buf[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if buf[pos] == UInt8(ascii: "]") {
                pos += 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(Failure) -> JSONValue {
        let number = try readNumber()
        let text = string(number.start..<pos)
        if number.isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range") }
        return .double(d)
    }

    /// Where a number's text lies and what its spelling says (read by ``readNumber()``).
    struct NumberText {
        var start: Int
        /// No fraction and no exponent.
        var isInteger: Bool
        /// Digits of the integer part.
        var integerDigits: Int
        /// The text is exactly `-0`.
        var isNegativeZero: Bool
    }

    /// Reads one number (RFC 8259's grammar, leading zeros refused) up to its last byte.
    mutating func readNumber() throws(Failure) -> NumberText {
        let start = pos
        var isInteger = true
        if buf[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < buf.count, isDigit(buf[pos]) else { throw fail("invalid number") }
        let digitsStart = pos
        if buf[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < buf.count, isDigit(buf[pos]) { throw fail("leading zero in number") }
        } else {
            while pos < buf.count, isDigit(buf[pos]) { pos += 1 }
        }
        let integerDigits = pos - digitsStart
        if pos < buf.count, buf[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < buf.count, isDigit(buf[pos]) else { throw fail("invalid fraction") }
            while pos < buf.count, isDigit(buf[pos]) { pos += 1 }
        }
        if pos < buf.count, buf[pos] == UInt8(ascii: "e") || buf[pos] == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if pos < buf.count, buf[pos] == UInt8(ascii: "+") || buf[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < buf.count, isDigit(buf[pos]) else { throw fail("invalid exponent") }
            while pos < buf.count, isDigit(buf[pos]) { pos += 1 }
        }
        let isNegativeZero = isInteger && pos - start == 2 && buf[start] == UInt8(ascii: "-") && buf[start + 1] == UInt8(ascii: "0")
        return NumberText(start: start, isInteger: isInteger, integerDigits: integerDigits, isNegativeZero: isNegativeZero)
    }

    /// The bytes in `range`, known to be ASCII (a number, a plain string), as a `String`.
    func string(_ range: Range<Int>) -> String {
        validString(range) ?? ""
    }

    /// The bytes in `range` as a `String`, or nil if they are not valid UTF-8.
    func validString(_ range: Range<Int>) -> String? {
        guard let utf8 = try? UTF8Span(validating: buf.extracting(range)) else { return nil }
        return String(copying: utf8)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    mutating func parseString() throws(Failure) -> String {
        pos += 1  // opening quote
        let start = pos
        // Fast path: no escapes, ASCII or valid UTF-8 without control characters.
        var sawEscape = false
        var sawNonASCII = false
        while pos < buf.count {
            let b = buf[pos]
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") { sawEscape = true; break }
            if b < 0x20 { throw fail("control character in string") }
            if b >= 0x80 { sawNonASCII = true }
            pos += 1
        }
        guard pos < buf.count else { throw fail("unterminated string") }
        if !sawEscape {
            let range = start..<pos
            pos += 1
            if sawNonASCII {
                guard let s = validString(range) else { throw fail("invalid UTF-8 in string") }
                return s
            }
            return string(range)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pos - start + 16)
        for i in start..<pos { bytes.append(buf[i]) }
        while true {
            guard pos < buf.count else { throw fail("unterminated string") }
            let b = buf[pos]
            if b == UInt8(ascii: "\"") { pos += 1; break }
            if b < 0x20 { throw fail("control character in string") }
            if b != UInt8(ascii: "\\") {
                bytes.append(b)
                pos += 1
                continue
            }
            pos += 1
            guard pos < buf.count else { throw fail("unterminated escape") }
            let e = buf[pos]
            pos += 1
            switch e {
            case UInt8(ascii: "\""): bytes.append(0x22)
            case UInt8(ascii: "\\"): bytes.append(0x5C)
            case UInt8(ascii: "/"): bytes.append(0x2F)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                guard let u = Unicode.Scalar(try readUnicodeEscape()) else { throw fail("invalid unicode escape") }
                bytes.append(contentsOf: UTF8.encode(u).map { Array($0) } ?? [])
            default:
                throw fail("invalid escape")
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return s
    }

    /// The code point of a `\u` escape (after the `u`), a surrogate pair read as one; lone
    /// surrogates are refused.
    mutating func readUnicodeEscape() throws(Failure) -> UInt32 {
        let scalar = try parseHex4()
        if (0xDC00...0xDFFF).contains(scalar) { throw fail("lone surrogate escape") }
        guard (0xD800...0xDBFF).contains(scalar) else { return scalar }
        guard pos + 1 < buf.count, buf[pos] == UInt8(ascii: "\\"), buf[pos + 1] == UInt8(ascii: "u")
        else { throw fail("lone surrogate escape") }
        pos += 2
        let low = try parseHex4()
        guard (0xDC00...0xDFFF).contains(low) else { throw fail("lone surrogate escape") }
        return 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard pos + 4 <= buf.count else { throw fail("truncated unicode escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = buf[pos]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("invalid unicode escape")
            }
            v = v << 4 | d
            pos += 1
        }
        return v
    }
}
