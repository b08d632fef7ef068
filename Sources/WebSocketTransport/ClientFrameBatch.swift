/// A client connection's outbound frames, masked by the transport and written as one raw send.
///
/// lws 4.1 masks a client's payload one byte at a time, reloading its mask state for every byte,
/// and frames each `lws_write` itself, one send per write. With the load generator's window
/// kept full on the service thread (``ClientMessageHandler``), that masking loop was a quarter of
/// the generator's CPU at 64 KiB messages (perf, 2026-12-01). So a client's data frames are
/// built here, as ``ServerFrameBatch`` builds a server's, with the mask applied eight bytes at
/// a time, and handed to lws as raw bytes (`LWS_WRITE_HTTP` on a WebSocket connection goes to
/// `lws_issue_raw` before lws's own framing and masking; lws keeps an unsent tail and sends it
/// before anything else, its pings and close frame included, so frames never interleave).
///
/// Per write (at the end of a turn, or on WRITEABLE): the whole single-frame messages at the head
/// of the queue that fit one send,
/// or else the next fragment of the first message (a message longer than its fragment size
/// still goes out as continuation frames). Masking keys come from ``MaskKeys``.
enum ClientFrameBatch {
    /// Largest send: one default fragment with its header and key (lws's `tx_packet_size`).
    static let maxBytes = OutboundMessage.defaultFragmentSize + 14

    /// Bytes a masked frame of `length` payload bytes takes on the wire.
    static func frameSize(length: Int) -> Int {
        ServerFrameBatch.headerSize(length: length) + 4 + length
    }

    /// How many whole messages from the head of `queue` go in one send; 0 when the first one
    /// needs fragments (or is partly written), so ``nextFragment(of:keys:)`` applies.
    static func count(in queue: OutboundQueue) -> Int {
        var total = 0
        var n = 0
        for message in queue.pending {
            guard message.offset == 0, message.payload.count <= message.fragmentSize else { break }
            let size = frameSize(length: message.payload.count)
            guard total + size <= maxBytes else { break }
            total += size
            n += 1
        }
        return n
    }

    /// The masked frames of the first `n` messages of `queue`, back to back.
    static func frames(of n: Int, in queue: OutboundQueue, keys: inout MaskKeys) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(queue.pending.prefix(n).reduce(0) { $0 + frameSize(length: $1.payload.count) })
        for message in queue.pending.prefix(n) {
            appendFrame(
                message.payload, opcode: message.kind, isFirst: true, isFinal: true, key: keys.next(), into: &out)
        }
        return out
    }

    /// The next fragment of the first message of `queue` as one masked frame, and its length.
    static func nextFragment(of queue: OutboundQueue, keys: inout MaskKeys) -> (frame: [UInt8], count: Int)? {
        guard let message = queue.first else { return nil }
        let remaining = message.payload.count - message.offset
        let count = min(remaining, message.fragmentSize)
        var out: [UInt8] = []
        out.reserveCapacity(frameSize(length: count))
        let slice = message.payload.dropFirst(message.offset).prefix(count)
        appendFrame(
            slice, opcode: message.kind, isFirst: message.offset == 0, isFinal: count == remaining, key: keys.next(),
            into: &out)
        return (out, count)
    }

    /// Appends one frame: header with the MASK bit, the 4-byte key, the masked payload.
    static func appendFrame(
        _ payload: ArraySlice<UInt8>, opcode kind: OutboundMessage.Kind, isFirst: Bool, isFinal: Bool, key: UInt32,
        into out: inout [UInt8]
    ) {
        let start = out.count
        ServerFrameBatch.appendHeader(kind: kind, length: payload.count, isFirst: isFirst, isFinal: isFinal, into: &out)
        out[start + 1] |= 0x80  // MASK
        // The key goes on the wire in memory order; the same four bytes, loaded, mask the payload.
        withUnsafeBytes(of: key) { out.append(contentsOf: $0) }
        let payloadStart = out.count
        out.append(contentsOf: payload)
        // `out` is ours; the pointer lives only for this call.
        out.withUnsafeMutableBytes { bytes in
            mask(UnsafeMutableRawBufferPointer(rebasing: bytes[payloadStart...]), key: key)
        }
    }

    /// XORs `bytes` with the repeated 4-byte `key` (in memory order), eight bytes at a time.
    static func mask(_ bytes: UnsafeMutableRawBufferPointer, key: UInt32) {
        guard let base = bytes.baseAddress else { return }
        let wide = UInt64(key) | UInt64(key) << 32
        var index = 0
        while index + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base.storeBytes(of: word ^ wide, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        // The tail: byte i of the payload takes key byte i % 4, and index is a multiple of 4 here.
        withUnsafeBytes(of: key) { keyBytes in
            while index < bytes.count {
                bytes[index] ^= keyBytes[index & 3]
                index += 1
            }
        }
    }
}

/// Masking keys for one service thread's client frames: SplitMix64, seeded from the system's
/// random source once per context.
///
/// RFC 6455 §5.3 asks for unpredictable keys so a script in a browser cannot choose the bytes an
/// intermediary sees; this transport sends only what its own process queued, and a fresh
/// `getrandom` per frame would cost a system call per message.
struct MaskKeys {
    private var state: UInt64
    private var spare: UInt32?

    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// The next 32-bit key.
    mutating func next() -> UInt32 {
        if let key = spare {
            spare = nil
            return key
        }
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        spare = UInt32(truncatingIfNeeded: z >> 32)
        return UInt32(truncatingIfNeeded: z)
    }
}
