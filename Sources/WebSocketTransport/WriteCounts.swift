/// How a context's WebSocket writes were made, counted since it started.
///
/// A connection whose queue fills during a turn of the service loop is written at the end of
/// that turn (``endOfTurn``), with no POLLOUT round trip; what one write leaves behind, or a
/// write lws could not finish, goes out on a later WRITEABLE callback (``afterWriteable``).
/// A relay answering at wire speed writes almost everything at the end of turns; a peer that
/// reads slowly moves writes to WRITEABLE.
public struct WriteCounts: Sendable, Hashable {
    /// `lws_write` calls made at the end of a turn, outside any callback.
    public var endOfTurn = 0
    /// `lws_write` calls made in a WRITEABLE callback.
    public var afterWriteable = 0

    public init(endOfTurn: Int = 0, afterWriteable: Int = 0) {
        self.endOfTurn = endOfTurn
        self.afterWriteable = afterWriteable
    }

    /// Nothing counted.
    var isZero: Bool { endOfTurn == 0 && afterWriteable == 0 }

    static func += (a: inout WriteCounts, b: WriteCounts) {
        a.endOfTurn += b.endOfTurn
        a.afterWriteable += b.afterWriteable
    }
}
