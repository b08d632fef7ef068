/// One open client WebSocket connection of a ``WebSocketClientContext``.
///
/// All methods return at once and may be called from any thread or task: they queue a command
/// for the context's service thread. The connection stays open until either side closes it or
/// the context shuts down; dropping this object does not close it.
///
/// - Important: ``events`` is an unbounded `AsyncStream` (see ``WebSocketServer`` for why);
///   consume it promptly, from one task.
public final class ClientConnection: Sendable {
    /// The connection's ID (unique within the process).
    public let id: ConnectionID
    /// Messages and the final `closed` event; finishes after `closed`.
    public let events: AsyncStream<ClientEvent>
    private let inbox: CommandInbox

    init(id: ConnectionID, events: AsyncStream<ClientEvent>, inbox: CommandInbox) {
        self.id = id
        self.events = events
        self.inbox = inbox
    }

    /// Queues a text message; messages go out in call order, one frame per 64 KiB.
    ///
    /// Dropped silently once the connection is closing or closed.
    public func send(_ text: [UInt8]) {
        inbox.post(.send(id, OutboundMessage(payload: text, kind: .text)))
    }

    /// Queues a binary message (the relay protocol refuses these; for hostile-input tests).
    public func sendBinary(_ bytes: [UInt8]) {
        inbox.post(.send(id, OutboundMessage(payload: bytes, kind: .binary)))
    }

    /// Queues a text message sent as several frames of at most `fragmentSize` bytes each
    /// (for tests of reassembly and of the size cap).
    public func sendFragmented(_ text: [UInt8], fragmentSize: Int) {
        inbox.post(.send(id, OutboundMessage(payload: text, kind: .text, fragmentSize: fragmentSize)))
    }

    /// Attaches `observer` to this connection (replacing any other), or detaches it with nil,
    /// and returns once the service thread has done so.
    ///
    /// From then on the observer is told of every message written after those already queued
    /// and of every message received (see ``ClientMessageObserver``); events are reported as
    /// before. Does nothing on a connection that has closed.
    public func observe(_ observer: (any ClientMessageObserver)?) async {
        await attach(.observer(observer))
    }

    /// Attaches `handler` to this connection (replacing any other), or detaches it with nil,
    /// and returns once the service thread has done so and called its
    /// ``ClientMessageHandler/attached(to:outbound:)``.
    ///
    /// From then on every complete inbound message is handed to the handler on the service
    /// thread, and only those it yields (and the final `closed`) reach ``events`` (see
    /// ``ClientMessageHandler``). Does nothing on a connection that has closed.
    public func handle(with handler: (any ClientMessageHandler)?) async {
        await attach(.handler(handler))
    }

    /// Whether `other` is served by the same client context (the same service thread), so a
    /// ``ClientMessageHandler`` of one can send on the other.
    public func sharesContext(with other: ClientConnection) -> Bool {
        inbox === other.inbox
    }

    private func attach(_ attachment: ClientAttachment) async {
        await withCheckedContinuation { (applied: CheckedContinuation<Void, Never>) in
            if !inbox.post(.attach(id, attachment, applied)) {
                applied.resume()  // the context is shut down: nothing left to attach to
            }
        }
    }

    /// Closes the connection after the messages already queued are sent.
    ///
    /// The `closed` event reports the code once lws has closed the connection. Codes RFC 6455
    /// forbids in a close frame are sent as 1000; the reason is cut to 123 bytes.
    public func close(code: UInt16 = 1000, reason: String = "") {
        inbox.post(.close(id, code: code, reason: reason))
    }
}
