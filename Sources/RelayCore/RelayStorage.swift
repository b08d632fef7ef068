import RelayProtocol
/// Durable storage as the relay's committer sees it: everything at start, then one batch of
/// mutations at a time, and queued payloads read back when they are about to be delivered.
///
/// The relay core only describes changes (``StoreMutation``) and reads ``PairSnapshot``s; the
/// server's committer is the one caller of ``apply(_:urgent:)``. SQLite (`SQLiteRelayStorage`
/// in RelayStore) is the engine today; another (a later issue names Redis) implements this
/// protocol and plugs in without touching the core or the transport.
///
/// Calls may block (disk, network): callers make them on a thread of their own (the relay's
/// committer thread), never on the cooperative pool or the lws service thread. An engine must
/// tolerate calls from different threads, one at a time.
public protocol RelayStorage: AnyObject, Sendable {
    /// Everything stored, as the core needs it at start (pairs in creation order, items in
    /// acceptance order), after dropping bookkeeping that expired by `now`.
    func loadAll(now: Timestamp) throws -> [PairSnapshot]

    /// Like ``loadAll(now:)``, but the items not sent yet come without their payloads
    /// (``QueuedItem/withoutPayload()``: their size kept); sent, unacked items keep theirs. What
    /// a relay that loads payloads on demand (``RelayConfiguration/loadsPayloadsOnDemand``)
    /// reads at start, so its memory does not grow with what is queued.
    func loadIndex(now: Timestamp) throws -> [PairSnapshot]

    /// The wrong pairing codes that still count at `now` (``WrongPairingCode/countsUntil`` after
    /// it), in the order they were recorded, after deleting the ones that no longer do: what
    /// the core needs at start to keep the address and relay-wide locks (PROTOCOL.md §6.3).
    func loadWrongPairingCodes(now: Timestamp) throws -> [WrongPairingCode]

    /// The stored payloads of the items `sendIDs` of `pair`'s `direction` (the sender's role),
    /// by send id; ids not stored (acked, cancelled, or the pair gone) are left out.
    func loadPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws -> [ExactID: Payload]

    /// Applies `mutations` in order and atomically: when this returns, all of them are durable;
    /// when it throws, none is applied and the caller may retry the same batch.
    ///
    /// - Parameter urgent: Whether a frame waits for this batch. A batch nothing waits for may
    ///   skip its own flush to stable storage: it must still survive the process being killed,
    ///   and the next urgent batch's flush must cover it.
    func apply(_ mutations: [StoreMutation], urgent: Bool) throws
}
