/// watch → relay: the watch's latest widget faces as one SVG picture, for the relay's
/// console (PROTOCOL.md §10.1). Optional: a watch that never sends it loses nothing.
///
/// The relay keeps the newest per device in memory only (never stored, never delivered to
/// the phone); it is accepted only from a paired watch and at most ``maxSVGBytes`` long.
public struct Faces: JSONRepresentable, Hashable {
    /// Most UTF-8 bytes of `svg` (over it: `payload_too_large`).
    public static let maxSVGBytes = 131_072

    public var id: String?
    /// An SVG document (`<svg …>…</svg>`); shown as an image, so scripts in it never run.
    public var svg: String

    public init(id: String? = nil, svg: String) {
        self.id = id
        self.svg = svg
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.optionalID()
        svg = try r.string("svg")
        let size = svg.utf8.count
        if size > Self.maxSVGBytes {
            throw ProtocolError(
                .payloadTooLarge, field: "svg", "svg is \(size) bytes, over the limit of \(Self.maxSVGBytes)", re: id)
        }
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("svg", svg)
        return b.json
    }
}
