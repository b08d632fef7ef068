/// A libwebsockets WebSocket server with plain HTTP routes on the same port.
///
/// Creating it starts one service thread that owns the lws context and listens at once.
/// Inbound traffic arrives as ``eventBatches`` (or one by one as ``events``); ``send(_:to:)`` and ``close(_:code:reason:)`` can be
/// called from any thread or task and return immediately (they queue a command for the service
/// thread). Call ``shutdown()`` to close every client with 1001 and stop.
///
/// Only the path and subprotocol of the configuration accept WebSocket upgrades; anything else
/// (another path, no or another subprotocol) is refused during the handshake.
///
/// - Important: ``eventBatches`` is an unbounded `AsyncStream`: lws reads as fast as clients send, and
///   every complete message is buffered until consumed. Per connection at most one message in
///   progress is held (bounded by `maxMessageBytes`), but the stream itself is bounded only by
///   the consumer keeping up. Consume it promptly, from a single task.
public final class WebSocketServer: Sendable {
    /// The port the server listens on (the ephemeral one if the configuration said 0).
    public let port: Int
    /// Everything that happens on the server's WebSocket connections, in order per connection.
    ///
    /// Finishes after ``shutdown()`` once the context is destroyed. Iterate it from one task only.
    public var events: ServerEvents { ServerEvents(batches: eventBatches) }
    /// The same events in the batches the service thread produced them: everything one
    /// `lws_service` iteration reported (per connection in order; batches in order).
    ///
    /// A consumer that handles events in batches pays one stream hand-off per batch instead of
    /// one per event. Iterate either this or ``events``, from one task only.
    public let eventBatches: AsyncStream<[ServerEvent]>
    /// The configuration the server runs with.
    public let configuration: ServerConfiguration
    private let inbox = CommandInbox()

    /// Starts the service thread, creates the lws context, and listens.
    ///
    /// Blocks the calling thread for the few milliseconds context creation takes.
    /// - Throws: ``TransportError/invalidConfiguration(_:)`` for a bad value, or
    ///   ``TransportError/libraryCall(operation:code:message:)`` if lws cannot create the context
    ///   (port taken, unreadable certificate or key, ...).
    public convenience init(configuration: ServerConfiguration) throws(TransportError) {
        try self.init(configuration: configuration, eventHandler: nil)
    }

    /// Starts a server whose events go to `handler`, called on the service thread in the
    /// callback that produced each event (see ``ServerEventHandler``); ``eventBatches`` then
    /// yields nothing and finishes at shutdown.
    ///
    /// - Throws: as ``init(configuration:)``.
    public convenience init(configuration: ServerConfiguration, handler: any ServerEventHandler) throws(TransportError) {
        try self.init(configuration: configuration, eventHandler: handler)
    }

    private init(configuration: ServerConfiguration, eventHandler: (any ServerEventHandler)?) throws(TransportError) {
        try configuration.validate()
        self.configuration = configuration
        let (batches, continuation) = AsyncStream.makeStream(of: [ServerEvent].self, bufferingPolicy: .unbounded)
        self.eventBatches = batches
        var running = configuration
        running.eventHandler = eventHandler
        port = try ServiceLoop.start(role: .server(running, continuation), inbox: inbox)
    }

    /// Hands `message` to the server's ``ServerEventHandler`` on the service thread
    /// (``ServerEventHandler/received(_:outbound:)``); returns at once.
    ///
    /// - Returns: false if the server is shut down (or going down): the message was dropped.
    @discardableResult
    public func post(_ message: any Sendable) -> Bool {
        inbox.post(.toHandler(message))
    }

    deinit {
        inbox.requestShutdown()
    }

    /// How the server's writes were made so far (at the end of a turn or on WRITEABLE).
    public var writeCounts: WriteCounts { inbox.writeCounts.withLock { $0 } }

    /// Bytes held right now for messages that began to arrive and have not ended, over all
    /// connections (bounded by ``ServerConfiguration/maxUnfinishedMessageBytes``).
    public var unfinishedMessageBytes: Int { inbox.unfinishedBytes.withLock { $0 } }

