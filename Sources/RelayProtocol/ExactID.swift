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

    /// String's hash: canonically equivalent strings hash alike, so equal code points do too.
    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    public var description: String { text }
}

/// Whether two ids are the same code points (not merely canonically equivalent strings).
@inlinable public func sameID(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
}
