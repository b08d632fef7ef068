import Synchronization

/// Saturation scenarios: one pair, a window of outstanding sends, as fast as the relay goes.
extension BenchRunner {
    /// Phone → watch `message` throughput with `payloadBytes` payloads: messages/s delivered to
    /// the watch and relay CPU-seconds per 1,000 messages.
    func throughput(_ target: BenchTarget, payloadBytes: Int, label: String) async throws -> BenchResult {
        let window = Self.window(payloadBytes: payloadBytes)
        let factory = BenchFrameFactory(mode: "message", payloadBytes: payloadBytes)
        let limit = Self.duration(options.warmup + options.seconds + 30)
        return try await withRelay(target, tag: "tp-\(payloadBytes)", limit: limit) { relay, clients, connector in
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
                let drainedLate = tally.delivered.load(ordering: .relaxed) - after
                Self.fill(&result, from: start, to: end, messages: after - before)
                result.relayRSSMiB = Double(relay.rssKiB) / 1024
                result.note = "window \(window), payload \(factory.payloadBytes) B"
                if !drained && drainedLate > 0 {
                    // Slow, not stuck: the figure stands. mosquitto 2.0.11 over WebSockets writes
                    // a subscriber ~4 KiB per 100 ms main-loop tick (BENCHMARKS.md), so a window
                    // of large messages takes far longer than 5 s to drain.
                    result.note! +=
                        "; still delivering when abandoned: \(drainedLate) more in the 5 s after the load stopped, "
                        + "the rest of the window undelivered"
                } else if !drained {
                    result = BenchResult(scenario: "throughput", target: target.rawValue, label: label)
                    result.status =
                        "failed: stalled: \(after - before) delivered in \(options.seconds) s, and what was in flight "
                        + "(window \(window)) was not delivered within 5 s after the load stopped"
                }
                await clients.shutdown()
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

    /// Durable `userInfo` sends: `accepted`/s with the relay's SQLite in `sync` mode.
    ///
    /// The window counts sends not yet delivered to the watch (not merely not yet accepted), so
    /// the relay's queue stays at most `window` items long and the figure is a steady state:
    /// with a window on `accepted` only, the backlog grows for as long as the run lasts. The
    /// watch acks cumulatively every 16 deliveries, so items are deleted as they would be.
    func durable(sync: String, payloadBytes: Int) async throws -> BenchResult {
        let window = 256
        let factory = BenchFrameFactory(mode: "userInfo", payloadBytes: payloadBytes)
        let limit = Self.duration(options.warmup + options.seconds + 30)
        return try await withRelay(.watchrelay, tag: "durable-\(sync)", sync: sync, limit: limit) { relay, clients, connector in
            let pair = try await connector.open(0)
            let tally = BenchTally()
            var result = BenchResult(scenario: "durable", target: BenchTarget.watchrelay.rawValue, label: "sync \(sync)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await Self.drainPhone(pair, tally: tally) }
                group.addTask {
                    await Self.windowConsumer(pair, factory: factory, window: window, tally: tally, ackEvery: 16)
                }
                try await Task.sleep(for: Self.duration(options.warmup))
                let before = (tally.accepted.load(ordering: .relaxed), tally.delivered.load(ordering: .relaxed))
                let start = BenchCPUSample(relayPID: relay.pid)
                try await Task.sleep(for: Self.duration(options.seconds))
                let after = (tally.accepted.load(ordering: .relaxed), tally.delivered.load(ordering: .relaxed))
                let end = BenchCPUSample(relayPID: relay.pid)
                tally.stopping.store(true, ordering: .relaxed)
                Self.fill(&result, from: start, to: end, messages: after.0 - before.0)
                let delivered = Double(after.1 - before.1) / max(end.seconds(since: start), 1e-9)
                result.relayRSSMiB = Double(relay.rssKiB) / 1024
                result.note =
                    "userInfo, \(window) sends not yet delivered, payload \(factory.payloadBytes) B, watch acks every 16; "
                    + "delivered \(Int(delivered))/s"
                await Self.waitUntil(timeout: .seconds(5)) { tally.finished.load(ordering: .relaxed) >= 1 }
                await clients.shutdown()
                try await group.waitForAll()
            }
            result.anomalies = tally.anomalies.load(ordering: .relaxed)
            if let problem = tally.firstProblem.withLock({ $0 }) { result.note = (result.note ?? "") + "; " + problem }
            return result
        }
    }
}
