/// An application payload: a JSON object with a string `kind` (WC's message dictionary).
///
/// The compact, key-sorted encoding is computed once, when the payload is made (or its
/// members change), and kept: the relay checks the size limit, stores, and splices the
/// payload into `deliver` frames from these bytes instead of re-encoding it each time.
public struct Payload: JSONRepresentable, Hashable {
    /// The object's members, `kind` included.
    public var members: [String: JSONValue] {
        didSet { encoded = JSONWriter.encode(.object(members)) }
    }

    /// The compact, key-sorted UTF-8 JSON of ``members`` (what ``JSONWriter`` writes).
    public private(set) var encoded: [UInt8]

    /// Wraps an object's members as they are.
    public init(members: [String: JSONValue]) {
        self.members = members
        self.encoded = JSONWriter.encode(.object(members))
    }

    /// A payload of `kind` with further members.
    public init(kind: String, _ fields: [String: JSONValue] = [:]) {
        var m = fields
        m["kind"] = .string(kind)
        self.init(members: m)
    }

    /// Any JSON object (a `send` payload must also carry a string `kind`: see ``requireKind(path:frameID:)``).
    public init(reader: ObjectReader) throws(ProtocolError) {
        self.init(members: reader.members)
    }

    public static func == (a: Payload, b: Payload) -> Bool { a.encoded == b.encoded }

    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    /// The payload's `kind`, if it is a string.
    public var kind: String? { members["kind"]?.stringValue }

    public var json: JSONValue { .object(members) }

    /// Size in bytes of the compact UTF-8 encoding: what the per-mode limits count.
    public var encodedSize: Int { encoded.count }

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
