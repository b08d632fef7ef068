import Primitives
import RelayConsole
import RelayCore
import RelayProtocol
import WebSocketTransport

/// Runs the core on the lws service thread: the transport calls it in the callback that
/// completed each message (``ServerEventHandler``), it hands the event to ``RelayState`` and
/// queues the answers on their connections before that callback returns.
///
/// Frames that depend on a store commit wait in the ``CommitGate``; once per service-loop turn
/// the open batch goes to the ``Committer`` (its own thread), whose confirmations come back
/// through the transport's inbox (``WebSocketServer/post(_:)``) and release the waiting frames
/// here, in order. Deadlines (reply timeouts) and the gauges run from one lws timer armed for
/// the next of them.
///
/// Everything but ``init`` and ``attach(committer:)`` runs on the service thread, one call at a
/// time (the transport's contract), so the mutable state has no lock; that confinement is what
/// the `@unchecked Sendable` stands for. Off that thread, ``stats`` is answered through the inbox.
final class RelayEngine: ServerEventHandler, @unchecked Sendable {
    /// How often the gauges of `/metrics` are refreshed.
    static let gaugeInterval: Duration = .milliseconds(500)

    var core: RelayState
    private let metrics: RelayMetrics
    let clock: Clock
    let log: Logger
    /// The console's hub and held frames (`serve --console`); nil without a console.
    var console: ConsoleAttachment?
    /// Which frames wait for which commit.
    private var gate = CommitGate()
    /// Set by ``attach(committer:)`` before the transport starts.
    private var committer: Committer?
    /// Frames and closes the gate let through in the current call.
    private var ready: [RelayAction] = []
    /// Highest seq delivered per connection (the latency metric counts first deliveries).
    private var deliveredSeq: [LinkID: Int64] = [:]
    /// The time of the current call (``run(_:_:)``, a commit in ``received(_:outbound:)``, the
    /// console's faults), read once per call: each `deliver` it queues has its latency measured to it.
    var callNow = Timestamp(millisecondsSinceEpoch: 0)
    /// Counter updates of the current turn, handed to the metrics once per turn.
    private var pendingMetrics = MetricsBatch()
    /// When the gauges are refreshed next.
    private var gaugesDue: ContinuousClock.Instant = .now
    /// Counts when the context went away, for ``stats`` after shutdown.
    private let finalStats = LockedState<Stats?>(nil)

    /// Counts for tests and scenarios.
    struct Stats: Sendable {
        let connections: Int
        let pairs: Int
        let queued: Int
    }

    /// Asks the engine for its counts on the service thread.
    struct StatsRequest: Sendable {
        let reply: CheckedContinuation<Stats, Never>

        /// Asks the handler of `transport` on its service thread, or `fallback` if the transport
        /// no longer takes posts. Answered in inbox order: it returns only after everything
        /// posted before it was applied.
        static func ask(_ transport: WebSocketServer, otherwise fallback: @autoclosure () -> Stats) async -> Stats {
            await withCheckedContinuation { continuation in
                if !transport.post(StatsRequest(reply: continuation)) { continuation.resume(returning: fallback()) }
            }
        }
    }

    static let noStats = Stats(connections: 0, pairs: 0, queued: 0)

    /// A batch is durable (posted by the committer's thread).
    struct Committed: Sendable {
        let ticket: UInt64
        let mutations: Int
    }

    /// A batch failed repeatedly and is being retried (posted by the committer's thread).
    struct CommitFailing: Sendable {
        let ticket: UInt64
    }

    /// Payloads read from the store (posted by the committer's thread).
    struct PayloadsLoaded: Sendable {
        let pair: PairID
        let direction: Role
        let payloads: [ExactID: Payload]
    }

    /// An engine for `core`; with a `console`, frames its faults hold count up to
    /// `maxQueuedBytesPerConnection` per connection (the transport's slow-consumer cap).
    init(
        core: RelayState, metrics: RelayMetrics, clock: Clock, log: Logger, console: ConsoleHub? = nil,
        maxQueuedBytesPerConnection: Int
    ) {
        self.console = console.map { ConsoleAttachment(hub: $0, maxHeldBytes: maxQueuedBytesPerConnection) }
        self.core = core
        self.metrics = metrics
        self.clock = clock
        self.log = log
    }

    /// Sets the committer; call once, before the transport that calls this engine starts.
    func attach(committer: Committer) {
        self.committer = committer
    }

