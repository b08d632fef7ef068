import RelayCore
import RelayProtocol

/// The last frames the relay saw and sent, newest first, payloads cut short: the console's
/// live frame log. A bounded ring (oldest entries leave first).
public struct FrameLog: Sendable {
    /// One frame as logged.
    public struct Entry: Sendable, Equatable {
        /// Increasing number of the entry (the page asks for entries after the last it has).
        public var number: Int
        public var at: Timestamp
        /// `in` (device → relay) or `out` (relay → device).
        public var direction: String
        public var link: LinkID
        public var pair: PairID?
        public var role: Role?
        public var type: String
        /// The frame's JSON text, at most ``FrameLog/previewBytes`` bytes of it.
        public var preview: String
        /// What a fault did to it: `dropped`, `held`, `swallowed`, or empty.
        public var fault: String
    }

    /// Bytes of a frame kept in its preview.
    public static let previewBytes = 240

    public let capacity: Int
    private var ring: [Entry] = []
    private var start = 0
    private var nextNumber = 1

    public init(capacity: Int = 500) {
        self.capacity = max(1, capacity)
    }

    /// Logs one frame's bytes (its type read from the text, its payload cut short).
    public mutating func append(
        _ bytes: [UInt8], direction: String, link: LinkID, member: (pair: PairID, role: Role)?, at: Timestamp,
        fault: String = ""
    ) {
        // A token straddling the cut is hidden too: redact a little past the preview's length.
        let head = bytes.prefix(Self.previewBytes + 64)
        let preview = Self.preview(Self.hidingTokens(head), cut: head.count < bytes.count)
        let entry = Entry(
            number: nextNumber, at: at, direction: direction, link: link, pair: member?.pair, role: member?.role,
            type: Self.type(of: bytes) ?? "?", preview: preview, fault: fault)
        nextNumber += 1
        if ring.count < capacity {
            ring.append(entry)
        } else {
            ring[start] = entry
            start = (start + 1) % capacity
        }
    }

    /// The number of the newest frame logged (0 before the first).
    public var newestNumber: Int { nextNumber - 1 }

    /// Newest first: at most `limit` entries, of `pair` only when given, numbered above `after`
    /// and below `before` (the newest `limit` of them: page back with `before`).
    public func entries(pair: PairID? = nil, after: Int = 0, before: Int = .max, limit: Int = 200) -> [Entry] {
        var out: [Entry] = []
        var i = ring.count
        while i > 0, out.count < limit {
            i -= 1
            let entry = ring[(start + i) % ring.count]
            if entry.number >= before { continue }
            if entry.number <= after { break }
            if let pair, entry.pair != pair { continue }
            out.append(entry)
        }
        return out
    }

    /// The text of the first `previewBytes` bytes, with `…` when they are not the whole frame
    /// (`cut`: `bytes` is already only its head, whatever hiding its tokens left of it).
    static func preview(_ bytes: [UInt8], cut: Bool) -> String {
        guard bytes.count > previewBytes else { return String(decoding: bytes, as: UTF8.self) + (cut ? "…" : "") }
        var cut = previewBytes
        // Never split a UTF-8 sequence: back up over continuation bytes.
        while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return String(decoding: bytes[..<cut], as: UTF8.self) + "…"
    }

    /// What a hidden token shows as.
    public static let hiddenToken = "<hidden>"

    /// `bytes` with the string value of every `"token"` member replaced by ``hiddenToken``.
    /// Device tokens are secrets (PROTOCOL.md §6.2: the relay keeps only their hash); the frame
    /// log would otherwise show each `hello`'s and `paired`'s token to whoever sees the console.
    /// A cut-off value (no closing quote) is hidden to the end.
    static func hidingTokens(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        var i = 0
        while let (at, value) = member(#""token""#, in: bytes, from: i) {
            i = at + 1
            guard case .string(let characters) = value else { continue }
            out += bytes[copied..<characters.lowerBound]
            out += Array(hiddenToken.utf8)
            copied = characters.upperBound
            i = max(i, copied)
        }
        out += bytes[copied...]
        return out
    }

    /// The value of the frame's own `"type"` member, read without parsing the whole frame
    /// (JSON whitespace may stand around its colon: a pretty-printed frame has a type too).
    ///
    /// Only a member of the outermost object counts: frames are written with their keys sorted,
    /// so a payload's members (an app's `"type"`) come before the frame's `type`.
    public static func type(of bytes: [UInt8]) -> String? {
        var depth = 0
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                // The frame is an object: an array around it makes no member a frame's.
                if depth == 0, bytes[i] == UInt8(ascii: "[") { return nil }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: "\""):
                var end = i + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard end < bytes.count else { return nil }
                if depth == 1, bytes[(i + 1)..<end].elementsEqual("type".utf8) {
                    switch value(in: bytes, after: end + 1) {
                    case .string(let characters):
                        guard characters.upperBound < bytes.count, characters.count <= 32 else { return nil }
                        return String(decoding: bytes[characters], as: UTF8.self)
                    case .notAString:
                        return nil
                    case .notAMember:
                        break
                    }
                }
                i = end
            default:
                break
            }
            i += 1
        }
        return nil
    }

    /// What follows a quoted name in a frame's text.
    private enum MemberValue {
        /// The characters of its string value, between the quotes (to the end of the text when
        /// the closing quote is missing).
        case string(Range<Int>)
        /// A `:` and a value that is not a string.
        case notAString
        /// No `:`: the name was a string value, not a member's name.
        case notAMember
    }

    /// The next occurrence of `quotedName` (with its quotes) at or after `start`, and what
    /// follows it; nil when there is none.
    private static func member(_ quotedName: String, in bytes: [UInt8], from start: Int) -> (Int, MemberValue)? {
        let name = Array(quotedName.utf8)
        var i = start
        while i + name.count <= bytes.count {
            if bytes[i] == name[0], bytes[i..<(i + name.count)].elementsEqual(name) {
                return (i, value(in: bytes, after: i + name.count))
            }
            i += 1
        }
        return nil
    }

    private static func value(in bytes: [UInt8], after nameEnd: Int) -> MemberValue {
        var j = nameEnd
        func skipSpace() {
            while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
        }
        skipSpace()
        guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { return .notAMember }
        j += 1
        skipSpace()
        guard j < bytes.count, bytes[j] == UInt8(ascii: "\"") else { return .notAString }
        var end = j + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        return .string((j + 1)..<min(end, bytes.count))
    }
}
