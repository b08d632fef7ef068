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

    let payload: [UInt8]
    let kind: Kind
    /// Largest frame for this message (at least 1).
    let fragmentSize: Int
    /// Bytes already written.
    var offset = 0

    init(payload: [UInt8], kind: Kind, fragmentSize: Int = OutboundMessage.defaultFragmentSize) {
        self.payload = payload
        self.kind = kind
        self.fragmentSize = max(1, fragmentSize)
    }

    /// Stands in for a written message so its payload is released at once.
    static let written = OutboundMessage(payload: [], kind: .text)
}

/// The per-connection FIFO of messages waiting for WRITEABLE, with a running byte count.
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
        items.append(message)
        queuedBytes += message.payload.count
    }

    /// Records that `count` more bytes of the first message were written; pops it when complete.
    mutating func advanceFirst(by count: Int) {
        precondition(!isEmpty, "advanceFirst on an empty outbound queue")
        items[head].offset += count
        guard items[head].offset >= items[head].payload.count else { return }
        queuedBytes -= items[head].payload.count
        items[head] = .written
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    /// Records that the first `n` messages were written whole (a ``ServerFrameBatch``).
    mutating func removeWhole(_ n: Int) {
        for _ in 0..<min(n, count) { advanceFirst(by: items[head].payload.count - items[head].offset) }
    }

    /// Drops every queued message (e.g. when the connection exceeded its cap).
    mutating func removeAll() {
        items = []
        head = 0
        queuedBytes = 0
    }
}
