import Primitives

/// Decodes frames from WebSocket text messages and encodes them deterministically.
///
/// Decoding runs the protocol's first checks in order: `bad_json` (not one UTF-8 JSON
/// text), then `bad_frame` (not an object, `type` missing or not a string, a field
/// missing or of the wrong type) or `unknown_type`. Errors name the offending field
/// and carry the frame's `id` as `re` when it could be read.
public enum FrameCodec {
    /// Decodes a client → relay frame.
    public static func decodeClientFrame(_ bytes: some Collection<UInt8>) throws(ProtocolError) -> ClientFrame {
        try decodeClient(bytes)
    }

    /// Decodes a client → relay frame from a WebSocket message's bytes.
    ///
    /// (The concrete overload is what the relay calls: the parser is specialized for arrays
    /// here, instead of running generic code across the module boundary.)
    public static func decodeClientFrame(_ bytes: [UInt8]) throws(ProtocolError) -> ClientFrame {
        if let frame = fastDecodeClient(bytes) { return frame }
        return try decodeClient(bytes)
    }

    /// The general decoder alone (the tests and the fuzzer compare the fast path with it).
    @_spi(Testing) public static func decodeClientGeneric(_ bytes: [UInt8]) throws(ProtocolError) -> ClientFrame {
        try decodeClient(bytes)
    }

    /// Decodes a relay → client frame from a WebSocket message's bytes (see above).
    public static func decodeRelayFrame(_ bytes: [UInt8]) throws(ProtocolError) -> RelayFrame {
        try decodeRelay(bytes)
    }

    private static func decodeClient<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(ProtocolError) -> ClientFrame {
        let (type, reader) = try envelope(bytes, maxDepth: JSONParser.defaultMaxDepth)
        guard let frame = try ClientFrame.decode(type: type, reader) else {
            throw unknownType(type, reader)
        }
        return keepingRawPayload(frame, bytes)
    }

    /// A decoded `send` or `reply` whose payload keeps the frame's bytes for it, as the fast
    /// path's does (the frame is valid JSON by now, so the span is found).
    private static func keepingRawPayload(_ frame: ClientFrame, _ bytes: some Collection<UInt8>) -> ClientFrame {
        switch frame {
        case .send(var s):
            s.payload = s.payload.keepingRaw(JSONParser.rawMember(["payload"], in: ArraySlice(bytes)))
            return .send(s)
        case .reply(var r):
            r.payload = r.payload.keepingRaw(JSONParser.rawMember(["payload"], in: ArraySlice(bytes)))
            return .reply(r)
        default:
            return frame
        }
    }

    /// Decodes a relay → client frame.
    public static func decodeRelayFrame(_ bytes: some Collection<UInt8>) throws(ProtocolError) -> RelayFrame {
        try decodeRelay(bytes)
    }

    /// The deepest a relay frame nests: one level more than a client frame (PROTOCOL.md §3.1),
    /// because a `welcome` carries the latest context as a `deliver` object, so its payload, which
    /// the phone sent one level below its `send`, comes two levels below the top.
    public static let relayFrameMaxDepth = JSONParser.defaultMaxDepth + 1

    private static func decodeRelay<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(ProtocolError) -> RelayFrame {
        let (type, reader) = try envelope(bytes, maxDepth: relayFrameMaxDepth)
        guard let frame = try RelayFrame.decode(type: type, reader) else {
            throw unknownType(type, reader)
        }
        return frame
    }

    /// The compact, key-sorted JSON of a client frame.
    public static func encode(_ frame: ClientFrame) -> [UInt8] {
        encode(type: frame.type, body: frame.body)
    }

    /// The compact, key-sorted JSON of a relay frame.
    ///
    /// `deliver`, `accepted`, `reply` and `welcome`, are written field by field with the payload
    /// spliced from its bytes (for a payload made here, the same bytes as the generic path, which
    /// the codec tests check for every vector; for one decoded from a client, the sender's bytes).
    public static func encode(_ frame: RelayFrame) -> [UInt8] {
        encode(frame, headroom: 0)
    }

    /// ``encode(_:)-(RelayFrame)`` after `headroom` zero bytes: room for a transport to write
    /// its frame header in front of the JSON without copying it (the relay's server does).
    public static func encode(_ frame: RelayFrame, headroom: Int) -> [UInt8] {
        switch frame {
        case .deliver(let d): return encodeDeliver(d, headroom: headroom)
        case .accepted(let a): return encodeAccepted(a, headroom: headroom)
        case .reply(let r): return encodeReply(r, headroom: headroom)
        case .welcome(let w): return encodeWelcome(w, headroom: headroom)
        default: return encodeGeneric(frame, headroom: headroom)
        }
    }

    /// The generic encoding (the frame's JSON value, keys sorted by the writer), after
    /// `headroom` zero bytes.
    static func encodeGeneric(_ frame: RelayFrame, headroom: Int = 0) -> [UInt8] {
        let json = encode(type: frame.type, body: frame.body)
        guard headroom > 0 else { return json }
        return [UInt8](repeating: 0, count: headroom) + json
    }

    private static func encode(type: FrameType, body: JSONValue) -> [UInt8] {
        guard case .object(var members) = body else { return JSONWriter.encode(body) }
        members["type"] = .string(type.rawValue)
        return JSONWriter.encode(.object(members))
    }

    private static func envelope(_ bytes: some Collection<UInt8>, maxDepth: Int) throws(ProtocolError) -> (FrameType, ObjectReader) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxDepth: maxDepth)
        } catch {
            throw ProtocolError(.badJSON, "not a JSON text: \(error)")
        }
        var reader = try ObjectReader(value, path: "")
        // Read `id` leniently first so a frame that fails later can still be answered with `re`.
        if case .string(let id)? = reader.members["id"], (1...64).contains(id.count) {
            reader.frameID = id
        }
        let type = try reader.string("type")
        return (FrameType(rawValue: type), reader)
    }

    private static func unknownType(_ type: FrameType, _ reader: ObjectReader) -> ProtocolError {
        ProtocolError(.unknownType, field: "type", "unknown frame type \(Excerpt.quoted(type.rawValue))", re: reader.frameID)
    }
}
