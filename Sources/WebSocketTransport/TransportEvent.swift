/// Something that happened on one of a ``WebSocketServer``'s connections.
///
/// Events of one connection arrive in the order lws reported them: `opened` first, `closed` last,
/// and nothing for that ID after `closed`.
public enum ServerEvent: Sendable {
    /// A client completed the WebSocket handshake on the configured path and subprotocol.
    ///
    /// `remoteAddress` is the peer's IP address without port (from `lws_get_peer_simple`), for
    /// per-address limits.
    case opened(ConnectionID, remoteAddress: String)
    /// A complete text message (fragments reassembled) of at most `maxMessageBytes` bytes.
    case message(ConnectionID, [UInt8])
    /// A binary message arrived; its bytes were discarded and the connection stays open.
    case binary(ConnectionID)
    /// A text message exceeded `maxMessageBytes`; nothing of it was kept past the cap, the
    /// connection stays open, and `size` is the message's total length.
    case tooLarge(ConnectionID, size: Int)
    /// The connection ended; see ``ClientEvent/closed(code:reason:)`` for what `code` means.
    case closed(ConnectionID, code: UInt16?, reason: String)
}

/// Something that happened on one ``ClientConnection``.
///
/// The stream finishes right after `closed`.
public enum ClientEvent: Sendable {
    /// A complete text message (fragments reassembled) of at most `maxMessageBytes` bytes.
    case message([UInt8])
    /// A binary message arrived; its bytes were discarded and the connection stays open.
    case binary
    /// A text message exceeded `maxMessageBytes`; nothing of it was kept past the cap, the
    /// connection stays open, and `size` is the message's total length.
    case tooLarge(size: Int)
    /// The connection ended.
    ///
    /// `code` is the peer's close code if the peer closed first (1005 when its close frame had no
    /// code), else the code this side sent (e.g. 1008 after the outbound cap, 1001 at shutdown), or
    /// `nil` if the connection was lost without a close handshake (reset, ping timeout).
    case closed(code: UInt16?, reason: String)
}

/// Where a connection's events go: the server's shared stream or the client connection's own.
///
/// Used on the service thread only; yielding into an `AsyncStream` continuation is thread-safe.
enum EventSink {
    case server(AsyncStream<ServerEvent>.Continuation)
    case client(AsyncStream<ClientEvent>.Continuation)

    func opened(_ id: ConnectionID, remoteAddress: String) {
        if case .server(let events) = self {
            events.yield(.opened(id, remoteAddress: remoteAddress))
        }
    }

    func message(_ id: ConnectionID, _ bytes: [UInt8]) {
        switch self {
        case .server(let events): events.yield(.message(id, bytes))
        case .client(let events): events.yield(.message(bytes))
        }
    }

    func binary(_ id: ConnectionID) {
        switch self {
        case .server(let events): events.yield(.binary(id))
        case .client(let events): events.yield(.binary)
        }
    }

    func tooLarge(_ id: ConnectionID, size: Int) {
        switch self {
        case .server(let events): events.yield(.tooLarge(id, size: size))
        case .client(let events): events.yield(.tooLarge(size: size))
        }
    }

    /// Reports the end of the connection; a client connection's stream finishes here.
    func closed(_ id: ConnectionID, code: UInt16?, reason: String) {
        switch self {
        case .server(let events):
            events.yield(.closed(id, code: code, reason: reason))
        case .client(let events):
            events.yield(.closed(code: code, reason: reason))
            events.finish()
        }
    }
}
