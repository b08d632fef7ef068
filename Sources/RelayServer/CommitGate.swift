import RelayCore
import RelayProtocol

/// The ordering rules between the core's frames and the group commit, as a value: no sockets,
/// no threads, no clock.
///
/// - A frame (or close) that follows a `.persist` in one step's actions waits until the batch
///   holding that mutation is committed ("ticket"); so does every later frame on the same
///   connection, so per-connection order holds. Frames on other connections do not wait.
/// - `.persistAhead` (a block of seqs reserved before it is needed, a wrong pairing code
///   that locked nothing) holds nothing back; `.awaitSeqReservation` makes the following frames wait
///   for the batch with the last seq reservation of that pair direction (`persist` or
///   `persistAhead`), if it is not committed yet. ``committed(_:into:)`` names the reservations
///   committed, for the core to stop asking.
/// - Mutations that pile up while a batch is being committed form the next batch: one commit
///   (one fsync) for many sends. One batch is with the committer at a time.
/// - A batch is `urgent` (must be flushed to stable storage) only if a frame waits for it or
///   it reserves seqs. A later urgent flush covers an earlier batch's writes.
/// - `.awaitStore` makes the following frames wait for the newest batch not yet committed
///   (a reconnected receiver's `welcome` and the items sent to it again).
/// - A failed commit releases nothing. ``commitFailed(_:)`` drops the frames waiting and names
///   their connections for the caller to close; until the batch is finally committed, every new
///   frame waits behind it, so nothing (not even a repeated `accepted`) goes out before the
///   state it reports is durable. The committer reports each later failed attempt too, and the
///   connections that came to wait since are closed in turn.
struct CommitGate {
    /// A batch for the committer.
    struct Batch: Sendable, Equatable {
        let ticket: UInt64
        let mutations: [StoreMutation]
        let urgent: Bool
    }

    /// Mutations of the batch being filled, and its ticket.
    private var openBatch: [StoreMutation] = []
    private var openReserves = false
    private(set) var openTicket: UInt64 = 1
    private(set) var committedTicket: UInt64 = 0
    /// The batch with the committer, if any.
    private(set) var inFlight: UInt64?
    /// The in-flight ticket after ``commitFailed(_:)`` until it is committed.
    private(set) var failing: UInt64?
    /// Frames and closes waiting, by the ticket they wait for, each list in arrival order.
    private var waiting: [UInt64: [RelayAction]] = [:]
    /// The ticket the last waiting frame of each connection waits for.
    private var lastTicket: [LinkID: UInt64] = [:]
    /// The batch holding each pair direction's last seq reservation not yet committed.
    private var reservationTickets: [DirectionKey: UInt64] = [:]
    /// Seq reservations not yet committed, in ticket order.
    private var reservations: [(ticket: UInt64, reservation: SeqReservationCommit)] = []
    /// Payload reads from the store, each after the batch it must follow (0: none open then).
    private var reads: [(after: UInt64, read: PayloadRead)] = []

    /// A read of queued payloads for the committer (``RelayAction/loadPayloads(_:direction:sendIDs:)``).
    struct PayloadRead: Sendable, Equatable {
        let pair: PairID
        let direction: Role
        let sendIDs: [String]
    }

    /// Frames and closes waiting for a commit.
    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
    /// Whether nothing is open, with the committer, or waiting.
    var isIdle: Bool { openBatch.isEmpty && inFlight == nil && waiting.isEmpty }

    /// Takes one step's actions, in order; appends what may go out now to `ready`, in order.
    mutating func admit(_ actions: [RelayAction], into ready: inout [RelayAction]) {
        var gate: UInt64 = 0
        for action in actions {
            switch action {
            case .persist(let mutation):
                openBatch.append(mutation)
                gate = openTicket
                noteReservation(mutation)
            case .persistAhead(let mutation):
                openBatch.append(mutation)
                noteReservation(mutation)
            case .awaitSeqReservation(let pair, let direction):
                if let ticket = reservationTickets[DirectionKey(pair: pair, direction: direction)],
                    ticket > committedTicket
                {
                    gate = max(gate, ticket)
                }
            case .awaitStore:
                // The newest batch with a mutation in it: the open one, else the one in flight.
                let newest = openBatch.isEmpty ? (inFlight ?? 0) : openTicket
                if newest > committedTicket { gate = max(gate, newest) }
            case .loadPayloads(let pair, let direction, let sendIDs):
                // The items' inserts may be in the open batch: the read goes to the committer
                // behind that batch (whose queue keeps the order).
                reads.append((openBatch.isEmpty ? 0 : openTicket, PayloadRead(pair: pair, direction: direction, sendIDs: sendIDs)))
            case .send(let link, _), .close(let link, _, _):
                let ticket = max(gate, lastTicket[link] ?? 0, failing ?? 0)
                if ticket > committedTicket {
                    waiting[ticket, default: []].append(action)
                    lastTicket[link] = ticket
                } else {
                    ready.append(action)
                }
            }
        }
    }

