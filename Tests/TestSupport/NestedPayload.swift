import RelayProtocol

extension Payload {
    /// A payload whose member `v` is arrays within arrays, `depth` levels with the payload's own
    /// (`depth` ≥ 2): for the nesting limit of PROTOCOL.md §3.1.
    public static func nested(depth: Int) -> Payload {
        var value = JSONValue.array([])
        for _ in 0..<(depth - 2) { value = .array([value]) }
        return Payload(kind: "deep", ["v": value])
    }
}
