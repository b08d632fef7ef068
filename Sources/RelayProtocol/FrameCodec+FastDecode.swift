/// The fast path of ``FrameCodec`` for the frames of every transfer (`send`, `ack`): the
/// top-level object is read into a short list (no dictionary, no ``ObjectReader``) and the
/// frame built directly when everything is as the protocol wants it.
///
/// Anything unusual — another type, a missing, extra, `null` or mistyped field, a length out
/// of range — returns `nil`, and the general decoder runs and names the error. So both paths
/// accept the same frames and produce equal values (the codec tests check every vector).
extension FrameCodec {
    static func fastDecodeClient(_ bytes: [UInt8]) -> ClientFrame? {
        guard let (members, scanned) = JSONParser.topLevelMembers(bytes, scanning: "payload"),
            case .string(let type)? = value("type", in: members)
        else { return nil }
        switch type {
        case "send": return scanned.flatMap { fastSend(members, $0, bytes) }.map(ClientFrame.send)
        case "ack": return fastAck(members).map(ClientFrame.ack)
        default: return nil
        }
    }

    private static func value(_ key: String, in members: [JSONParser.TopLevelMember]) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// The payload keeps its bytes from `bytes`, as the sender wrote them; it was only scanned
    /// (`payload`: its size and `kind`), never built into values.
    private static func fastSend(
        _ members: [JSONParser.TopLevelMember], _ payload: JSONObjectScan, _ bytes: [UInt8]
    ) -> Send? {
        var id: String?
        var mode: DeliveryMode?
        var payloadRange: Range<Int>?
        var wantsReply: Bool?
        for (key, value, range) in members {
            switch (key, value) {
            case ("type", _): continue
            case ("id", .string(let s)) where isID(s): id = s
            case ("mode", .string(let s)): mode = DeliveryMode.all.first { $0.rawValue == s }
            case ("payload", .null): payloadRange = range  // the scanned object
            case ("wantsReply", .bool(let b)): wantsReply = b
            default: return nil
            }
        }
        guard let id, let mode, let payloadRange, case .string(let kind) = payload.kind,
            hasCodePoints(kind, atMost: 128)
        else { return nil }
        let raw = Payload(raw: bytes[payloadRange], scan: payload)
        return Send(id: id, mode: mode, payload: raw, wantsReply: wantsReply)
    }

    private static func fastAck(_ members: [JSONParser.TopLevelMember]) -> Ack? {
        var id: String?
        var seq: Int64?
        for (key, value, _) in members {
            switch (key, value) {
            case ("type", _): continue
            case ("id", .string(let s)) where isID(s): id = s
            case ("seq", .int(let n)) where n >= 1: seq = n
            default: return nil
            }
        }
        guard let seq else { return nil }
        return Ack(id: id, seq: seq)
    }

    /// A frame id: 1–64 code points (as ``ObjectReader/id()`` checks).
    private static func isID(_ s: String) -> Bool {
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
