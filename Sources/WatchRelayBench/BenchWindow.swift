import Primitives
import WebSocketTransport

/// Keeps a window of messages in flight on one pair from the generator's lws service thread.
///
/// A ``ClientMessageHandler`` on the watch (and, for WatchRelay, on the phone): each delivery is
/// checked for order, counted, and answered with the next send in the very callback that
/// completed it, so a message costs the generator no hand-off to a task, no inbox post and no
/// `lws_cancel_service` (BENCHMARKS.md, 2026-12-01 17:25: that per-frame cost was what saturated
/// the generator's core at every size). The phone's `accepted` frames are counted here too and
/// never reach its event stream. Everything else (errors, closes, probes) is yielded as before.
final class BenchWindow: ClientMessageHandler {
    private struct State {
        var sent = 0
        var received = 0
        var finished = false
    }

    private let pair: BenchPair
    private let factory: BenchFrameFactory
    private let window: Int
    private let tally: BenchTally
    private let ackEvery: Int?
    private let latencies: BenchLatencies?
    /// Touched only on the service thread; the lock makes that visible to the type checker.
    private let state = LockedState(State())

    init(
        pair: BenchPair, factory: BenchFrameFactory, window: Int, tally: BenchTally, ackEvery: Int?,
        latencies: BenchLatencies?
    ) {
        self.pair = pair
        self.factory = factory
        self.window = window
        self.tally = tally
        self.ackEvery = ackEvery
        self.latencies = latencies
    }

    /// Counts this pair as finished in the tally, once (drained, or its watch's stream ended).
    func finish() {
        let first = state.withLock { state -> Bool in
            defer { state.finished = true }
            return !state.finished
        }
        if first { tally.finished.add(1, ordering: .relaxed) }
    }

    /// Attached to the watch (the phone's handler is attached first): sends the first window.
    func attached(to connection: ConnectionID, outbound: inout OutboundBatch) {
        guard connection == pair.watch.id else { return }
        state.withLock { state in
            for _ in 0..<window { sendNext(&state, &outbound) }
        }
    }

    func handle(_ event: ClientEvent, on connection: ConnectionID, outbound: inout OutboundBatch)
        -> ClientEventDisposition
    {
        if connection == pair.phone.id {
            guard case .message(let bytes) = event, BenchDelivery.isRelayFrame(bytes, type: .accepted) else {
                return .yield
            }
            tally.accepted.add(1, ordering: .relaxed)
            return .consume
        }
        guard let delivery = pair.delivery(from: event) else { return .yield }
        if let latencies {
            let ms = Double(BenchClock.stamp() &- delivery.sentAt) / 1e6
            latencies.values.withLock { $0.append(ms) }
        }
        let (received, drained) = state.withLock { state -> (Int, Bool) in
            state.received += 1
            if !tally.stopping.load(ordering: .relaxed) {
                sendNext(&state, &outbound)
            }
            return (state.received, state.received >= state.sent)
        }
        if delivery.sequence != received { tally.problem("delivery \(delivery.sequence) arrived as #\(received)") }
        tally.delivered.add(1, ordering: .relaxed)
        if let ackEvery, received % ackEvery == 0, case .message(let bytes) = event,
            let seq = BenchDelivery.relaySeq(bytes)
        {
            outbound.send(Array(#"{"type":"ack","seq":\#(seq)}"#.utf8), to: pair.watch.id)
        }
        if drained && tally.stopping.load(ordering: .relaxed) { finish() }
        return .consume
    }

    private func sendNext(_ state: inout State, _ outbound: inout OutboundBatch) {
        state.sent += 1
        let stamp = BenchClock.stamp()
        pair.send(factory.make(sequence: state.sent, at: stamp), sequence: state.sent, stamp: stamp, outbound: &outbound)
    }
}

extension BenchRunner {
    /// Keeps `window` messages in flight on `pair` with a ``BenchWindow`` on the service thread:
    /// sends that many, then one more per delivery until the tally says stop; the pair counts as
    /// finished once the rest arrived. Returns when the watch's event stream ends (the clients
    /// are shut down), having reported an unexpected close of the watch as a problem.
    ///
    /// With `ackEvery`, the watch also acks (WatchRelay durable items) every that many deliveries;
    /// with `latencies`, each delivery's send-to-delivery time (ms) is appended there.
    static func windowConsumer(
        _ pair: BenchPair, factory: BenchFrameFactory, window: Int, tally: BenchTally, ackEvery: Int? = nil,
        latencies: BenchLatencies? = nil
    ) async {
        // BenchClients.context(forPair:) serves both sides of a pair, so the watch's handler can
        // send on the phone; anything else would drop every send.
        guard pair.phone.sharesContext(with: pair.watch) else {
            tally.problem("pair \(pair.index): phone and watch on different client contexts")
            tally.finished.add(1, ordering: .relaxed)
            return
        }
        let handler = BenchWindow(
            pair: pair, factory: factory, window: window, tally: tally, ackEvery: ackEvery, latencies: latencies)
        // The phone's frames: WatchRelay's `accepted`, and the C relay's when it runs with
        // `--accepted` (Benchmarks/baseline/relay.c); the raw relays send none otherwise.
        if pair.dialect != .mqtt { await pair.phone.handle(with: handler) }
        await pair.watch.handle(with: handler)
        for await event in pair.watch.events {
            if case .closed(let code, let reason) = event, !tally.stopping.load(ordering: .relaxed) {
                tally.problem("watch closed: \(code.map(String.init) ?? "-") \(reason)")
            }
        }
        handler.finish()
    }
}
