/// Several whole outbound messages of a server connection written as one `send()`.
///
/// lws frames each `lws_write` itself and sends it at once, so N queued messages cost N
/// writes and N `send()` calls. At 64-byte messages that was over half the relay's
/// CPU, in the kernel (perf, 2026-12-01). A server's frames are unmasked (RFC 6455 §5.1), so the
/// transport can write the frame headers itself: the messages at the head of the queue that fit
/// one send are framed here, back to back, and handed to lws as raw bytes (`LWS_WRITE_HTTP`,
/// which on a WebSocket connection goes straight to `lws_issue_raw`: lws keeps an unsent tail
/// and sends it before anything else, its own pings included, so frames never interleave).
///
/// Only whole single-frame messages are batched, and only when at least two are queued: a
/// message that needs continuation frames, or a message alone, goes through lws's own framing
/// as before. Client connections batch their own masked frames (``ClientFrameBatch``).
enum ServerFrameBatch {
    /// Largest batch, headers included: one send of at most lws's `tx_packet_size`, so lws never
    /// splits it or copies a remainder (a full socket still can, which lws handles).
    static let maxBytes = OutboundMessage.defaultFragmentSize

    /// The header of an unmasked frame with FIN set.
    static func header(kind: OutboundMessage.Kind, length: Int) -> [UInt8] {
        var out: [UInt8] = []
        appendHeader(kind: kind, length: length, into: &out)
        return out
    }

    /// Bytes a header of a `length`-byte payload takes.
    static func headerSize(length: Int) -> Int {
        length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
    }

    /// Appends an unmasked frame header: FIN set unless `isFinal` is false, the message's opcode
    /// on its first frame and 0 (continuation) on the others.
    static func appendHeader(
        kind: OutboundMessage.Kind, length: Int, isFirst: Bool = true, isFinal: Bool = true, into out: inout [UInt8]
    ) {
        withUnsafeTemporaryAllocation(byteCount: 10, alignment: 1) { scratch in
            let n = storeHeader(kind: kind, length: length, isFirst: isFirst, isFinal: isFinal, at: scratch.baseAddress!)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<n]))
        }
    }

    /// Writes an unmasked frame header at `target` (room for ``headerSize(length:)`` bytes) and
    /// returns its size.
    static func storeHeader(
        kind: OutboundMessage.Kind, length: Int, isFirst: Bool, isFinal: Bool, at target: UnsafeMutableRawPointer
    ) -> Int {
        let opcode: UInt8 = !isFirst ? 0x0 : kind == .text ? 0x1 : 0x2
        target.storeBytes(of: (isFinal ? 0x80 : 0) | opcode, as: UInt8.self)
        if length < 126 {
            target.storeBytes(of: UInt8(length), toByteOffset: 1, as: UInt8.self)
            return 2
        }
        if length <= 0xFFFF {
            target.storeBytes(of: 126, toByteOffset: 1, as: UInt8.self)
            target.storeBytes(of: UInt16(length).bigEndian, toByteOffset: 2, as: UInt16.self)
            return 4
        }
        target.storeBytes(of: 127, toByteOffset: 1, as: UInt8.self)
        target.storeBytes(of: UInt64(length).bigEndian, toByteOffset: 2, as: UInt64.self)
        return 10
    }

    /// How many messages from the head of `queue` go in one batch (0: write the first one alone).
    static func count(in queue: OutboundQueue) -> Int {
        var total = 0
        var n = 0
        for message in queue.pending {
            guard message.offset == 0, message.payload.count <= message.fragmentSize else { break }
            let size = headerSize(length: message.payload.count) + message.payload.count
            guard total + size <= maxBytes else { break }
            total += size
            n += 1
        }
        return n >= 2 ? n : 0
    }

    /// The frames of the first `n` messages of `queue`, back to back.
    static func frames(of n: Int, in queue: OutboundQueue) -> [UInt8] {
        var out: [UInt8] = []
        var reserved = 0
        for message in queue.pending.prefix(n) { reserved += headerSize(length: message.payload.count) + message.payload.count }
        out.reserveCapacity(reserved)
        for message in queue.pending.prefix(n) {
            appendHeader(kind: message.kind, length: message.payload.count, into: &out)
            out.append(contentsOf: message.payload)
        }
        return out
    }
}
