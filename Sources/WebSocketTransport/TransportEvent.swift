import CWebSockets

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
    /// After the outbound cap it comes at once (1008, ``WebSocketServer/slowConsumerReason``),
    /// while the close frame still waits for the peer to read what is in flight.
    case closed(code: UInt16?, reason: String)
}

extension ClientEvent {
    /// The event a completed message becomes, or nil while it is incomplete.
    init?(_ outcome: MessageReassembler.Outcome) {
        switch outcome {
        case .incomplete: return nil
        case .message(let bytes): self = .message(bytes)
        case .binary: self = .binary
        case .tooLarge(let size): self = .tooLarge(size: size)
        }
    }
}

/// Where a connection's events go: the server's shared stream or the client connection's own.
///
/// Used on the service thread only; yielding into an `AsyncStream` continuation is thread-safe.
enum EventSink {
    case server(ServerEventBuffer)
    case client(AsyncStream<ClientEvent>.Continuation)

    func opened(_ id: ConnectionID, remoteAddress: String) {
        if case .server(let events) = self {
            events.append(.opened(id, remoteAddress: remoteAddress))
        }
    }

    func message(_ id: ConnectionID, _ bytes: [UInt8]) {
        switch self {
        case .server(let events): events.append(.message(id, bytes))
        case .client(let events): events.yield(.message(bytes))
        }
    }

    func binary(_ id: ConnectionID) {
        switch self {
        case .server(let events): events.append(.binary(id))
        case .client(let events): events.yield(.binary)
        }
    }

    func tooLarge(_ id: ConnectionID, size: Int) {
        switch self {
        case .server(let events): events.append(.tooLarge(id, size: size))
        case .client(let events): events.yield(.tooLarge(size: size))
        }
    }

    /// Reports the end of the connection; a client connection's stream finishes here.
    func closed(_ id: ConnectionID, code: UInt16?, reason: String) {
        switch self {
        case .server(let events):
            events.append(.closed(id, code: code, reason: reason))
            // A close can come from a timer (ping hang-up, flush timeout), which lws runs
            // before it waits in poll: wake that wait so the batch goes out now.
            events.wakeService()
        case .client(let events):
            events.yield(.closed(code: code, reason: reason))
            events.finish()
        }
    }
}

/// A server's events of one service-loop iteration, handed to its stream as one batch, or,
/// with a ``ServerEventHandler``, to the handler at once.
///
/// lws reports everything one `poll` found (often several messages per socket read) in one
/// `lws_service` call; yielding them together costs one stream hand-off instead of one per
/// event. Service thread only (created and used by ``ServiceCore``).
final class ServerEventBuffer {
    private let continuation: AsyncStream<[ServerEvent]>.Continuation
    private var pending: [ServerEvent] = []
    /// The context, while it exists (set and cleared by ``ServiceLoop``).
    var context: OpaquePointer?
    /// Called synchronously for every event instead of the stream, if set.
    let handler: (any ServerEventHandler)?
    /// Queues the handler's frames and closes on their connections (``ServiceCore/apply(_:)``).
    var apply: ((Command) -> Void)?
    /// What the handler produced in the current call; reused.
    private var outbound = OutboundBatch()
    /// Whether the handler got a call since the last ``endOfTurn()`` (see
    /// ``ServerEventHandler/wantsQuietTurns``).
    private var calledThisTurn = false
    /// Whether ``deliver()`` is applying a batch (a handler call from inside it adds to the next).
    private var delivering = false

    init(_ continuation: AsyncStream<[ServerEvent]>.Continuation, handler: (any ServerEventHandler)?) {
        self.continuation = continuation
        self.handler = handler
    }

    func append(_ event: ServerEvent) {
        guard let handler else {
            pending.append(event)
            return
        }
        calledThisTurn = true
        handler.handle(event, outbound: &outbound)
        deliver()
    }

    /// A value posted to the handler (``WebSocketServer/post(_:)``).
    func received(_ message: any Sendable) {
        calledThisTurn = true
        handler?.received(message, outbound: &outbound)
        deliver()
    }

    /// The handler's timer is due.
    func timerFired() {
        calledThisTurn = true
        handler?.timerFired(outbound: &outbound)
        deliver()
    }

    /// Whether the handler's ``endOfTurn()`` runs after this turn: after every turn the handler
    /// got a call in, and after quiet ones too unless it declines them.
    var endsThisTurn: Bool {
        guard let handler else { return false }
        return calledThisTurn || handler.wantsQuietTurns
    }

    /// End of a service-loop turn; returns the handler's next timer delay.
    func endOfTurn() -> Duration? {
        guard let handler else { return nil }
        calledThisTurn = false
        let delay = handler.endOfTurn(outbound: &outbound)
        deliver()
        return delay
    }

    /// Queues the handler's frames now; while the context is being destroyed (or gone) they
    /// are dropped, since no connection can take them.
    ///
    /// Applying a command can call the handler again: a send past a connection's queue cap
    /// closes it at once, and the handler hears `closed` before the batch is through. What it
    /// adds then is applied after the rest of the batch, by this same call, in order. (Before, the
    /// inner call applied the whole batch being applied, so every other connection in it got
    /// its frames twice: a review found it.)
    private func deliver() {
        guard !delivering else { return }
        delivering = true
        defer { delivering = false }
        while !outbound.isEmpty {
            var batch = OutboundBatch()
            swap(&batch, &outbound)
            if context != nil, let apply {
                for command in batch.commands { apply(command) }
            }
            batch.removeAll()
            // The emptied batch keeps its capacity for the next call.
            if outbound.isEmpty { swap(&batch, &outbound) }
        }
    }

    /// Makes the current (or next) `lws_service` return promptly, so ``flush()`` runs.
    ///
    /// Events reported from socket activity are flushed when `lws_service` returns right after;
    /// events from lws's timers run before its poll and would wait for the next activity. A
    /// handler gets every event at once, so it needs no wake-up.
    func wakeService() {
        if handler == nil, let context { lws_cancel_service(context) }
    }

    /// Yields what accumulated since the last flush, if anything.
    func flush() {
        guard !pending.isEmpty else { return }
        continuation.yield(pending)
        pending = []
    }

    /// Flushes, tells the handler it is finished, then finishes the stream.
    func finish() {
        flush()
        handler?.finished()
        continuation.finish()
    }
}
