/// The fast path of ``FrameCodec`` for the frames of every transfer (`send`, `ack`): one pass over
/// the frame's bytes that knows their fields. Keys and the `type` and `mode` values are matched
/// as bytes (no string is made for them), the payload is only scanned (``JSONObjectScan``: its
/// size and `kind`), and no member list or ``JSONValue`` is built.
///
/// Anything unusual — another type, a missing, extra, repeated, `null` or mistyped field, a key
/// or a `type`/`mode` written with escapes, a length out of range — returns `nil`, and the
/// general decoder runs and names the error (or decodes what is valid but unusual). So both
/// paths accept the same frames and produce equal values (the codec tests check every vector,
/// and ids and kinds at their limits).
extension FrameCodec {
    static func fastDecodeClient(_ bytes: [UInt8]) -> ClientFrame? {
        var parser = JSONParser(buf: bytes.span, maxDepth: JSONParser.defaultMaxDepth)
        return parser.transferFrame(bytes)
    }

    /// A frame id: 1–64 code points (as ``ObjectReader/id()`` checks).
    static func isID(_ s: String) -> Bool {
        hasCodePoints(s, atMost: 64)
    }

    /// Whether `s` has 1 to `max` code points. A code point is 1–4 UTF-8 bytes, so the byte
    /// count (O(1) for a native string) decides without counting unless it is over `max`.
    static func hasCodePoints(_ s: String, atMost max: Int) -> Bool {
        let bytes = s.utf8.count
        if bytes <= max { return bytes >= 1 }
        return s.unicodeScalars.count <= max
    }
}

extension JSONParser {
    /// The members a `send` or an `ack` may have, each a bit of a set (a repeat is refused).
    private enum TransferField: UInt8 {
        case type = 1, id = 2, mode = 4, payload = 8, wantsReply = 16, seq = 32

        init?(_ key: Range<Int>, in parser: JSONParser) {
            if parser.matches(key, "id") {
                self = .id
            } else if parser.matches(key, "type") {
                self = .type
            } else if parser.matches(key, "mode") {
                self = .mode
            } else if parser.matches(key, "payload") {
                self = .payload
            } else if parser.matches(key, "seq") {
                self = .seq
            } else if parser.matches(key, "wantsReply") {
                self = .wantsReply
            } else {
                return nil
            }
        }
    }

    /// The `send` or `ack` that fills the buffer (`bytes`, the same bytes, for the payload's
    /// slice); nil for anything else or anything unusual (see ``FrameCodec/fastDecodeClient(_:)``).
    mutating func transferFrame(_ bytes: [UInt8]) -> ClientFrame? {
        skipWhitespace()
        guard pos < buf.count, buf[pos] == UInt8(ascii: "{") else { return nil }
        pos += 1
        var seen: UInt8 = 0
        var isSend: Bool?
        var id: String?
        var mode: DeliveryMode?
        var payload: (range: Range<Int>, scan: JSONObjectScan)?
        var wantsReply: Bool?
        var seq: Int64?
        while true {
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: "\""), let key = plainString(),
                let field = TransferField(key, in: self), seen & field.rawValue == 0
            else { return nil }
            seen |= field.rawValue
            skipWhitespace()
            guard pos < buf.count, buf[pos] == UInt8(ascii: ":") else { return nil }
            pos += 1
            skipWhitespace()
            guard pos < buf.count else { return nil }
            switch field {
            case .type:
                guard buf[pos] == UInt8(ascii: "\""), let value = plainString() else { return nil }
                if matches(value, "send") {
                    isSend = true
                } else if matches(value, "ack") {
                    isSend = false
                } else {
                    return nil
                }
            case .id:
                guard buf[pos] == UInt8(ascii: "\""), let value = try? parseString(), FrameCodec.isID(value) else { return nil }
                id = value
            case .mode:
                guard buf[pos] == UInt8(ascii: "\""), let value = plainString() else { return nil }
                if matches(value, "message") {
                    mode = .message
                } else if matches(value, "userInfo") {
                    mode = .userInfo
                } else if matches(value, "context") {
                    mode = .context
                } else if matches(value, "complication") {
                    mode = .complication
                } else {
                    return nil  // not a mode (the general decoder names the error)
                }
            case .payload:
                guard buf[pos] == UInt8(ascii: "{") else { return nil }
                let start = pos
                var kind = JSONObjectScan.Kind.missing
                guard let size = try? scanObject(depth: 2, kind: &kind) else { return nil }
                payload = (start..<pos, JSONObjectScan(canonicalSize: size, kind: kind))
            case .wantsReply:
                guard case .bool(let value)? = try? parseValue(depth: 1) else { return nil }
                wantsReply = value
            case .seq:
                guard case .int(let value)? = try? parseValue(depth: 1), value >= 1 else { return nil }
                seq = value
            }
            guard let last = afterMember() else { return nil }
            if last { break }
        }
        skipWhitespace()
        guard pos == buf.count else { return nil }
        switch isSend {
        case true?:
            guard let id, let mode, let payload, seq == nil, case .string(let kind) = payload.scan.kind,
                FrameCodec.hasCodePoints(kind, atMost: 128)
            else { return nil }
            return .send(Send(id: id, mode: mode, payload: Payload(raw: bytes[payload.range], scan: payload.scan), wantsReply: wantsReply))
        case false?:
            guard let seq, mode == nil, payload == nil, wantsReply == nil else { return nil }
            return .ack(Ack(id: id, seq: seq))
        case nil:
            return nil
        }
    }
}
