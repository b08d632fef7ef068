/// Handles a server's events on its service thread, inside the lws callback that produced them.
///
/// Instead of ``WebSocketServer/eventBatches`` (a stream consumed on the cooperative pool), a
/// server created with a handler calls it synchronously: a complete inbound message is handed
/// over in the RECEIVE callback that completed it, and the frames and closes the handler adds to
/// `outbound` are queued on their connections before that callback returns and written at the
/// end of the loop's turn (``WriteCounts``). No task, actor hop or inbox is involved for the
/// handler's own frames.
///
/// Every method runs on the service thread, one call at a time, so the handler needs no locks
/// for state only these methods touch. Calls must be fast and must not block: every connection
/// of the server waits while one runs. Other threads reach the handler only through
/// ``WebSocketServer/post(_:)``, which calls ``received(_:outbound:)`` on the service thread.
public protocol ServerEventHandler: AnyObject, Sendable {
    /// One event (opened, message, closed, ...), in the order the service thread saw them.
    func handle(_ event: ServerEvent, outbound: inout OutboundBatch)

    /// A value another thread handed over with ``WebSocketServer/post(_:)``, in posting order.
    func received(_ message: any Sendable, outbound: inout OutboundBatch)

    /// The timer asked for by the last ``endOfTurn(outbound:)`` is due.
    func timerFired(outbound: inout OutboundBatch)

    /// The service loop finished one turn (one wake-up's callbacks).
    ///
    /// - Returns: how long from now ``timerFired(outbound:)`` should run, or nil for no timer.
    ///   The transport arms an lws timer (`lws_sul`) for it, replacing the previous one.
    func endOfTurn(outbound: inout OutboundBatch) -> Duration?

    /// Whether ``endOfTurn(outbound:)`` also runs after a quiet turn: one in which the handler
    /// got no call (no event, posted value or timer), such as a turn where lws read only part of
    /// a message or wrote. True by default. A handler returns false when its end-of-turn work
    /// follows only from those calls and its timer covers the rest; a large message then costs
    /// one end of turn instead of one per read.
    var wantsQuietTurns: Bool { get }

    /// The context is destroyed: no call follows. Runs on the service thread, last.
    func finished()
}

extension ServerEventHandler {
    public var wantsQuietTurns: Bool { true }
}