    /// Records a seq reservation in the open batch, which makes it urgent: the core takes a
    /// committed reservation as durable, and seqs it covers go out without waiting.
    private mutating func noteReservation(_ mutation: StoreMutation) {
        guard case .setSeqReserved(let pair, let direction, let upTo) = mutation else { return }
        openReserves = true
        reservationTickets[DirectionKey(pair: pair, direction: direction)] = openTicket
        reservations.append((openTicket, SeqReservationCommit(pair: pair, direction: direction, upTo: upTo)))
    }

    /// Whether ``admit(_:into:)`` would pass `actions` to `ready` as they are and change nothing:
    /// frames and closes only, with no connection waiting and no batch failing. The engine then
    /// performs them in place (a message's step: the copies into `ready` and out were ~3 % of
    /// the relay per 64 B message). Mutating only so the engine asks it in place: as a plain
    /// method on the engine's stored gate, the optimizer copied the whole gate out first (its
    /// arrays and tables retained and released, ~1 % per 64 B message, perf 2026-12-03).
    mutating func passesThrough(_ actions: [RelayAction]) -> Bool {
        guard failing == nil, lastTicket.isEmpty else { return false }
        for i in actions.indices {
            switch actions[i] {
            case .send, .close: continue
            case .persist, .persistAhead, .awaitSeqReservation, .awaitStore, .loadPayloads: return false
            }
        }
        return true
    }

    /// The next batch for the committer: nil while one is with it, or if nothing is open.
    mutating func takeBatch() -> Batch? {
        guard inFlight == nil, !openBatch.isEmpty else { return nil }
        let batch = Batch(
            ticket: openTicket, mutations: openBatch, urgent: openReserves || waiting[openTicket] != nil)
        inFlight = openTicket
        openBatch = []
        openReserves = false
        openTicket += 1
        return batch
    }

    /// The payload reads that may go to the committer now, in order: those whose batch was
    /// handed out (call after ``takeBatch()``, and submit them after that batch).
    mutating func takeReads() -> [PayloadRead] {
        guard !reads.isEmpty else { return [] }
        let ready = reads.prefix { $0.after < openTicket }
        reads.removeFirst(ready.count)
        return ready.map(\.read)
    }

    /// At shutdown: the open batch, even while another is with the committer (whose queue
    /// keeps the order), flushed to stable storage. Nothing waits for it any more.
    mutating func takeFinalBatch() -> Batch? {
        guard !openBatch.isEmpty else { return nil }
        let batch = Batch(ticket: openTicket, mutations: openBatch, urgent: true)
        openBatch = []
        openReserves = false
        openTicket += 1
        return batch
    }

    /// The batch of `ticket` is durable: appends what waited for it to `ready`, in order, and
    /// returns the seq reservations it committed (for ``RelayState/seqReservationCommitted(_:direction:upTo:)``).
    @discardableResult
    mutating func committed(_ ticket: UInt64, into ready: inout [RelayAction]) -> [SeqReservationCommit] {
        precondition(ticket == inFlight, "committed a batch that was not with the committer")
        inFlight = nil
        failing = nil
        committedTicket = ticket
        var done: [SeqReservationCommit] = []
        if let first = reservations.first, first.ticket <= ticket {
            let count = reservations.prefix { $0.ticket <= ticket }.count
            for (reserved, reservation) in reservations.prefix(count) {
                let key = DirectionKey(pair: reservation.pair, direction: reservation.direction)
                if reservationTickets[key] == reserved { reservationTickets[key] = nil }
                done.append(reservation)
            }
            reservations.removeFirst(count)
        }
        guard let released = waiting.removeValue(forKey: ticket) else { return done }
        for action in released {
            ready.append(action)
            if let link = action.link, lastTicket[link] == ticket { lastTicket[link] = nil }
        }
        return done
    }

    /// The in-flight batch failed (the caller keeps retrying it): drops every waiting frame and
    /// returns their connections, for the caller to close. Later frames wait behind the batch.
    mutating func commitFailed(_ ticket: UInt64) -> [LinkID] {
        precondition(ticket == inFlight, "a batch failed that was not with the committer")
        failing = ticket
        var links: [LinkID] = []
        var seen = Set<LinkID>()
        for key in waiting.keys.sorted() {
            for action in waiting[key] ?? [] {
                if let link = action.link, seen.insert(link).inserted { links.append(link) }
            }
        }
        waiting = [:]
        lastTicket = [:]
        return links
    }
}

extension RelayAction {
    /// The connection a frame or close is for.
    fileprivate var link: LinkID? {
        switch self {
        case .send(let link, _), .close(let link, _, _): link
        case .persist, .persistAhead, .awaitSeqReservation, .awaitStore, .loadPayloads: nil
        }
    }
}

/// A committed seq reservation: seqs of `pair`'s `direction` up to `upTo` are covered.
struct SeqReservationCommit: Sendable, Equatable {
    let pair: PairID
    let direction: Role
    let upTo: Int64
}

/// A pair direction, for the seq reservations not yet committed.
private struct DirectionKey: Hashable {
    let pair: PairID
    let direction: Role
}
