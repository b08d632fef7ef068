/// An application payload: a JSON object with a string `kind` (WC's message dictionary).
///
/// A payload keeps its bytes: decoded from a client frame or from the store, they are the
/// sender's bytes exactly as received (whitespace, escapes, number spelling: PROTOCOL.md §3.7),
/// already validated as one strict JSON object; made here, they are the compact, key-sorted
/// encoding. The relay stores them and splices them into `deliver` and `reply` frames as they
/// are, never re-encoding. Changing ``members`` replaces them with the compact encoding.
///
/// Two payloads are equal when their members are (their decoded values), whatever their spelling.
public struct Payload: JSONRepresentable, Hashable {
    /// The object's members, `kind` included.
    ///
    /// A payload the relay decoded from a client's frame or read from its store holds only its
    /// bytes (the relay never reads the members: see ``JSONObjectScan``); for it, reading this
    /// parses ``bytes``, which were validated as one strict JSON object when they came in.
    public var members: [String: JSONValue] {
        get {
            if let decoded { return decoded }
            // Unreachable fallback: `bytes` passed the strict scan, so they parse as an object.
            return (try? JSONParser.parse(bytes))?.objectValue ?? [:]
        }
        set {
            decoded = newValue
            bytes = JSONWriter.encode(.object(newValue))[...]
            encodedSize = bytes.count
            kind = newValue["kind"]?.stringValue
        }
    }

    /// The members, when this payload was made from them (nil for one kept only as bytes).
    private var decoded: [String: JSONValue]?

    /// The payload's UTF-8 JSON as it goes on the wire: the sender's bytes when decoded (see
    /// ``init(bytes:)``), otherwise the compact, key-sorted JSON of ``members``.
    public var encoded: [UInt8] { Array(bytes) }

    /// The same bytes without a copy. A payload decoded from a client's frame is a slice of that
    /// frame's bytes (it shares their storage: the relay copies a payload once, into the frames
    /// it splices it into).
    public private(set) var bytes: ArraySlice<UInt8>

    /// Size in bytes of the canonical compact encoding (§3.6): what the per-mode limits count,
    /// whatever the spelling of ``encoded``.
    public private(set) var encodedSize: Int

    /// The payload's `kind`, if it is a string.
    public private(set) var kind: String?

    /// Wraps an object's members as they are.
    public init(members: [String: JSONValue]) {
        self.decoded = members
        self.bytes = JSONWriter.encode(.object(members))[...]
        self.encodedSize = bytes.count
        self.kind = members["kind"]?.stringValue
    }

    /// Members decoded from `raw`, which the caller has parsed as exactly this object.
    init(members: [String: JSONValue], raw: [UInt8]) {
        self.decoded = members
        self.bytes = raw[...]
        self.encodedSize = JSONWriter.encodedSize(.object(members))
        self.kind = members["kind"]?.stringValue
    }

    /// `raw`, which the caller has scanned as one strict JSON object (``JSONObjectScan``), kept
    /// as bytes only (a slice keeps sharing its array's storage).
    init(raw: ArraySlice<UInt8>, scan: JSONObjectScan) {
        self.decoded = nil
        self.bytes = raw
        self.encodedSize = scan.canonicalSize
        if case .string(let k) = scan.kind { self.kind = k } else { self.kind = nil }
    }

    /// `{"kind": kind}`, kept as bytes only: what the relay holds in place of a payload left in
    /// its store (no members dictionary per queued item: with a million items queued, that
    /// dictionary was most of the relay's memory).
    public init(onlyKind kind: String) {
        self.decoded = nil
        self.bytes = JSONWriter.encode(.object(["kind": .string(kind)]))[...]
        self.encodedSize = bytes.count
        self.kind = kind
    }

    /// Checks `bytes` as one strict JSON object and keeps them as they are (the store's reload).
    public init(bytes: [UInt8]) throws(ProtocolError) {
        if let scan = JSONParser.scanObject(bytes.span) {
            self.init(raw: bytes[...], scan: scan)
            return
        }
        // Not a valid object: the parser names what is wrong.
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw ProtocolError(.badJSON, "payload is not a JSON text: \(error)")
        }
        guard case .object(let members) = value else {
            throw ProtocolError(.badFrame, field: "payload", "field 'payload' must be an object")
        }
        // The scan and the parser accept the same texts, so this is not reached.
        self.init(members: members, raw: bytes)
    }

    /// The object at member `name` of `record`, a JSON object a store wrote with a payload's
    /// bytes spliced in as that member, keeping those bytes as they are (PROTOCOL.md §3.7);
    /// nil when `record` is not an object with that member.
    public static func stored(member name: String, of record: [UInt8]) throws(ProtocolError) -> Payload? {
        guard let raw = JSONParser.rawMember([name], in: record[...]) else { return nil }
        return try Payload(bytes: Array(raw))
    }

    /// This payload with the bytes of `raw`, the span of the frame it was decoded from (the
    /// general decoder's second look); unchanged if the span is missing.
    func keepingRaw(_ raw: ArraySlice<UInt8>?) -> Payload {
        guard let raw else { return self }
        var p = self
        p.bytes = raw
        return p
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

    /// The deepest a payload may nest: in a `send`, `reply` or `deliver` frame it is a member of
    /// the frame object, one level below it, and a client's frame nests at most
    /// ``JSONParser/defaultMaxDepth`` levels (PROTOCOL.md §3.1). A `welcome` puts a context's
    /// payload one level deeper, which is why a relay frame may nest one level more
    /// (``FrameCodec/relayFrameMaxDepth``).
    public static let maxNestingDepth = JSONParser.defaultMaxDepth - 1

    /// How many levels of objects and arrays the payload nests, itself included: `{}` is 1,
    /// `{"a":[{}]}` is 3. Counted on ``bytes`` (brackets outside strings), without recursion.
    public var nestingDepth: Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for b in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    public static func == (a: Payload, b: Payload) -> Bool {
        a.bytes.elementsEqual(b.bytes) || a.members == b.members
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(members) }

    public var json: JSONValue { .object(members) }

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
