import RelayProtocol

/// Something that happened to the relay: the core's input.
public enum RelayEvent: Sendable, Hashable {
    /// A WebSocket connection completed its upgrade.
    case opened(LinkID, address: String)
    /// A whole text message arrived.
    case frame(LinkID, [UInt8])
    /// A binary message arrived (its bytes were discarded).
    case binary(LinkID)
    /// A message over the hard cap arrived (its bytes were discarded).
    case tooLarge(LinkID, size: Int)
    /// The connection is gone.
    case closed(LinkID)
    /// Time passed: reply timeouts and expiries are checked.
    case tick
    /// Payloads read from the store for a ``RelayAction/loadPayloads(_:direction:sendIDs:)``
    /// (ids the store no longer holds are missing).
    case payloadsLoaded(PairID, direction: Role, [ExactID: Payload])
}

/// Something the relay must do: the core's output, interpreted in order.
public enum RelayAction: Sendable, Hashable {
    /// Send a frame on a connection.
    case send(LinkID, RelayFrame)
    /// Close a connection (after the frames queued before this action).
    case close(LinkID, CloseCode, reason: String)
    /// Commit a change; every `send` after it in the same batch waits for the commit.
    case persist(StoreMutation)
    /// Commit a change no frame waits for: frames after it go out without waiting. The next
    /// block of seqs, reserved while half of the current one is left (its batch is still
    /// flushed at once, see ``awaitSeqReservation(_:direction:)``), or a wrong pairing code
    /// that locked nothing (a count lost to a crash only makes a later lock come one code later).
    case persistAhead(StoreMutation)
    /// Frames after this wait until the last seq reservation (`.setSeqReserved`, by `persist`
    /// or `persistAhead`) of this pair direction is committed: a seq is being used whose
    /// reservation the core has not yet been told is committed
    /// (``RelayState/seqReservationCommitted(_:direction:upTo:)``).
    case awaitSeqReservation(PairID, direction: Role)
    /// Frames after this wait until every mutation asked for before it is committed: a
    /// reconnected receiver's `welcome` and the items sent again to it carry seqs (and a
    /// context) whose reservation and `setItemSeq` may still be on their way to the store, and
    /// on a new connection nothing else holds them back.
    case awaitStore
    /// Read the payloads of these queued items of a pair direction from the store, after every
    /// mutation before this action is committed, and hand them back as
    /// ``RelayEvent/payloadsLoaded(_:direction:_:)``. Never on the service thread. Frames do not
    /// wait for it.
    case loadPayloads(PairID, direction: Role, sendIDs: [String])
}