    /// Counts of the engine's core, read on the service thread (or the last ones, after shutdown).
    func stats(via transport: WebSocketServer) async -> Stats {
        if let final = finalStats.withLock({ $0 }) { return final }
        return await StatsRequest.ask(transport, otherwise: finalStats.withLock { $0 } ?? Self.noStats)
    }

    // MARK: - ServerEventHandler (service thread)

    func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
        if console != nil { console?.changed = true }
        switch event {
        case .opened(let id, let address):
            log.debug("connection opened", ("conn", id.description), ("addr", address))
            run(.opened(LinkID(id.rawValue), address: address), &outbound)
        case .message(let id, let bytes):
            if console != nil, consoleInbound(LinkID(id.rawValue), bytes) { return }
            run(.frame(LinkID(id.rawValue), bytes), &outbound)
        case .binary(let id):
            run(.binary(LinkID(id.rawValue)), &outbound)
        case .tooLarge(let id, let size):
            run(.tooLarge(LinkID(id.rawValue), size: size), &outbound)
        case .closed(let id, let code, let reason):
            log.debug(
                "connection closed", ("conn", id.description), ("code", code.map(String.init) ?? "none"),
                ("reason", reason))
            if code == 1008, reason == WebSocketServer.slowConsumerReason {
                // PROTOCOL.md §2.2: a slow consumer's close is worth an operator's attention.
                log.info("slow consumer closed", ("conn", id.description), ("code", "1008"), ("reason", reason))
            }
            metrics.closed(code: code)
            deliveredSeq[LinkID(id.rawValue)] = nil
            consoleClosed(LinkID(id.rawValue))
            run(.closed(LinkID(id.rawValue)), &outbound)
        }
    }

    func received(_ message: any Sendable, outbound: inout OutboundBatch) {
        if console != nil { console?.changed = true }
        switch message {
        case let done as Committed:
            callNow = clock.now()
            metrics.committed(mutations: done.mutations)
            for reservation in gate.committed(done.ticket, into: &ready) {
                core.seqReservationCommitted(reservation.pair, direction: reservation.direction, upTo: reservation.upTo)
            }
            performReady(&outbound)
        case let failing as CommitFailing:
            // The connections waiting for it are closed with 1011 (PROTOCOL.md §2.3); their
            // frames are dropped, and every later frame waits until the batch is committed.
            for link in gate.commitFailed(failing.ticket) {
                outbound.close(ConnectionID(rawValue: link.rawValue), code: CloseCode.storageFailed.rawValue, reason: "relay storage failed")
            }
        case let loaded as PayloadsLoaded:
            run(.payloadsLoaded(loaded.pair, direction: loaded.direction, loaded.payloads), &outbound)
        case let request as StatsRequest:
            request.reply.resume(returning: currentStats)
        default:
            log.error("relay engine got an unknown message", ("type", "\(type(of: message))"))
        }
    }

    func timerFired(outbound: inout OutboundBatch) {
        if let deadline = readCore({ $0.nextDeadline }), deadline <= clock.now() {
            run(.tick, &outbound)
            if console != nil { console?.changed = true }
        }
    }

    /// Without a console, everything ``endOfTurn(outbound:)`` does follows from the handler's
    /// calls (the gate's batch and reads, metrics, the core's next deadline) or is due at a time
    /// its timer covers (the gauges). A console's faults and plan change from its HTTP API
    /// between calls, so a console keeps every turn.
    var wantsQuietTurns: Bool { console != nil }

    func endOfTurn(outbound: inout OutboundBatch) -> Duration? {
        // First, so what the console's faults make the core do is in this turn's batch.
        let consoleWait = console != nil ? consoleEndOfTurn(&outbound) : nil
        if let batch = gate.takeBatch() { committer?.submit(batch) }
        for read in gate.takeReads() { committer?.submit(read) }
        if !pendingMetrics.isEmpty {
            metrics.record(pendingMetrics)
            pendingMetrics.removeAll()
        }
        let now = ContinuousClock.now
        if now >= gaugesDue {
            gaugesDue = now + Self.gaugeInterval
            metrics.gauges(
                connections: core.connectionsByRole, pairs: core.pairCount, queued: core.queuedItemsByMode,
                received: core.framesReceived)
        }
        var delay = gaugesDue - now
        // With a console: its next push, flap or held frame (none while nothing is pending).
        if let consoleWait { delay = min(delay, consoleWait) }
        if let deadline = readCore({ $0.nextDeadline }) {
            // +1: the clock counts whole milliseconds; a timer due before the deadline is a wasted turn.
            let ms = deadline.millisecondsSinceEpoch - clock.now().millisecondsSinceEpoch + 1
            delay = min(delay, .milliseconds(max(0, ms)))
        }
        return delay
    }

    /// Reads from the core in place. Reading a property of `core` directly makes the compiler
    /// copy the whole `RelayState` first (a retain and release of each of its references),
    /// since a class's stored property might change during the call; under an inout access it
    /// cannot.
    private func readCore<T>(_ property: (inout RelayState) -> T) -> T {
        property(&core)
    }

    func finished() {
        finalStats.withLock { $0 = currentStats }
        // Whatever is still open goes to the committer behind the batch with it (its queue keeps
        // the order); the relay's shutdown waits for the committer to finish.
        if let batch = gate.takeFinalBatch() { committer?.submit(batch) }
    }

    // MARK: - Steps

    private var currentStats: Stats {
        Stats(connections: core.connectionCount, pairs: core.pairCount, queued: core.queuedItemCount)
    }

    private func run(_ event: RelayEvent, _ outbound: inout OutboundBatch) {
        callNow = clock.now()
        execute(core.handle(event, now: callNow), &outbound)
    }

    /// Performs the core's actions in order, frames behind the commits they depend on.
    func execute(_ actions: consuming [RelayAction], _ outbound: inout OutboundBatch) {
        if ready.isEmpty, gate.passesThrough(actions) {
            // Moved out one by one (reversed, then popped from the end), so each is consumed
            // where it is performed: `for action in actions`, and a borrow by index too, copied
            // every action first (its frame's strings and payload retained, then released:
            // ~1.5 % of a 64 B message, perf 2026-12-03), and so did `Array.reverse()` and
            // swapping each action out for an empty one. A `MutableSpan`'s swaps move.
            var span = actions.mutableSpan
            var front = 0
            var back = span.count - 1
            while front < back {
                span.swapAt(front, back)
                front += 1
                back -= 1
            }
            while let action = actions.popLast() { perform(action, &outbound) }
            return
        }
        gate.admit(actions, into: &ready)
        performReady(&outbound)
    }

    /// Queues what the gate let through, in order.
    private func performReady(_ outbound: inout OutboundBatch) {
        for action in ready { perform(action, &outbound) }
        ready.removeAll(keepingCapacity: true)
    }

    /// Counts a frame of `type` as sent: one a console fault held, when it goes.
    func countReleased(_ type: FrameType) {
        pendingMetrics.countSent(type)
    }

    /// Sets `value` to `new` if that is higher; whether it was.
    @inline(__always)
    private static func raise(_ value: inout Int64, to new: Int64) -> Bool {
        guard new > value else { return false }
        value = new
        return true
    }

    private func perform(_ action: consuming RelayAction, _ outbound: inout OutboundBatch) {
        switch action {
        case .send(let link, let frame):
            if console == nil {
                // With room for the transport's frame header in front: a deliver is not copied again.
                let headroom = OutboundBatch.frameHeadroom
                outbound.send(FrameCodec.encode(frame, headroom: headroom), headroom: headroom, to: ConnectionID(rawValue: link.rawValue))
                pendingMetrics.countSent(frame)
            } else if consoleSend(FrameCodec.encode(frame), frame, to: link, &outbound) {
                // What a fault dropped or holds is not sent (held frames count when they go).
                pendingMetrics.countSent(frame)
            }
            switch frame {
            case .error(let e):
                pendingMetrics.errors[e.code, default: 0] += 1
            case .deliver(let d):
                // One lookup of the connection's entry, read and raised in place.
                if Self.raise(&deliveredSeq[link, default: 0], to: d.seq) {
                    let ms = callNow.millisecondsSinceEpoch - d.sentAt.millisecondsSinceEpoch
                    pendingMetrics.addLatency(Double(max(0, ms)) / 1000, mode: d.mode)
                }
            default:
                break
            }
        case .close(let link, let code, let reason):
            if console == nil {
                outbound.close(ConnectionID(rawValue: link.rawValue), code: code.rawValue, reason: reason)
            } else {
                consoleClose(link, code: code.rawValue, reason: reason, &outbound)
            }
        case .persist, .persistAhead, .awaitSeqReservation, .awaitStore, .loadPayloads:
            break
        }
    }
}
