/// Handles one client connection's inbound messages on its context's service thread, in the
/// lws callback that completed them, and may keep them out of ``ClientConnection/events``.
///
/// Attach one with ``ClientConnection/handle(with:)``. It is the ``ClientMessageObserver``'s
/// sibling for a client that must *answer* at wire speed (a load generator): instead of the
/// message crossing to a Swift task through the `AsyncStream` and the answer crossing back
/// through the context's inbox and `lws_cancel_service`, the handler decides on the service
/// thread, and the frames and closes it adds to `outbound` are queued on their connections before
/// the callback returns (and written at the end of the loop's turn). Frames may go to any
/// connection of the same context (check with ``ClientConnection/sharesContext(with:)``); one
/// addressed to a connection of another context, or to one that is closing or closed, is dropped.
///
/// Only `.message`, `.binary` and `.tooLarge` events reach the handler. `.closed` always goes to
/// ``ClientConnection/events`` (and finishes it), so a consumer of the stream still learns that
/// the connection ended; so does every event the handler returns ``ClientEventDisposition/yield``
/// for, in order.
///
/// - Important: every method runs on the service thread, one call at a time for the whole
///   context, and holds it up: keep them short and non-blocking. The handler must be Sendable
///   (it is created elsewhere); state only these methods touch needs no other ordering, but
///   whatever other threads read must be thread-safe.
public protocol ClientMessageHandler: AnyObject, Sendable {
    /// The handler was attached to `connection` (on the service thread, before any message
    /// reaches it); frames added here go out before any that ``handle(_:on:outbound:)`` adds.
    func attached(to connection: ConnectionID, outbound: inout OutboundBatch)

    /// A complete inbound message of `connection` (reassembled, after the observer saw it).
    ///
    /// - Returns: ``ClientEventDisposition/consume`` to keep the event out of
    ///   ``ClientConnection/events``, ``ClientEventDisposition/yield`` to pass it on.
    func handle(_ event: ClientEvent, on connection: ConnectionID, outbound: inout OutboundBatch)
        -> ClientEventDisposition
}

extension ClientMessageHandler {
    /// Does nothing: a handler that sends only in answer to messages needs no start.
    public func attached(to connection: ConnectionID, outbound: inout OutboundBatch) {}
}

/// What becomes of an inbound event a ``ClientMessageHandler`` was given.
public enum ClientEventDisposition: Sendable, Equatable {
    /// The handler dealt with it: nothing is yielded to ``ClientConnection/events``.
    case consume
    /// Yielded to ``ClientConnection/events`` as if no handler were attached.
    case yield
}

extension OutboundBatch {
    /// Adds a binary message for `connection` (the relay protocol refuses these; a client
    /// handler speaking a binary protocol, such as MQTT over WebSockets, needs them).
    public mutating func sendBinary(_ bytes: [UInt8], to connection: ConnectionID) {
        commands.append(.send(connection, OutboundMessage(payload: bytes, kind: .binary)))
    }
}

/// What ``ClientConnection/observe(_:)`` and ``ClientConnection/handle(with:)`` attach
/// (or, with nil, detach) on the service thread.
enum ClientAttachment: Sendable {
    case observer((any ClientMessageObserver)?)
    case handler((any ClientMessageHandler)?)
}
