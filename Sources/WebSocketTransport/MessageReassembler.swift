/// Turns the chunks lws delivers into whole messages, enforcing the size cap as chunks arrive.
///
/// lws reports RECEIVE data in chunks of at most the protocol's `rx_buffer_size`, and a message
/// may also be split into several frames; a message is complete on the chunk for which
/// `lws_is_final_fragment` is true. Once a message passes `maxMessageBytes` its bytes are
/// dropped as they arrive (nothing is buffered past the cap) and one `.tooLarge` is reported at
/// its end. Binary messages are never buffered: they are reported as `.binary` at their end.
/// Pure value logic with no lws calls, so it is tested directly.
struct MessageReassembler {
    /// What one chunk completed.
    enum Outcome: Equatable {
        /// The message continues in a later chunk.
        case incomplete
        /// A whole text message within the cap.
        case message([UInt8])
        /// A whole binary message (bytes discarded).
        case binary
        /// A whole text message over the cap; `size` is its total length.
        case tooLarge(size: Int)
    }

    let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var size = 0
    private var inMessage = false
    private var isBinary = false
    private var isDiscarding = false

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Whether a message has started but not yet ended.
    var isMidMessage: Bool { inMessage }

    /// Bytes of memory held for the unfinished message (its buffer's capacity: a frame header
    /// promising more reserves room before the bytes come).
    var heldBytes: Int { buffer.capacity }

    /// Drops what is held of the unfinished message; its later chunks are discarded, and its
    /// end is reported as ``Outcome/tooLarge(size:)``. (The server closes the connection then.)
    mutating func abandon() {
        guard inMessage else { return }
        isDiscarding = true
        buffer = []
    }

    /// Feeds one chunk.
    ///
    /// - Parameters:
    ///   - chunk: bytes owned by the caller, valid only during the call; what is kept is copied.
    ///   - frameIsBinary: `lws_frame_is_binary`; only read on a message's first chunk.
    ///   - isFinal: `lws_is_final_fragment`: this chunk ends the message.
    ///   - remainingInFrame: `lws_remaining_packet_payload`, used only to size the buffer.
    mutating func consume(
        _ chunk: UnsafeRawBufferPointer, frameIsBinary: Bool, isFinal: Bool, remainingInFrame: Int = 0
    ) -> Outcome {
        if !inMessage {
            // The common case, a whole text message in one chunk, needs no buffering.
            if isFinal && !frameIsBinary && chunk.count <= maxMessageBytes {
                return .message([UInt8](chunk))
            }
            inMessage = true
            isBinary = frameIsBinary
            isDiscarding = frameIsBinary
            size = 0
            if !isDiscarding {
                buffer.reserveCapacity(min(maxMessageBytes, chunk.count + max(0, remainingInFrame)))
            }
        }
        size += chunk.count
        if !isDiscarding {
            if size > maxMessageBytes {
                isDiscarding = true
                buffer = []  // release what was kept: nothing past the cap stays buffered
            } else {
                buffer.append(contentsOf: chunk)
            }
        }
        guard isFinal else { return .incomplete }
        inMessage = false
        if isBinary { return .binary }
        if isDiscarding { return .tooLarge(size: size) }
        var message: [UInt8] = []
        swap(&message, &buffer)
        // A message of several frames grew its buffer by doubling. What the relay keeps of a
        // message (a payload is a slice of it) holds the whole buffer, so one with much room to
        // spare is copied to its size: at most once, and only for messages sent in fragments.
        if message.capacity > message.count + message.count / 4 + 4096 {
            message = message.withUnsafeBufferPointer { Array($0) }
        }
        return .message(message)
    }
}
