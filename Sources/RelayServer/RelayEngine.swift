import RelayCore
import RelayProtocol
import WebSocketTransport

/// Runs the core: feeds it events, performs its actions, and gates frames on group commits
/// (the rules are ``CommitGate``'s; the commits run on the ``Committer``'s thread).
actor RelayEngine {
    private var core: RelayState
    private let transport: WebSocketServer
    private let metrics: RelayMetrics
    private let clock: RelayClock
    private let log: Logger
    /// Which frames wait for which commit.
    private var gate = CommitGate()
    /// Set once by ``attach(_:)``, before the first event.
    private var committer: Committer?
    /// Frames and closes the gate let through in the current step.
    private var ready: [RelayAction] = []
    /// Set when the transport's events ended: commits still run until the gate is idle.
    private var draining: CheckedContinuation<Void, Never>?
    /// Highest seq delivered per connection (the latency metric counts first deliveries).
    private var deliveredSeq: [LinkID: Int64] = [:]
    /// Counter updates of the current step, handed to the metrics with the frames.
    private var pendingMetrics = MetricsBatch()
    /// Frames and closes of the current step, handed to the transport in one go.
    private var outbound = OutboundBatch()

    init(core: RelayState, transport: WebSocketServer, metrics: RelayMetrics, clock: RelayClock, log: Logger) {
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
            submitBatch()
            flush()
        }
        await drain()
    }

    /// The committer that runs this engine's batches.
    func attach(_ committer: Committer) {
        self.committer = committer
    }

    /// Hands one transport event to the core and performs what it asks.
    private func handle(_ event: ServerEvent) {
        switch event {
        case .opened(let id, let address):
            log.debug("connection opened", ("conn", id.description), ("addr", address))
            run(.opened(LinkID(id.rawValue), address: address))
        case .message(let id, let bytes):
            run(.frame(LinkID(id.rawValue), bytes))
        case .binary(let id):
            run(.binary(LinkID(id.rawValue)))
        case .tooLarge(let id, let size):
            run(.tooLarge(LinkID(id.rawValue), size: size))
        case .closed(let id, let code, let reason):
            log.debug("connection closed", ("conn", id.description), ("code", code.map(String.init) ?? "none"), ("reason", reason))
            metrics.closed(code: code)
            deliveredSeq[LinkID(id.rawValue)] = nil
            run(.closed(LinkID(id.rawValue)))
        }
    }

    /// Runs `.tick` when a deadline passed; refreshes the gauges.
    func tick(refreshGauges: Bool) {
        if let deadline = core.nextDeadline, deadline <= clock.now() {
            run(.tick)
            submitBatch()
            flush()
        }
        if refreshGauges {
            metrics.gauges(
                connections: core.connectionsByRole, pairs: core.pairCount, queued: core.queuedItemsByMode,
                received: core.framesReceived)
        }
    }

    private func run(_ event: RelayEvent) {
        gate.admit(core.handle(event, now: clock.now()), into: &ready)
        for action in ready { perform(action) }
        ready.removeAll(keepingCapacity: true)
    }

    /// Hands the open batch to the committer if none is with it.
    private func submitBatch() {
        if let batch = gate.takeBatch() { committer?.submit(batch) }
    }

    /// Hands what this step produced to the transport.
    private func flush() {
        metrics.record(pendingMetrics)
        pendingMetrics.removeAll()
        guard !outbound.isEmpty else { return }
        transport.send(outbound)
        outbound.removeAll()
    }

    private func perform(_ action: RelayAction) {
        switch action {
        case .send(let link, let frame):
            outbound.send(FrameCodec.encode(frame), to: ConnectionID(rawValue: link.rawValue))
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
            outbound.close(ConnectionID(rawValue: link.rawValue), code: code.rawValue, reason: reason)
        case .persist, .persistAhead, .awaitAhead:
            break
        }
    }


    // MARK: - Group commit

    /// The batch of `ticket` is durable: release what waited for it, start the next batch.
    func committed(_ ticket: UInt64, mutations: Int) {
        metrics.committed(mutations: mutations)
        gate.committed(ticket, into: &ready)
        for action in ready { perform(action) }
        ready.removeAll(keepingCapacity: true)
        submitBatch()
        flush()
        if gate.isIdle, let waiter = draining {
            draining = nil
            waiter.resume()
        }
    }

    /// The batch of `ticket` failed repeatedly (the committer keeps retrying it): the
    /// connections with frames waiting for it are closed with 1011 (PROTOCOL.md §2.3); their
    /// frames are dropped, and every later frame waits until the batch is committed.
    func commitFailed(_ ticket: UInt64) {
        for link in gate.commitFailed(ticket) {
            outbound.close(ConnectionID(rawValue: link.rawValue), code: 1011, reason: "relay storage failed")
        }
        flush()
    }

    /// No more events will come: returns once everything open is committed.
    private func drain() async {
        submitBatch()
        guard !gate.isIdle else { return }
        await withCheckedContinuation { draining = $0 }
    }

    /// Counts for tests and scenarios.
    var stats: (connections: Int, pairs: Int, queued: Int) {
        (core.connectionCount, core.pairCount, core.queuedItemCount)
    }
}
