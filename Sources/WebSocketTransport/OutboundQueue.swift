import CWebSockets

/// One outbound WebSocket message and how much of it has been written.
struct OutboundMessage: Sendable {
    /// The frame opcode of the message.
    enum Kind: Sendable {
        case text, binary

        /// The lws write flag of the message's first frame.
        var lwsFlag: Int32 {
            switch self {
            case .text: Int32(LWS_WRITE_TEXT.rawValue)
            case .binary: Int32(LWS_WRITE_BINARY.rawValue)
            }
        }
    }

    /// Largest frame the transport writes by default: longer messages go out as continuation
    /// frames, one per WRITEABLE, so lws never copies a large remainder into its own buffer.
    ///
    /// 68 KiB, so that the relay's largest common frame, a `deliver` of a 64 KiB message or
    /// userInfo (64 KiB of payload and its envelope), is one frame and one `send()`: at 64 KiB
    /// exactly it went out as a 64 KiB frame and a continuation of ~150 bytes, two WRITEABLE
    /// turns and two sends per message.
    static let defaultFragmentSize = 68 << 10

    /// `headroom` spare bytes, then the message: the transport may write a frame header into
    /// the spare bytes, or over bytes of this message already written, but never over the rest.
    private(set) var storage: [UInt8]
    /// Spare bytes at the front of ``storage`` (0, or at least ``frameHeadroom``).
    let headroom: Int
    let kind: Kind
    /// Largest frame for this message (at least 1).
    let fragmentSize: Int
    /// Bytes already written.
    var offset = 0

    /// The bytes the transport needs in front of a message to frame it in place: the longest
    /// unmasked frame header (RFC 6455 §5.2: 2, 4 or 10 bytes).
    static let frameHeadroom = 10

    init(payload: [UInt8], kind: Kind, fragmentSize: Int = OutboundMessage.defaultFragmentSize) {
        self.init(storage: payload, headroom: 0, kind: kind, fragmentSize: fragmentSize)
    }

    /// A message whose first `headroom` bytes of `storage` are spare (see ``storage``).
    init(storage: [UInt8], headroom: Int, kind: Kind, fragmentSize: Int = OutboundMessage.defaultFragmentSize) {
        precondition(headroom >= 0 && headroom <= storage.count, "headroom past the message")
        self.storage = storage
        self.headroom = headroom
        self.kind = kind
        self.fragmentSize = max(1, fragmentSize)
    }

    /// The message itself (indices are ``storage``'s: the first is ``headroom``).
    var payload: ArraySlice<UInt8> { storage[headroom...] }

    /// The message's length in bytes (``payload``'s count, without making the slice).
    var size: Int { storage.count - headroom }

    /// The message as an array of its own (no copy when there is no headroom).
    var payloadArray: [UInt8] { headroom == 0 ? storage : Array(payload) }

    /// Whether the transport can frame the rest of this message in place (``storage``).
    var framesInPlace: Bool { headroom >= Self.frameHeadroom }

    /// Writes the header of this message's next frame into ``storage`` just before the frame's
    /// bytes (the headroom, or the tail of the frame written before) and runs `body` on the
    /// frame, header included, and the number of message bytes in it.
    ///
    /// The storage is written in place: no copy as long as nothing else holds it (the batch
    /// that carried it is gone by the time the message is written), otherwise copied first, as any
    /// array write. Needs ``framesInPlace``.
    mutating func withNextFrameInPlace<R>(_ body: (UnsafeRawBufferPointer, _ count: Int) -> R) -> R {
        precondition(framesInPlace, "no room to frame this message in place")
        let remaining = storage.count - headroom - offset
        let count = min(remaining, fragmentSize)
        let start = headroom + offset
        let headerSize = ServerFrameBatch.headerSize(length: count)
        let (kind, isFirst) = (self.kind, offset == 0)
        return storage.withUnsafeMutableBytes { bytes in
            let frame = bytes.baseAddress! + (start - headerSize)
            _ = ServerFrameBatch.storeHeader(kind: kind, length: count, isFirst: isFirst, isFinal: count == remaining, at: frame)
            return body(UnsafeRawBufferPointer(start: frame, count: headerSize + count), count)
        }
    }

    /// Stands in for a written message so its payload is released at once.
    static let written = OutboundMessage(payload: [], kind: .text)
}

/// The per-connection FIFO of messages waiting to be written (at the end of the turn that queued
/// them, or on WRITEABLE), with a running byte count.
///
/// A head index instead of `removeFirst()` keeps popping O(1); the array is compacted when
/// the consumed prefix dominates.
struct OutboundQueue {
    private var items: [OutboundMessage] = []
    private var head = 0
    /// Payload bytes of every queued message, including the unwritten part of the first.
    private(set) var queuedBytes = 0

    var isEmpty: Bool { head == items.count }

    var count: Int { items.count - head }

    /// The message being written, if any.
    var first: OutboundMessage? { isEmpty ? nil : items[head] }

    /// The queued messages, first to last.
    var pending: ArraySlice<OutboundMessage> { items[head...] }

    mutating func append(_ message: OutboundMessage) {
        _ = append(message, cappedAt: .max)
    }

    /// Appends `message` unless the queue would then hold more than `cap` bytes: nil if it
    /// would (nothing appended), otherwise whether the queue was empty before. One call, so
    /// that the connection's queue is accessed once per message.
    mutating func append(_ message: OutboundMessage, cappedAt cap: Int) -> Bool? {
        let size = message.size
        guard queuedBytes + size <= cap else { return nil }
        let wasEmpty = isEmpty
        items.append(message)
        queuedBytes += size
        return wasEmpty
    }

    /// Records that `count` more bytes of the first message were written; pops it when complete.
    mutating func advanceFirst(by count: Int) {
        precondition(!isEmpty, "advanceFirst on an empty outbound queue")
        items[head].offset += count
        guard items[head].offset >= items[head].size else { return }
        queuedBytes -= items[head].size
        items[head] = .written
        head += 1
        if head == items.count {
            // A queue that held a few messages gives its storage back (most connections send
            // now and then); a busy one keeps it for the next burst.
            items.removeAll(keepingCapacity: items.count > 8 && items.count <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    /// Whether the first message can be framed in place (``OutboundMessage/framesInPlace``).
    var firstFramesInPlace: Bool { !isEmpty && items[head].framesInPlace }

    /// ``OutboundMessage/withNextFrameInPlace(_:)`` on the first message, in the queue's storage.
    mutating func withFirstFrameInPlace<R>(_ body: (UnsafeRawBufferPointer, _ count: Int) -> R) -> R {
        precondition(!isEmpty, "withFirstFrameInPlace on an empty outbound queue")
        return items[head].withNextFrameInPlace(body)
    }

    /// Records that the first `n` messages were written whole (a ``ServerFrameBatch``).
    mutating func removeWhole(_ n: Int) {
        for _ in 0..<min(n, count) { advanceFirst(by: items[head].size - items[head].offset) }
    }

    /// Drops every queued message (e.g. when the connection exceeded its cap).
    mutating func removeAll() {
        items = []
        head = 0
        queuedBytes = 0
    }
}
