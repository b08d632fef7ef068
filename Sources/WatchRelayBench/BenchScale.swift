
/// Connection scale: many idle connections, and what each costs the relay in RSS.
extension BenchRunner {
    /// Opens `connections` idle connections as `connections / 2` pairs and reports the relay's
    /// RSS growth per connection.
    ///
    /// WatchRelay pairs for real (`hello`, `pair.begin`, `pair.join`: a paired device is what a
    /// relay holds in production, tokens and pair state included); the path peers connect both
    /// sides; mosquitto gets CONNECT on both sides and SUBSCRIBE on the watch.
    func connectionScale(_ target: BenchTarget, connections: Int) async throws -> BenchResult {
        let pairCount = connections / 2
        let limit = Self.duration(Double(pairCount) / 50 + 120)
        return try await withRelay(target, tag: "conn-\(connections)", connections: connections, limit: limit) { relay, _, connector in
            try await Task.sleep(for: .milliseconds(300))
            let rssBefore = relay.rssKiB
            let opened = ContinuousClock.now
            let pairs = try await openPairs(
                pairCount, with: connector, probe: false, concurrency: 100, what: "\(target.rawValue) connections")
            let openSeconds = Self.seconds(ContinuousClock.now - opened)
            try await Task.sleep(for: .seconds(1))
            let rssAfter = relay.rssKiB
            guard relay.child.isRunning else {
                throw BenchError.scenario("\(target.rawValue) exited with \(pairs.count * 2) connections open")
            }
            var result = BenchResult(
                scenario: "connections", target: target.rawValue, label: "\(pairs.count * 2) idle")
            result.count = pairs.count * 2
            result.relayRSSMiB = Double(rssAfter) / 1024
            result.relayRSSBeforeMiB = Double(rssBefore) / 1024
            result.rssPerConnectionKiB = Double(rssAfter - rssBefore) / Double(pairs.count * 2)
            let method =
                switch target.dialect {
                case .watchRelay: "\(pairs.count) pairings (hello, pair.begin, pair.join)"
                case .pathPairing: "\(pairs.count) path pairs"
                case .mqtt: "\(pairs.count * 2) CONNECTs, \(pairs.count) SUBSCRIBEs"
                }
            result.note =
                "\(method) in \(Self.format(openSeconds)) s (\(Int(Double(pairs.count) / max(openSeconds, 0.001))) pairs/s)"
            // Kill the relay, let every connection see its reset, then shut the context down:
            // closing thousands of open connections one by one from this side is much slower.
            await relay.child.kill()
            let closed = await Self.awaitClosed(pairs, timeout: .seconds(30))
            if closed < pairs.count * 2 {
                BenchProgress.note("\(pairs.count * 2 - closed) connections still open after the relay was killed")
            }
            return result
        }
    }

    /// Drains every connection of `pairs` until it closes (or `timeout` passes); returns how
    /// many closed.
    private static func awaitClosed(_ pairs: [BenchPair], timeout: Duration) async -> Int {
        let tally = BenchTally()
        let connections = pairs.flatMap { [$0.phone, $0.watch] }
        await withTaskGroup(of: Void.self) { group in
            for connection in connections {
                group.addTask {
                    for await _ in connection.events {}
                    tally.finished.add(1, ordering: .relaxed)
                }
            }
            await Self.waitUntil(timeout: timeout) { tally.finished.load(ordering: .relaxed) >= connections.count }
            group.cancelAll()
        }
        return tally.finished.load(ordering: .relaxed)
    }
}