    /// The reason of the 1008 close a connection gets when its outbound backlog would pass
    /// `maxQueuedBytesPerConnection` (a slow consumer); its `closed` event carries it too.
    public static let slowConsumerReason = "outbound queue limit exceeded"

    /// Queues a text message for a connection; returns at once.
    ///
    /// Messages to one connection are sent in call order, one frame per 64 KiB. A message to a
    /// closed, closing or unknown connection is dropped silently (its `closed` event tells the
    /// caller). If the connection's queued bytes would exceed `maxQueuedBytesPerConnection`,
    /// the queue is dropped and the connection closed with 1008.
    /// - Parameters:
    ///   - text: the UTF-8 payload, sent as is.
    ///   - connection: the receiving connection.
    public func send(_ text: [UInt8], to connection: ConnectionID) {
        inbox.post(.send(connection, OutboundMessage(payload: text, kind: .text)))
    }

    /// Queues every message and close of `batch`, in order, with one hand-off to the service
    /// thread (instead of one per message); same rules as ``send(_:to:)`` and ``close(_:code:reason:)``.
    public func send(_ batch: OutboundBatch) {
        inbox.post(contentsOf: batch.commands)
    }

    /// Closes a connection after the messages already queued for it are sent.
    ///
    /// The `closed` event follows when lws has closed the connection. Codes RFC 6455 forbids in a
    /// close frame (e.g. 1005, 1006) are sent as 1000; the reason is cut to 123 bytes.
    /// - Parameters:
    ///   - connection: the connection to close.
    ///   - code: the close code, e.g. 1000 (normal) or 4001.
    ///   - reason: a short UTF-8 text for the peer.
    public func close(_ connection: ConnectionID, code: UInt16 = 1000, reason: String = "") {
        inbox.post(.close(connection, code: code, reason: reason))
    }

    /// Closes every connection with 1001 ("relay shutting down"), waits up to the configured
    /// grace period for their close handshakes, then destroys the context and finishes ``events``.
    ///
    /// Returns once the context is destroyed. Safe to call more than once and concurrently:
    /// every call returns after the same shutdown completed.
    public func shutdown() async {
        await inbox.shutdownAndWait()
    }
}

/// Messages and closes collected for one hand-off to the service thread (see
/// ``WebSocketServer/send(_:)``).
public struct OutboundBatch: Sendable {
    var commands: [Command] = []

    public init() {}

    /// Whether nothing was added.
    public var isEmpty: Bool { commands.isEmpty }

    /// Adds a text message for `connection`.
    public mutating func send(_ text: [UInt8], to connection: ConnectionID) {
        commands.append(.send(connection, OutboundMessage(payload: text, kind: .text)))
    }

    /// The spare bytes ``send(_:headroom:to:)`` wants in front of a message.
    public static let frameHeadroom = OutboundMessage.frameHeadroom

    /// Adds a text message for `connection` whose first `headroom` bytes of `storage` are spare
    /// (``frameHeadroom`` of them, or 0): the transport writes the frame header there and the
    /// message goes out without being copied.
    public mutating func send(_ storage: [UInt8], headroom: Int, to connection: ConnectionID) {
        commands.append(.send(connection, OutboundMessage(storage: storage, headroom: headroom, kind: .text)))
    }

    /// Adds a close of `connection`, after what was added for it before.
    public mutating func close(_ connection: ConnectionID, code: UInt16 = 1000, reason: String = "") {
        commands.append(.close(connection, code: code, reason: reason))
    }

    /// Empties the batch, keeping its storage for the next one.
    public mutating func removeAll() {
        commands.removeAll(keepingCapacity: true)
    }
}

/// ``WebSocketServer/eventBatches`` one event at a time.
public struct ServerEvents: AsyncSequence, Sendable {
    public typealias Element = ServerEvent
    public typealias Failure = Never

    let batches: AsyncStream<[ServerEvent]>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = ServerEvent
        public typealias Failure = Never

        var batches: AsyncStream<[ServerEvent]>.Iterator
        var batch: [ServerEvent] = []
        var index = 0

        public mutating func next() async -> ServerEvent? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> ServerEvent? {
            while index == batch.count {
                guard let more = await batches.next(isolation: actor) else { return nil }
                batch = more
                index = 0
            }
            index += 1
            return batch[index - 1]
        }
    }
}
