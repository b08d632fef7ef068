import Synchronization
import WebSocketTransport

/// Saturation scenarios: one pair, a window of outstanding sends, as fast as the relay goes.
extension BenchRunner {
    /// Phone → watch `message` throughput with `payloadBytes` payloads: messages/s delivered to
    /// the watch and relay CPU-seconds per 1,000 messages.
    func throughput(_ target: BenchTarget, payloadBytes: Int, label: String) async throws -> BenchResult {
        let window = Self.window(payloadBytes: payloadBytes)
        let factory = BenchFrameFactory(mode: "message", payloadBytes: payloadBytes)
        let limit = Self.duration(options.warmup + options.seconds + 30)
        return try await withRelay(target, tag: "tp-\(payloadBytes)", limit: limit) { relay, context, connector in
            let pair = try await connector.open(0)
            let tally = BenchTally()
            var result = BenchResult(scenario: "throughput", target: target.rawValue, label: label)
            try await withThrowingTaskGroup(of: Void.self) { group in
                if target.dialect == .watchRelay {
                    group.addTask { await Self.drainPhone(pair, tally: tally) }
                }
                group.addTask { await Self.windowConsumer(pair, factory: factory, window: window, tally: tally) }
                try await Task.sleep(for: Self.duration(options.warmup))
                let (start, before) = (BenchCPUSample(relayPID: relay.pid), tally.delivered.load(ordering: .relaxed))
                try await Task.sleep(for: Self.duration(options.seconds))
                let (end, after) = (BenchCPUSample(relayPID: relay.pid), tally.delivered.load(ordering: .relaxed))
                tally.stopping.store(true, ordering: .relaxed)
                let drained = await Self.waitUntil(timeout: .seconds(5)) { tally.finished.load(ordering: .relaxed) >= 1 }
                Self.fill(&result, from: start, to: end, messages: after - before)
                result.relayRSSMiB = Double(relay.rssKiB) / 1024
                result.note = "window \(window), payload \(factory.payloadBytes) B"
                if !drained {
                    result.status = "failed: stalled, messages in flight not delivered within 5 s after the load stopped"
                }
                await context.shutdown()
                try await group.waitForAll()
            }
            result.anomalies = tally.anomalies.load(ordering: .relaxed)
            if let problem = tally.firstProblem.withLock({ $0 }) {
                result.note = (result.note ?? "") + "; " + problem
            }
            return result
        }
    }

    /// Messages in flight for a payload size: up to 256, and at most ~4 MiB in flight (the
    /// relay's and the client's outbound caps are 8 MiB per connection).
    static func window(payloadBytes: Int) -> Int {
        max(16, min(256, (4 << 20) / max(1, payloadBytes)))
    }

    /// Keeps `window` messages in flight on `pair`: sends that many, then one more per delivery
    /// until the tally says stop; then waits for the rest and finishes.
    static func windowConsumer(_ pair: BenchPair, factory: BenchFrameFactory, window: Int, tally: BenchTally) async {
        var sent = 0
        func sendNext() {
            sent += 1
            let stamp = BenchClock.stamp()
            pair.send(factory.make(sequence: sent, at: stamp), sequence: sent, stamp: stamp)
        }
        for _ in 0..<window { sendNext() }
        var received = 0
        for await event in pair.watch.events {
            guard let delivery = pair.delivery(from: event) else {
                if case .closed(let code, let reason) = event, !tally.stopping.load(ordering: .relaxed) {
                    tally.problem("watch closed: \(code.map(String.init) ?? "-") \(reason)")
                }
                continue
            }
            received += 1
            if delivery.sequence != received { tally.problem("delivery \(delivery.sequence) arrived as #\(received)") }
            tally.delivered.add(1, ordering: .relaxed)
            if !tally.stopping.load(ordering: .relaxed) {
                sendNext()
            } else if received >= sent {
                break
            }
        }
        tally.finished.add(1, ordering: .relaxed)
    }

    /// Durable `userInfo` sends with a window of outstanding sends: `accepted`/s with the
    /// relay's SQLite in `sync` mode. The watch is connected and acks every 16 deliveries.
    func durable(sync: String, payloadBytes: Int) async throws -> BenchResult {
        let window = 256
        let factory = BenchFrameFactory(mode: "userInfo", payloadBytes: payloadBytes)
        let limit = Self.duration(options.warmup + options.seconds + 30)
        return try await withRelay(.watchrelay, tag: "durable-\(sync)", sync: sync, limit: limit) { relay, context, connector in
            let pair = try await connector.open(0)
            let tally = BenchTally()
            var result = BenchResult(scenario: "durable", target: BenchTarget.watchrelay.rawValue, label: "sync \(sync)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await Self.ackingWatch(pair, tally: tally) }
                group.addTask {
                    await Self.durablePhone(pair, factory: factory, window: window, tally: tally)
                }
                try await Task.sleep(for: Self.duration(options.warmup))
                let (start, before) = (BenchCPUSample(relayPID: relay.pid), tally.accepted.load(ordering: .relaxed))
                try await Task.sleep(for: Self.duration(options.seconds))
                let (end, after) = (BenchCPUSample(relayPID: relay.pid), tally.accepted.load(ordering: .relaxed))
                tally.stopping.store(true, ordering: .relaxed)
                Self.fill(&result, from: start, to: end, messages: after - before)
                result.relayRSSMiB = Double(relay.rssKiB) / 1024
                result.note = "userInfo, window \(window), payload \(factory.payloadBytes) B; watch acks every 16"
                await context.shutdown()
                try await group.waitForAll()
            }
            result.anomalies = tally.anomalies.load(ordering: .relaxed)
            if let problem = tally.firstProblem.withLock({ $0 }) { result.note = (result.note ?? "") + "; " + problem }
            return result
        }
    }

    /// The phone of the durable scenario: `window` sends outstanding, one more per `accepted`.
    private static func durablePhone(
        _ pair: BenchPair, factory: BenchFrameFactory, window: Int, tally: BenchTally
    ) async {
        var sent = 0
        func sendNext() {
            sent += 1
            let stamp = BenchClock.stamp()
            pair.send(factory.make(sequence: sent, at: stamp), sequence: sent, stamp: stamp)
        }
        for _ in 0..<window { sendNext() }
        for await event in pair.phone.events {
            guard case .message(let bytes) = event else { continue }
            if BenchDelivery.isRelayFrame(bytes, type: "accepted") {
                tally.accepted.add(1, ordering: .relaxed)
                if !tally.stopping.load(ordering: .relaxed) { sendNext() }
            } else if bytes.count < 1024, String(decoding: bytes, as: UTF8.self).contains(#""type":"error""#) {
                tally.problem("relay error to the phone: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// The watch of the durable scenario: acks cumulatively every 16 deliveries.
    private static func ackingWatch(_ pair: BenchPair, tally: BenchTally) async {
        var unacked = 0
        for await event in pair.watch.events {
            guard case .message(let bytes) = event, BenchDelivery.isRelayFrame(bytes, type: "deliver"),
                let seq = BenchDelivery.relaySeq(bytes)
            else { continue }
            unacked += 1
            if unacked >= 16 {
                pair.watch.send(Array(#"{"type":"ack","seq":\#(seq)}"#.utf8))
                unacked = 0
            }
        }
    }
}
