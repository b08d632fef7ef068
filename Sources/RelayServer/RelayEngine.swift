import RelayConsole
import RelayCore
import RelayProtocol
import WebSocketTransport

/// Runs the core: feeds it events, performs its actions, and gates frames on group commits.
///
/// Ordering rule: a frame that follows a `.persist` in the core's output (and every frame
/// queued after it, so per-connection order holds) waits until the store committed that
/// mutation. Mutations that pile up while a commit runs form the next group — one fsync
/// for many sends.
actor RelayEngine {
    var core: RelayState
    private let transport: WebSocketServer
    private let metrics: RelayMetrics
    let clock: RelayClock
    let log: Logger
    /// The console's hub and held frames (`serve --console`); nil without a console.
    var console: ConsoleAttachment?

    /// Mutations of the batch being filled, and its ticket.
    private var openBatch: [StoreMutation] = []
    /// Whether the open batch holds a seq reservation made ahead (always fsynced).
    private var openBatchReservesAhead = false
    private var openTicket: UInt64 = 1
    private var committedTicket: UInt64 = 0
    /// Actions waiting for the commit of their ticket, in order.
    private var deferred: [(ticket: UInt64, action: RelayAction)] = []
    private var deferredHead = 0
    private var committerWaiting: CheckedContinuation<Bool, Never>?
    private var stopped = false
    /// Highest seq delivered per connection (the latency metric counts first deliveries).
    private var deliveredSeq: [LinkID: Int64] = [:]
    /// The batch holding each pair direction's last seq reservation made ahead.
    private var aheadTickets: [AheadKey: UInt64] = [:]
    /// Counter updates of the current step, handed to the metrics with the frames.
    private var pendingMetrics = MetricsBatch()
    /// Frames and closes of the current step, handed to the transport in one go.
    var outbound = OutboundBatch()

    init(
        core: RelayState, transport: WebSocketServer, metrics: RelayMetrics, clock: RelayClock, log: Logger,
        console: ConsoleHub? = nil
    ) {
        self.console = console.map(ConsoleAttachment.init)
        self.core = core
        self.transport = transport
        self.metrics = metrics
        self.clock = clock
        self.log = log
    }

    // MARK: - Events

    /// Handles the transport's events on this actor, one at a time and in order, until the
    /// stream finishes; then stops the committer.
    ///
    /// Iterating here (not from another task calling ``handle(_:)``) saves an executor hop
    /// per event: the stream resumes this actor directly.
    /// Each batch (what one lws service iteration reported) is handled whole, and its frames
    /// go to the transport in one hand-off.
    func consume(_ batches: AsyncStream<[ServerEvent]>) async {
        for await batch in batches {
            for event in batch { handle(event) }
            flush()
        }
        stop()
    }

    /// Hands one transport event to the core and performs what it asks.
    private func handle(_ event: ServerEvent) {
        switch event {
        case .opened(let id, let address):
            log.debug("connection opened", ("conn", id.description), ("addr", address))
            run(.opened(LinkID(id.rawValue), address: address))
        case .message(let id, let bytes):
            if console != nil, consoleInbound(LinkID(id.rawValue), bytes) { return }
            run(.frame(LinkID(id.rawValue), bytes))
        case .binary(let id):
            run(.binary(LinkID(id.rawValue)))
        case .tooLarge(let id, let size):
            run(.tooLarge(LinkID(id.rawValue), size: size))
        case .closed(let id, let code, let reason):
            log.debug("connection closed", ("conn", id.description), ("code", code.map(String.init) ?? "none"), ("reason", reason))
            metrics.closed(code: code)
            deliveredSeq[LinkID(id.rawValue)] = nil
            consoleClosed(LinkID(id.rawValue))
            run(.closed(LinkID(id.rawValue)))
        }
    }

    /// Runs `.tick` when a deadline passed; refreshes the gauges.
    func tick(refreshGauges: Bool) {
        if let deadline = core.nextDeadline, deadline <= clock.now() {
            run(.tick)
            flush()
        }
        if refreshGauges {
            metrics.gauges(
                connections: core.connectionsByRole, pairs: core.pairCount, queued: core.queuedItemsByMode,
                received: core.framesReceived)
        }
        if console != nil { consoleTick() }
    }

    private func run(_ event: RelayEvent) {
        execute(core.handle(event, now: clock.now()))
    }

    /// Performs the core's actions in order, holding frames back until their commit.
    func execute(_ actions: [RelayAction]) {
        var gate: UInt64 = 0
        for action in actions {
            switch action {
            case .persist(let mutation):
                enqueue(mutation)
                gate = openTicket
            case .persistAhead(let mutation):
                enqueue(mutation)
                openBatchReservesAhead = true
                if case .setSeqReserved(let pair, let direction, _) = mutation {
                    aheadTickets[AheadKey(pair: pair, direction: direction)] = openTicket
                }
            case .awaitAhead(let pair, let direction):
                if let ticket = aheadTickets.removeValue(forKey: AheadKey(pair: pair, direction: direction)),
                    ticket > committedTicket
                {
                    gate = max(gate, ticket)
                }
            case .send, .close:
                let ticket = max(gate, deferredHead < deferred.count ? deferred[deferred.count - 1].ticket : 0)
                if ticket > committedTicket {
                    deferred.append((ticket, action))
                } else {
                    perform(action)
                }
            }
        }
    }

    /// Adds a mutation to the batch being filled and wakes the committer.
    private func enqueue(_ mutation: StoreMutation) {
        openBatch.append(mutation)
        if let waiter = committerWaiting {
            committerWaiting = nil
            waiter.resume(returning: true)
        }
    }

    /// Hands what this step produced to the transport.
    func flush() {
        metrics.record(pendingMetrics)
        pendingMetrics.removeAll()
        guard !outbound.isEmpty else { return }
        transport.send(outbound)
        outbound.removeAll()
    }

    private func perform(_ action: RelayAction) {
        switch action {
        case .send(let link, let frame):
            if console == nil {
                outbound.send(FrameCodec.encode(frame), to: ConnectionID(rawValue: link.rawValue))
            } else {
                consoleSend(FrameCodec.encode(frame), frame, to: link)
            }
            pendingMetrics.sent[frame.type, default: 0] += 1
            switch frame {
            case .error(let e):
                pendingMetrics.errors[e.code, default: 0] += 1
            case .deliver(let d):
                if d.seq > deliveredSeq[link, default: 0] {
                    deliveredSeq[link] = d.seq
                    let ms = clock.now().millisecondsSinceEpoch - d.sentAt.millisecondsSinceEpoch
                    pendingMetrics.latencies.append((d.mode, Double(max(0, ms)) / 1000))
                }
            default:
                break
            }
        case .close(let link, let code, let reason):
            if console == nil {
                outbound.close(ConnectionID(rawValue: link.rawValue), code: code.rawValue, reason: reason)
            } else {
                consoleClose(link, code: code.rawValue, reason: reason)
            }
        case .persist, .persistAhead, .awaitAhead:
            break
        }
    }

    // MARK: - Group commit

    /// The next batch to commit; waits for one. `nil` once stopped and drained.
    ///
    /// `urgent` says whether a frame waits for this batch (or it reserves seqs ahead, which a
    /// later frame will wait for): only then must the commit be fsynced (see
    /// ``RelayStore/commit(_:urgent:)``). Frames can only wait for the open batch, so once
    /// taken, a batch gets no new waiters.
    func takeBatch() async -> (ticket: UInt64, mutations: [StoreMutation], urgent: Bool)? {
        while openBatch.isEmpty {
            if stopped { return nil }
            let more = await withCheckedContinuation { committerWaiting = $0 }
            if !more && openBatch.isEmpty { return nil }
        }
        let urgent =
            openBatchReservesAhead
            || (deferredHead < deferred.count && deferred[deferred.count - 1].ticket >= openTicket)
        let batch = (openTicket, openBatch, urgent)
        openBatch = []
        openBatchReservesAhead = false
        openTicket += 1
        return batch
    }

    /// The batch of `ticket` is durable: release what waited for it.
    func committed(_ ticket: UInt64, mutations: Int) {
        committedTicket = ticket
        metrics.committed(mutations: mutations)
        while deferredHead < deferred.count, deferred[deferredHead].ticket <= ticket {
            perform(deferred[deferredHead].action)
            deferredHead += 1
        }
        if deferredHead == deferred.count {
            deferred.removeAll(keepingCapacity: true)
            deferredHead = 0
        }
        flush()
    }

    /// No more events will come: the committer drains the last batch and stops.
    func stop() {
        stopped = true
        if let waiter = committerWaiting {
            committerWaiting = nil
            waiter.resume(returning: false)
        }
    }

    /// Counts for tests and scenarios.
    var stats: (connections: Int, pairs: Int, queued: Int) {
        (core.connectionCount, core.pairCount, core.queuedItemCount)
    }
}

/// A pair direction, for ``RelayEngine``'s seq reservations made ahead.
private struct AheadKey: Hashable {
    let pair: PairID
    let direction: Role
}
