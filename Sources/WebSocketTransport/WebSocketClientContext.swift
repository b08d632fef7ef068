/// One extra header of a client's upgrade request (e.g. `Authorization`).
public struct HTTPHeader: Sendable, Equatable {
    /// The header name, e.g. `Authorization`.
    public var name: String
    /// The header value.
    public var value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether the header is safe to put on the wire (a token name, no line breaks in the value).
    var isValid: Bool {
        ServerConfiguration.isToken(name) && !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
    }
}

/// A libwebsockets client context: one lws context and one service thread hosting any number of
/// client connections (thousands are fine).
///
/// Open connections with ``connect(to:subprotocol:allowSelfSigned:maxMessageBytes:maxQueuedBytes:headers:)``;
/// call ``shutdown()`` to close them all with 1001 and stop the thread.
public final class WebSocketClientContext: Sendable {
    /// The configuration the context runs with.
    public let configuration: ClientConfiguration
    private let inbox = CommandInbox()

    /// Starts the service thread and creates the lws client context.
    ///
    /// Blocks the calling thread for the few milliseconds context creation takes.
    /// - Throws: ``TransportError/invalidConfiguration(_:)`` or
    ///   ``TransportError/libraryCall(operation:code:message:)``.
    public init(configuration: ClientConfiguration = ClientConfiguration()) throws(TransportError) {
        try configuration.validate()
        self.configuration = configuration
        _ = try ServiceLoop.start(role: .client(configuration), inbox: inbox)
    }

    deinit {
        inbox.requestShutdown()
    }

    /// How this context's writes were made so far (at the end of a turn or on WRITEABLE).
    public var writeCounts: WriteCounts { inbox.writeCounts.withLock { $0 } }

    /// Opens a WebSocket connection and returns once the handshake completed.
    ///
    /// - Parameters:
    ///   - url: `ws://host[:port][/path]` or `wss://...`.
    ///   - subprotocol: the subprotocol to offer (default `watchrelay.v1`); nil offers none.
    ///   - allowSelfSigned: for `wss://`, accept a self-signed, expired or mismatching certificate.
    ///   - maxMessageBytes: largest inbound message kept (default 1 MiB); larger ones become `.tooLarge`.
    ///   - maxQueuedBytes: largest outbound backlog (default 8 MiB); past it the connection is
    ///     closed with 1008.
    ///   - headers: extra headers for the upgrade request.
    /// - Returns: the open connection; its events start after the handshake.
    /// - Throws: ``TransportError/connectionFailed(url:reason:)`` with lws's reason (refused TCP
    ///   connect, TLS failure, upgrade refused, ...), ``TransportError/invalidURL(_:)``,
    ///   ``TransportError/shutDown``, or `CancellationError` if the task was cancelled.
    public func connect(
        to url: String,
        subprotocol: String? = ServerConfiguration.watchRelaySubprotocol,
        allowSelfSigned: Bool = false,
        maxMessageBytes: Int = 1 << 20,
        maxQueuedBytes: Int = 8 << 20,
        headers: [HTTPHeader] = []
    ) async throws -> ClientConnection {
        let parsed = try WebSocketURL(parsing: url)
        if parsed.isSecure && !configuration.enablesTLS {
            throw TransportError.invalidConfiguration("\(url): this client context was created with enablesTLS false")
        }
        try ServerConfiguration.validateLimits(maxMessageBytes: maxMessageBytes, maxQueuedBytes: maxQueuedBytes)
        if let subprotocol, !ServerConfiguration.isToken(subprotocol) {
            throw TransportError.invalidConfiguration("subprotocol \"\(subprotocol)\" is not an HTTP token")
        }
        if let bad = headers.first(where: { !$0.isValid }) {
            throw TransportError.invalidConfiguration("header \"\(bad.name)\" is not a valid HTTP header")
        }
        let id = ConnectionID.next()
        let (events, continuation) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: .unbounded)
        let inbox = self.inbox
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (completion: CheckedContinuation<Void, any Error>) in
                let request = ConnectRequest(
                    id: id, url: parsed, subprotocol: subprotocol, allowSelfSigned: allowSelfSigned,
                    maxMessageBytes: maxMessageBytes, maxQueuedBytes: maxQueuedBytes, headers: headers,
                    events: continuation, completion: completion)
                if !inbox.post(.connect(request)) {
                    request.fail(TransportError.shutDown)
                }
            }
        } onCancel: {
            inbox.post(.cancelConnect(id))
        }
        return ClientConnection(id: id, events: events, inbox: inbox)
    }

    /// Closes every connection with 1001 ("client shutting down"), waits up to the configured
    /// grace period for the close handshakes, then destroys the context.
    ///
    /// Returns once the context is destroyed; every connection's event stream has finished by
    /// then and pending `connect` calls have thrown ``TransportError/shutDown``. Safe to call twice.
    public func shutdown() async {
        await inbox.shutdownAndWait()
    }
}
