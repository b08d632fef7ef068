/// Encodes ``JSONValue`` as compact UTF-8 JSON with sorted object keys.
///
/// Deterministic: the same value always gives the same bytes, which is what the payload
/// size limits count ("re-encoded as compact UTF-8 JSON") and what golden files compare.
public enum JSONWriter {
    /// The compact encoding of `value`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(value, into: &out)
        return out
    }

    /// The byte length of ``encode(_:)``'s result, counted without writing it (the size a
    /// payload's limit counts, §3.6, for a payload kept as the sender's bytes).
    public static func encodedSize(_ value: JSONValue) -> Int {
        var counter = JSONByteCounter()
        emit(value, into: &counter)
        return counter.count
    }

    /// Appends the compact encoding of `value` to `out`.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        emit(value, into: &out)
    }

    private static func emit<Sink: JSONByteSink>(_ value: JSONValue, into out: inout Sink) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): emitDouble(d, into: &out)
        case .string(let s): emitString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                emit(e, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            var first = true
            if Sink.isOrdered {
                for key in o.keys.sorted(by: utf8Less) { emitMember(key, o[key]!, first: &first, into: &out) }
            } else {
                // A counter needs no order: the size does not depend on it.
                for (key, member) in o { emitMember(key, member, first: &first, into: &out) }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func emitMember<Sink: JSONByteSink>(
        _ key: String, _ value: JSONValue, first: inout Bool, into out: inout Sink
    ) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        emitString(key, into: &out)
        out.append(UInt8(ascii: ":"))
        emit(value, into: &out)
    }

    /// Orders keys by their UTF-8 bytes, which is code-point order (as Python's `sort_keys`).
    static func utf8Less(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    private static func emitDouble<Sink: JSONByteSink>(_ d: Double, into out: inout Sink) {
        guard d.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        // -0.0 is `Int64(exactly:)` 0: written as "0.0" it lost its sign (a property list
        // keeps it); `description` spells it "-0.0".
        if abs(d) < 1e15, let i = Int64(exactly: d), d != 0 || d.sign == .plus {
            out.append(contentsOf: String(i).utf8)
            out.append(contentsOf: ".0".utf8)
            return
        }
        out.append(contentsOf: d.description.utf8)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `value` in decimal, as `String(value)` spells it, without making the String:
    /// every `deliver` carries a `seq` and many an `accepted` a `remaining` (perf of the 64 B
    /// message path, 2026-12-03: `String(Int)` ~1 % of the relay's time).
    public static func writeDecimal<T: BinaryInteger>(_ value: T, into out: inout [UInt8]) {
        guard value >= 0, let magnitude = UInt64(exactly: value) else {
            out.append(contentsOf: String(value).utf8)
            return
        }
        var count = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        rest = magnitude
        var i = start + count - 1
        while rest >= 10 {
            out[i] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            i -= 1
        }
        out[i] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest)
    }

    /// Writes a JSON string literal, escaping only what JSON requires.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        emitString(s, into: &out)
    }

    /// Whether `s` has a byte JSON must escape. Read through the string's `Span` (no unsafe
    /// pointer, no per-byte iterator): the relay's size check of a 64 KiB payload spent 39 % of
    /// its time in `utf8.contains(where:)` here (perf, 2026-12-01); the span loop is ~3× faster.
    private static func needsEscape(_ s: String) -> Bool {
        let bytes = s.utf8.span
        for i in bytes.indices {
            let b = bytes[i]
            if b < 0x20 || b == 0x22 || b == 0x5C { return true }
        }
        return false
    }

    private static func emitString<Sink: JSONByteSink>(_ s: String, into out: inout Sink) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole.
        if !needsEscape(s) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Where ``JSONWriter`` puts its bytes: an array, or a counter that only measures.
protocol JSONByteSink {
    /// Whether object keys must come in order (an array) or may come in any (a counter).
    static var isOrdered: Bool { get }
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: String.UTF8View)
    mutating func append(contentsOf bytes: [UInt8])
}

extension Array: JSONByteSink where Element == UInt8 {
    static var isOrdered: Bool { true }
}

/// Counts what ``JSONWriter`` would write.
struct JSONByteCounter: JSONByteSink {
    var count = 0
    static var isOrdered: Bool { false }
    mutating func append(_ byte: UInt8) { count += 1 }
    mutating func append(contentsOf bytes: String.UTF8View) { count += bytes.count }
    mutating func append(contentsOf bytes: [UInt8]) { count += bytes.count }
}
