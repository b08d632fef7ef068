/// Direct writers for the frames every send produces (`deliver`, `accepted`, `reply`, and a
/// `welcome` carrying a context): keys written in their sorted order, the payload spliced from
/// its bytes (the sender's, as received: PROTOCOL.md §3.7 "exactly as sent"), no intermediate
/// JSON value.
///
/// Key order is UTF-8 order, as ``JSONWriter`` sorts: `from` < `id` < `mode` < `payload` <
/// `sentAt` < `seq` < `type` < `wantsReply`, and `fallback` < `re` < `remaining` < `type`.
extension FrameCodec {
    /// An empty frame buffer: `headroom` zero bytes (see ``encode(_:headroom:)``), with room for
    /// `capacity` more, so the frame is written with one allocation.
    private static func output(headroom: Int, capacity: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(headroom + capacity)
        out.append(contentsOf: repeatElement(0, count: headroom))
        return out
    }

    /// Appends one of the ``Literal`` byte arrays through its span: `append(contentsOf:)` of the
    /// array retained and released it on every call, nine times or more per `deliver` and its
    /// `accepted` (perf --call-graph dwarf at 64 B, 2026-12-03: the retains and releases under
    /// `encodeDeliver` were 2.6 % of the relay's samples), where a borrowed span needs neither.
    @inline(__always)
    private static func appendLiteral(_ literal: [UInt8], to out: inout [UInt8]) {
        let bytes = literal.span
        out.append(addingCapacity: bytes.count) { tail in
            for i in bytes.indices { tail.append(bytes[i]) }
        }
    }

    /// A `deliver` frame, or (without `type`) the object a `welcome.context` or the store holds.
    static func encodeDeliver(_ d: Deliver, withType: Bool = true, headroom: Int = 0) -> [UInt8] {
        var out = output(headroom: headroom, capacity: d.payload.bytes.count + 48 + d.id.utf8.count + 96)
        appendLiteral(Literal.from, to: &out)
        JSONWriter.writeString(d.from.rawValue, into: &out)
        appendLiteral(Literal.id, to: &out)
        JSONWriter.writeString(d.id, into: &out)
        appendLiteral(Literal.mode, to: &out)
        JSONWriter.writeString(d.mode.rawValue, into: &out)
        appendLiteral(Literal.payload, to: &out)
        out.append(contentsOf: d.payload.bytes)
        appendLiteral(Literal.sentAt, to: &out)  // ISO-8601 needs no escapes
        d.sentAt.writeISO8601(into: &out)
        appendLiteral(Literal.seq, to: &out)
        JSONWriter.writeDecimal(d.seq, into: &out)
        if withType { appendLiteral(Literal.typeDeliver, to: &out) }
        if let wantsReply = d.wantsReply {
            appendLiteral(wantsReply ? Literal.wantsReplyTrue : Literal.wantsReplyFalse, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A relay `reply`: `payload` < `re` < `type`.
    static func encodeReply(_ r: RelayReply, headroom: Int = 0) -> [UInt8] {
        var out = output(headroom: headroom, capacity: r.payload.bytes.count + 40 + r.re.utf8.count)
        appendLiteral(Literal.replyPayload, to: &out)
        out.append(contentsOf: r.payload.bytes)
        appendLiteral(Literal.replyRe, to: &out)
        JSONWriter.writeString(r.re, into: &out)
        appendLiteral(Literal.typeReply, to: &out)
        return out
    }

    /// A `welcome` with its context spliced in: `context` sorts before every other member, so
    /// it goes first, followed by the generic encoding of the rest.
    static func encodeWelcome(_ w: Welcome, headroom: Int = 0) -> [UInt8] {
        guard let context = w.context else { return encodeGeneric(.welcome(w), headroom: headroom) }
        var rest = w
        rest.context = nil
        let tail = encodeGeneric(.welcome(rest))
        var out = output(headroom: headroom, capacity: tail.count + context.payload.bytes.count + 160)
        out.append(contentsOf: #"{"context":"#.utf8)
        out.append(contentsOf: encodeDeliver(context, withType: false))
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: tail.dropFirst())
        return out
    }

    static func encodeAccepted(_ a: Accepted, headroom: Int = 0) -> [UInt8] {
        var out = output(headroom: headroom, capacity: 64 + a.re.utf8.count)
        out.append(UInt8(ascii: "{"))
        if let fallback = a.fallback {
            appendLiteral(Literal.fallback, to: &out)
            JSONWriter.writeString(fallback.rawValue, into: &out)
            out.append(UInt8(ascii: ","))
        }
        appendLiteral(Literal.re, to: &out)
        JSONWriter.writeString(a.re, into: &out)
        if let remaining = a.remaining {
            appendLiteral(Literal.remaining, to: &out)
            JSONWriter.writeDecimal(remaining, into: &out)
        }
        appendLiteral(Literal.typeAccepted, to: &out)
        return out
    }
}

/// The fixed parts of the hot frames as bytes, made once: appending an array is a copy, where
/// appending a literal's `utf8` view went through String's slow path per call (perf of
/// `watchrelay bench-core`, 2026-12-03: ~6 % of a 64 B message).
private enum Literal {
    static let from = Array(#"{"from":"#.utf8)
    static let id = Array(#","id":"#.utf8)
    static let mode = Array(#","mode":"#.utf8)
    static let payload = Array(#","payload":"#.utf8)
    static let sentAt = Array(#","sentAt":""#.utf8)
    static let seq = Array(#"","seq":"#.utf8)  // closes sentAt's string
    static let typeDeliver = Array(#","type":"deliver""#.utf8)
    static let wantsReplyTrue = Array(#","wantsReply":true"#.utf8)
    static let wantsReplyFalse = Array(#","wantsReply":false"#.utf8)
    static let fallback = Array(#""fallback":"#.utf8)
    static let re = Array(#""re":"#.utf8)
    static let remaining = Array(#","remaining":"#.utf8)
    static let typeAccepted = Array(#","type":"accepted"}"#.utf8)
    static let replyPayload = Array(#"{"payload":"#.utf8)
    static let replyRe = Array(#","re":"#.utf8)
    static let typeReply = Array(#","type":"reply"}"#.utf8)
}
