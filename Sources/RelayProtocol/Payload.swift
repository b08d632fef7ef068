/// An application payload: a JSON object with a string `kind` (WC's message dictionary).
public struct Payload: JSONRepresentable, Hashable {
    /// The object's members, `kind` included.
    public var members: [String: JSONValue]

    /// Wraps an object's members as they are.
    public init(members: [String: JSONValue]) {
        self.members = members
    }

    /// A payload of `kind` with further members.
    public init(kind: String, _ fields: [String: JSONValue] = [:]) {
        var m = fields
        m["kind"] = .string(kind)
        self.members = m
    }

    /// Any JSON object (a `send` payload must also carry a string `kind`: see ``requireKind(path:frameID:)``).
    public init(reader: ObjectReader) throws(ProtocolError) {
        self.members = reader.members
    }

    /// The payload's `kind`, if it is a string.
    public var kind: String? { members["kind"]?.stringValue }

    public var json: JSONValue { .object(members) }

    /// Size in bytes of the compact UTF-8 encoding: what the per-mode limits count.
    public var encodedSize: Int { JSONWriter.encode(json).count }

    /// Fails with `bad_frame` unless `kind` is a string of 1–128 characters.
    public func requireKind(path: String, frameID: String?) throws(ProtocolError) {
        _ = try ObjectReader(members, path: path, frameID: frameID).string("kind", length: 1...128)
    }

    /// Decodes an app payload type from this payload.
    public func decode<T: JSONRepresentable>(_ type: T.Type = T.self) throws(ProtocolError) -> T {
        try T(reader: ObjectReader(members, path: "payload"))
    }
}

extension JSONRepresentable {
    /// This value as a ``Payload`` (for app payload models).
    public var payload: Payload { Payload(members: json.objectValue ?? [:]) }
}
