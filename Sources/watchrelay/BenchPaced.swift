import WebSocketTransport

/// Scenarios at a fixed send rate below saturation: latency percentiles and RSS.
extension BenchRunner {
    /// p50/p99 of phone `send` → watch delivery for one pair at `rate` messages/s.
    func latency(_ target: BenchTarget, rate: Int, payloadBytes: Int) async throws -> BenchResult {
        let limit = Self.duration(options.warmup + options.latencySeconds + 30)
        return try await withRelay(target, tag: "lat-\(rate)", limit: limit) { relay, clients, connector in
            let pair = try await connector.open(0)
            var result = BenchResult(scenario: "latency", target: target.rawValue, label: "\(rate)/s")
            try await paced(
                [pair], rate: rate, seconds: options.latencySeconds, warmup: options.warmup,
                factory: BenchFrameFactory(mode: "message", payloadBytes: payloadBytes), relay: relay,
                clients: clients, into: &result)
            result.note = "1 pair, payload \(payloadBytes) B, " + (result.note ?? "")
            return result
        }
    }

    /// `pairs` pairs each sending 1 message/s for `seconds`: p99 latency and relay RSS.
    func manyPairs(_ target: BenchTarget, pairs count: Int, seconds: Double, payloadBytes: Int) async throws
        -> BenchResult
    {
        let limit = Self.duration(seconds + 120)
        return try await withRelay(target, tag: "pairs-\(count)", connections: count * 2, limit: limit) { relay, clients, connector in
            let rssBefore = relay.rssKiB
            let opened = ContinuousClock.now
            let pairs = try await openPairs(count, with: connector, what: "\(target.rawValue) many pairs")
            let openSeconds = Self.seconds(ContinuousClock.now - opened)
            var result = BenchResult(scenario: "manyPairs", target: target.rawValue, label: "\(count) pairs × 1/s")
            try await paced(
                pairs, rate: count, seconds: seconds, warmup: 1,
                factory: BenchFrameFactory(mode: "message", payloadBytes: payloadBytes), relay: relay,
                clients: clients, into: &result)
            result.relayRSSBeforeMiB = Double(rssBefore) / 1024
            result.note = "payload \(payloadBytes) B, \(count) pairs opened in \(Self.format(openSeconds)) s; " + (result.note ?? "")
            return result
        }
    }

    /// Sends `rate` messages/s round-robin over `pairs` for `warmup + seconds`, and records the
    /// latency of messages sent after the warm-up. Fills rate, CPU, percentiles and RSS.
    private func paced(
        _ pairs: [BenchPair], rate: Int, seconds: Double, warmup: Double, factory: BenchFrameFactory,
        relay: BenchRelay, clients: BenchClients, into result: inout BenchResult
    ) async throws {
        let tally = BenchTally()
        let total = Int((Double(rate) * (warmup + seconds)).rounded())
        var samples: [UInt64] = []
        try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for (position, pair) in pairs.enumerated() {
                if pair.dialect == .watchRelay {
                    group.addTask {
                        await Self.drainPhone(pair, tally: tally)
                        return []
                    }
                }
                group.addTask { await Self.recordingConsumer(pair, position: position, of: pairs.count, tally: tally) }
            }
            let began = ContinuousClock.now
            let recordFrom = BenchClock.stamp() + UInt64(warmup * 1e9)
            tally.recordFrom.store(recordFrom, ordering: .relaxed)
            var measureStart: BenchCPUSample?
            var sent = 0
            while sent < total {
                let due = min(total, Int(Self.seconds(ContinuousClock.now - began) * Double(rate)) + 1)
                while sent < due {
                    let pair = pairs[sent % pairs.count]
                    let sequence = sent / pairs.count + 1
                    let stamp = BenchClock.stamp()
                    pair.send(factory.make(sequence: sequence, at: stamp), sequence: sequence, stamp: stamp)
                    sent += 1
                }
                if measureStart == nil, BenchClock.stamp() >= recordFrom {
                    measureStart = BenchCPUSample(relayPID: relay.pid)
                }
                // At most one wake-up per 200 µs: above 5,000/s messages go out in bursts of a
                // few rather than with one timer each (timers cost the generator a dispatch
                // thread wake-up apiece: at 10,000/s that alone was a third of its core).
                let next = max(began + Self.duration(Double(sent) / Double(rate)), .now + .microseconds(200))
                try await Task.sleep(until: next, tolerance: .microseconds(50), clock: .continuous)
            }
            let end = BenchCPUSample(relayPID: relay.pid)
            tally.sentTotal.store(total, ordering: .relaxed)
            tally.stopping.store(true, ordering: .relaxed)
            let drained = await Self.waitUntil(timeout: .seconds(5)) {
                tally.delivered.load(ordering: .relaxed) >= total
            }
            result.relayRSSMiB = Double(relay.rssKiB) / 1024
            await clients.shutdown()
            for try await part in group { samples += part }
            let start = measureStart ?? end
            Self.fill(&result, from: start, to: end, messages: samples.count)
            if !drained {
                let missing = total - tally.delivered.load(ordering: .relaxed)
                tally.problem("\(missing) of \(total) messages not delivered within 5 s after the last send")
            }
        }
        samples.sort()
        result.p50Milliseconds = BenchStats.percentileMilliseconds(samples, 50)
        result.p99Milliseconds = BenchStats.percentileMilliseconds(samples, 99)
        result.anomalies = tally.anomalies.load(ordering: .relaxed)
        let achieved = result.messagesPerSecond ?? 0
        var note = "target \(rate)/s"
        if achieved < 0.95 * Double(rate) { note += ", saturated: delivered only \(Int(achieved))/s" }
        if let problem = tally.firstProblem.withLock({ $0 }) { note += "; " + problem }
        result.note = note
    }

    /// Receives the messages of pair `position` (every `count`-th message of the pacer) and
    /// returns the latencies (ns) of those stamped after the warm-up. Finishes once it has
    /// everything the pacer sent to it, or when the connection ends.
    private static func recordingConsumer(_ pair: BenchPair, position: Int, of count: Int, tally: BenchTally)
        async -> [UInt64]
    {
        var samples: [UInt64] = []
        var received = 0
        for await event in pair.watch.events {
            guard let delivery = pair.delivery(from: event) else { continue }
            let latency = BenchClock.elapsed(since: delivery.sentAt)
            received += 1
            tally.delivered.add(1, ordering: .relaxed)
            if delivery.sequence != received { tally.problem("pair \(pair.index): #\(delivery.sequence) arrived as #\(received)") }
            if delivery.sentAt >= tally.recordFrom.load(ordering: .relaxed) { samples.append(latency) }
            let total = tally.sentTotal.load(ordering: .relaxed)
            if total >= 0 && received >= (total - position + count - 1) / count { break }
        }
        tally.finished.add(1, ordering: .relaxed)
        return samples
    }

    /// A Duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// One decimal.
    static func format(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return String(tenths)
    }
}
