import CWebSockets

/// A close frame: the code (nil if the frame carried none) and the reason text.
struct CloseFrame: Equatable {
    var code: UInt16?
    var reason: String

    /// Parses the payload of a close frame as lws hands it to `WS_PEER_INITIATED_CLOSE`:
    /// a 2-byte big-endian code, then the UTF-8 reason. An empty payload means 1005 ("no status").
    init(payload: UnsafeRawBufferPointer) {
        guard payload.count >= 2 else {
            self.init(code: 1005, reason: "")
            return
        }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        // Lossy decoding: a peer's invalid UTF-8 becomes U+FFFD instead of an error.
        self.init(code: code, reason: String(decoding: payload[2...], as: UTF8.self))
    }

    init(code: UInt16?, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The code as sent on the wire: codes RFC 6455 forbids in a close frame become 1000.
    static func sendable(code: UInt16) -> UInt16 {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: code
        default: 1000
        }
    }

    /// The reason as sent on the wire: at most 123 bytes, cut at a UTF-8 character boundary.
    static func sendable(reason: String) -> [UInt8] {
        var bytes = Array(reason.utf8)
        guard bytes.count > 123 else { return bytes }
        bytes.removeLast(bytes.count - 123)
        // Drop a trailing partial character: continuation bytes, then their lead byte.
        while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
        if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
        return bytes
    }
}

/// Service-thread bookkeeping for one open WebSocket connection (server or client side).
///
/// Reached through the ``ServiceCore`` connection table by the ``ConnectionID`` that lws keeps in
/// per-session (server) or opaque user (client) data; lws holds no reference to this object.
final class ConnectionState {
    let id: ConnectionID
    /// The lws connection; valid until `LWS_CALLBACK_CLOSED`/`CLIENT_CLOSED`, when this state is dropped.
    let wsi: OpaquePointer
    let sink: EventSink
    let maxQueuedBytes: Int
    var outbound = OutboundQueue()
    var reassembler: MessageReassembler
    /// Set when this side decided to close; sent after the messages queued before it.
    var localClose: CloseFrame?
    /// The close frame the peer sent first, if any.
    var peerClose: CloseFrame?
    /// Whether the `closed` event went out already (a slow consumer is reported gone when the
    /// relay gives up on it, while its close frame still waits for the peer to read).
    var closeReported = false
    /// Whether `localClose` went out (this side wrote its close frame and waits for the peer's).
    /// Next to `closeReported` and before the 8-byte field below: the four share its padding.
    var localCloseSent = false
    /// Whether lws was told to drop the connection without a close handshake
    /// (``ServiceCore/drop(_:)``): nothing more is written or queued, and no close is asked for.
    var dropRequested = false
    /// How long the connection may take, once `localClose` is set, to flush its queue and then
    /// to answer the close frame (each), before it is dropped.
    var closeFlushSeconds: Int32 = 5
    /// Server connections: when anything (a message, a pong) last arrived, or the keepalive
    /// was otherwise started over (``MonotonicClock`` nanoseconds; see ``KeepaliveSchedule``).
    var lastHeardAt: UInt64 = 0
    /// Client connections only, and only when asked for (``ClientConnection/observe(_:)``):
    /// told of each message with a timestamp. Nil costs the write and receive paths one check.
    var observer: (any ClientMessageObserver)? {
        get { attachments?.observer }
        set { attaching { $0.observer = newValue } }
    }
    /// Client connections only, when attached (``ClientConnection/handle(with:)``): handles
    /// complete inbound messages on the service thread and may consume them.
    var handler: (any ClientMessageHandler)? {
        get { attachments?.handler }
        set { attaching { $0.handler = newValue } }
    }
    /// The observer and the handler, behind one reference: every server connection would
    /// otherwise carry their 56 bytes, unused (a quarter of this object).
    private var attachments: Attachments?

    private final class Attachments {
        var observer: (any ClientMessageObserver)?
        var handler: (any ClientMessageHandler)?
    }

    /// Changes the attachments, and drops them once neither is set.
    private func attaching(_ change: (Attachments) -> Void) {
        let box = attachments ?? Attachments()
        change(box)
        attachments = box.observer == nil && box.handler == nil ? nil : box
    }

    init(id: ConnectionID, wsi: OpaquePointer, sink: EventSink, maxMessageBytes: Int, maxQueuedBytes: Int) {
        self.id = id
        self.wsi = wsi
        self.sink = sink
        self.maxQueuedBytes = maxQueuedBytes
        self.reassembler = MessageReassembler(maxMessageBytes: maxMessageBytes)
    }

    /// A server connection: its frames go out unmasked, so several may be written as one send
    /// (``ServerFrameBatch``); a client's must be masked by lws.
    var writesUnmaskedFrames: Bool {
        if case .server = sink { return true }
        return false
    }

    /// What the `closed` event reports: the peer's frame if it closed first, else ours, else
    /// nothing (the connection was lost without a close handshake).
    var closeReport: CloseFrame {
        peerClose ?? localClose ?? CloseFrame(code: nil, reason: "")
    }
}
