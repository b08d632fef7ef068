
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

    /// `pairs` pairs sending `rate` messages/s in all (default 1 each) for `seconds`: p99
    /// latency, relay CPU per message and RSS. The `curve` scenario keeps the total rate and
    /// changes the number of pairs, so its CPU per message shows what each connection costs.
    func manyPairs(
        _ target: BenchTarget, pairs count: Int, rate: Int? = nil, seconds: Double, payloadBytes: Int,
        scenario: String = "manyPairs"
    ) async throws -> BenchResult {
        let rate = rate ?? count
        let limit = Self.duration(seconds + 120)
        return try await withRelay(target, tag: "pairs-\(count)", connections: count * 2, limit: limit) { relay, clients, connector in
            let rssBefore = relay.rssKiB
            let opened = ContinuousClock.now
            let pairs = try await openPairs(count, with: connector, what: "\(target.rawValue) many pairs")
            let openSeconds = Self.seconds(ContinuousClock.now - opened)
            let label = scenario == "manyPairs" ? "\(count) pairs × 1/s" : "\(count) pairs, \(rate)/s in all"
            var result = BenchResult(scenario: scenario, target: target.rawValue, label: label)
            try await paced(
                pairs, rate: rate, seconds: seconds, warmup: 1,
                factory: BenchFrameFactory(mode: "message", payloadBytes: payloadBytes), relay: relay,
                clients: clients, into: &result)
            result.relayRSSBeforeMiB = Double(rssBefore) / 1024
            result.note = "payload \(payloadBytes) B, \(count) pairs opened in \(Self.format(openSeconds)) s; " + (result.note ?? "")
            return result
        }
    }

    /// Sends `rate` messages/s round-robin over `pairs` for `warmup + seconds`, and records the
    /// latency of messages sent after the warm-up. Fills rate, CPU, percentiles and RSS.
    ///
    /// Latency is timed on the lws client's service thread (``BenchWireTimes``), from just
    /// before the phone's frame is written to the moment the watch's frame is complete, and the
    /// sends come from a thread of their own (``BenchPacer``). The watch and phone event streams
    /// are read only once the last message is sent: they count the deliveries and check their
    /// order, and a task woken for every event during the run cost the generator's core
    /// ~10 % at 10,000/s, which delayed the service thread's writes and reads.
    private func paced(
        _ pairs: [BenchPair], rate: Int, seconds: Double, warmup: Double, factory: BenchFrameFactory,
        relay: BenchRelay, clients: BenchClients, into result: inout BenchResult
    ) async throws {
        let tally = BenchTally()
        let total = Int((Double(rate) * (warmup + seconds)).rounded())
        let wireTimes = pairs.map {
            BenchWireTimes(dialect: $0.dialect, messages: (total + pairs.count - 1) / pairs.count)
        }
        for (pair, times) in zip(pairs, wireTimes) { await times.attach(to: pair) }
        let recordFrom = BenchClock.stamp() + UInt64(warmup * 1e9)
        async let pacing: Void = BenchPacer.run(rate: rate, total: total) { indices in
            for index in indices {
                let pair = pairs[index % pairs.count]
                let sequence = index / pairs.count + 1
                let stamp = BenchClock.stamp()
                pair.send(factory.make(sequence: sequence, at: stamp), sequence: sequence, stamp: stamp)
            }
        }
        try await Task.sleep(for: Self.duration(warmup))
        let start = BenchCPUSample(relayPID: relay.pid)
        await pacing
        let end = BenchCPUSample(relayPID: relay.pid)
        tally.sentTotal.store(total, ordering: .relaxed)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (position, pair) in pairs.enumerated() {
                // WatchRelay answers every send with `accepted`, and so does the C relay with
                // --accepted: read and counted, not left in the phone's event stream.
                if pair.dialect != .mqtt {
                    group.addTask { await Self.drainPhone(pair, tally: tally) }
                }
                group.addTask { await Self.countingConsumer(pair, position: position, of: pairs.count, tally: tally) }
            }
            let drained = await Self.waitUntil(timeout: .seconds(5)) {
                tally.delivered.load(ordering: .relaxed) >= total
            }
            result.relayRSSMiB = Double(relay.rssKiB) / 1024
            await clients.shutdown()
            try await group.waitForAll()
            if !drained {
                let missing = total - tally.delivered.load(ordering: .relaxed)
                tally.problem("\(missing) of \(total) messages not delivered within 5 s after the last send")
            }
        }
        var samples: [UInt64] = []
        var postToWrite: [UInt64] = []
        for times in wireTimes {
            let part = times.samples(writtenFrom: recordFrom)
            samples += part.latencies
            postToWrite += part.postToWrite
        }
        if let directory = options.latencyTrace {
            BenchWireTimes.writeTrace(wireTimes, to: directory, name: "\(result.target)-\(result.scenario)-\(rate)")
        }
        Self.fill(&result, from: start, to: end, messages: samples.count)
        samples.sort()
        postToWrite.sort()
        result.p50Milliseconds = BenchStats.percentileMilliseconds(samples, 50)
        result.p99Milliseconds = BenchStats.percentileMilliseconds(samples, 99)
        result.postToWriteP99Milliseconds = BenchStats.percentileMilliseconds(postToWrite, 99)
        result.anomalies = tally.anomalies.load(ordering: .relaxed)
        let achieved = result.messagesPerSecond ?? 0
        var note = "target \(rate)/s"
        if achieved < 0.95 * Double(rate) { note += ", saturated: delivered only \(Int(achieved))/s" }
        if let p99 = result.postToWriteP99Milliseconds {
            note += "; generator post → write p99 \(BenchReport.number(p99, 3)) ms"
        }
        if let problem = tally.firstProblem.withLock({ $0 }) { note += "; " + problem }
        result.note = note
    }

    /// Reads the watch events of pair `position` (every `count`-th message of the pacer),
    /// counting deliveries and checking their order. Finishes once it has everything the pacer
    /// sent to it, or when the connection ends.
    private static func countingConsumer(_ pair: BenchPair, position: Int, of count: Int, tally: BenchTally) async {
        let expected = (tally.sentTotal.load(ordering: .relaxed) - position + count - 1) / count
        var received = 0
        for await event in pair.watch.events {
            guard let delivery = pair.delivery(from: event) else { continue }
            received += 1
            tally.delivered.add(1, ordering: .relaxed)
            if delivery.sequence != received { tally.problem("pair \(pair.index): #\(delivery.sequence) arrived as #\(received)") }
            if received >= expected { break }
        }
        tally.finished.add(1, ordering: .relaxed)
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
