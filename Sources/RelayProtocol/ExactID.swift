/// An id as its exact code points (PROTOCOL.md §3.3), for sets and dictionary keys.
///
/// Swift's `String` compares canonically equivalent strings as equal (`"\u{E9}" == "e\u{301}"`,
/// `"\u{212B}" == "\u{C5}"`). Ids are strings of code points: two that differ only by Unicode
/// normalization are two ids. A table keyed by `String` took the second for a retry of the
/// first (answered `accepted`, never stored), and a `cancel` or `reply` for one reached the other.
public struct ExactID: Hashable, Sendable, CustomStringConvertible {
    /// The id.
    public let text: String

    /// `text` as an exact key.
    @inlinable public init(_ text: String) { self.text = text }

    @inlinable public static func == (a: ExactID, b: ExactID) -> Bool { sameID(a.text, b.text) }

    /// The UTF-8 bytes' hash, eight at a time. Not `String`'s: it hashes every canonically
    /// equivalent spelling alike, and an id of 21 base letters with two combining marks each
    /// has 2^21 spellings that are different ids — a paired client could fill a queue with
    /// ids of one hash and make every lookup in it walk them all.
    @inlinable public func hash(into hasher: inout Hasher) {
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in text.utf8 {
            word |= UInt64(byte) &<< shift
            shift += 8
            if shift == 64 {
                hasher.combine(word)
                (word, shift) = (0, 0)
            }
        }
        hasher.combine(word)
        hasher.combine(text.utf8.count)
    }

    public var description: String { text }
}

/// Whether two ids are the same code points (not merely canonically equivalent strings).
@inlinable public func sameID(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
}
