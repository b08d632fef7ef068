/// Direct writers for the frames every send produces (`deliver`, `accepted`): keys written in
/// their sorted order, the payload spliced from its cached bytes, no intermediate JSON value.
///
/// Key order is UTF-8 order, as ``JSONWriter`` sorts: `from` < `id` < `mode` < `payload` <
/// `sentAt` < `seq` < `type` < `wantsReply`, and `fallback` < `re` < `remaining` < `type`.
extension FrameCodec {
    static func encodeDeliver(_ d: Deliver) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(d.payload.encoded.count + 48 + d.id.utf8.count + 96)
        out.append(contentsOf: #"{"from":"#.utf8)
        JSONWriter.writeString(d.from.rawValue, into: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONWriter.writeString(d.id, into: &out)
        out.append(contentsOf: #","mode":"#.utf8)
        JSONWriter.writeString(d.mode.rawValue, into: &out)
        out.append(contentsOf: #","payload":"#.utf8)
        out.append(contentsOf: d.payload.encoded)
        out.append(contentsOf: #","sentAt":""#.utf8)  // ISO-8601 needs no escapes
        d.sentAt.writeISO8601(into: &out)
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: #","seq":"#.utf8)
        out.append(contentsOf: String(d.seq).utf8)
        out.append(contentsOf: #","type":"deliver""#.utf8)
        if let wantsReply = d.wantsReply {
            out.append(contentsOf: (wantsReply ? #","wantsReply":true"# : #","wantsReply":false"#).utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func encodeAccepted(_ a: Accepted) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + a.re.utf8.count)
        out.append(UInt8(ascii: "{"))
        if let fallback = a.fallback {
            out.append(contentsOf: #""fallback":"#.utf8)
            JSONWriter.writeString(fallback.rawValue, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""re":"#.utf8)
        JSONWriter.writeString(a.re, into: &out)
        if let remaining = a.remaining {
            out.append(contentsOf: #","remaining":"#.utf8)
            out.append(contentsOf: String(remaining).utf8)
        }
        out.append(contentsOf: #","type":"accepted"}"#.utf8)
        return out
    }
}
