/// One measured figure of one scenario against one relay: a row of the results table.
///
/// Every metric is optional: a scenario fills what it measures. `status` is `ok`, or says why
/// there is no number (`failed: …`, `skipped: …`, `pending …`).
struct BenchResult: Codable, Sendable {
    /// Unique within a run: `scenario/target/label`.
    var id: String { "\(scenario)/\(target)/\(label)" }
    /// `throughput`, `latency`, `manyPairs`, `connections`, `durable`, `widget`.
    var scenario: String
    /// `watchrelay`, `lws-c`, `python-websockets`, `mosquitto`.
    var target: String
    /// The point within the scenario: a payload size, a rate, a sync mode.
    var label: String
    var status = "ok"
    /// Messages (or accepted sends) per second, over the measured window.
    var messagesPerSecond: Double?
    /// Relay CPU seconds (user + system) per 1,000 messages.
    var relayCPUSecondsPer1k: Double?
    /// Relay CPU time over wall time, in percent of one core.
    var relayCPUPercent: Double?
    /// Generator (this process) CPU time over wall time, in percent of one core.
    var generatorCPUPercent: Double?
    /// CPU time of every other process on the machine over wall time, in percent of one core:
    /// how busy the shared machine was around the measurement (200 % = both cores).
    var otherCPUPercent: Double?
    var p50Milliseconds: Double?
    var p99Milliseconds: Double?
    /// Fixed-rate scenarios: p99 of the generator's own delay from posting a send to writing it.
    var postToWriteP99Milliseconds: Double?
    /// Relay resident set size at the end of the measurement.
    var relayRSSMiB: Double?
    /// Relay resident set size before the scenario opened its connections.
    var relayRSSBeforeMiB: Double?
    /// (RSS after − RSS before) / connections.
    var rssPerConnectionKiB: Double?
    /// Messages measured, or connections opened.
    var count: Int?
    /// Messages sent and never delivered, or out of order.
    var anomalies: Int?
    /// How the figure was obtained (window, rate, method), for the report.
    var note: String?

    init(scenario: String, target: String, label: String) {
        self.scenario = scenario
        self.target = target
        self.label = label
    }

    /// A row that carries only a status.
    static func placeholder(scenario: String, target: String, label: String, status: String) -> BenchResult {
        var result = BenchResult(scenario: scenario, target: target, label: label)
        result.status = status
        return result
    }

    private enum CodingKeys: String, CodingKey {
        case scenario, target, label, status, messagesPerSecond, relayCPUSecondsPer1k, relayCPUPercent
        case generatorCPUPercent, otherCPUPercent, p50Milliseconds, p99Milliseconds, postToWriteP99Milliseconds
        case relayRSSMiB, relayRSSBeforeMiB, rssPerConnectionKiB
        case count
        case anomalies, note
    }

    /// The numeric metrics by name, for taking medians across runs.
    static var metrics: [WritableKeyPath<BenchResult, Double?>] {
        [
        \.messagesPerSecond, \.relayCPUSecondsPer1k, \.relayCPUPercent, \.generatorCPUPercent, \.otherCPUPercent,
        \.p50Milliseconds, \.p99Milliseconds, \.postToWriteP99Milliseconds, \.relayRSSMiB, \.relayRSSBeforeMiB, \.rssPerConnectionKiB,
        ]
    }

    /// The median of each metric over `runs` of the same row (the first run's text fields).
    ///
    /// A row that failed in some runs keeps the medians of the runs that succeeded and notes
    /// how many failed; a row that failed in every run keeps the first failure.
    static func median(of runs: [BenchResult]) -> BenchResult {
        let succeeded = runs.filter { $0.status == "ok" }
        guard var merged = succeeded.first else { return runs[0] }
        for metric in metrics {
            merged[keyPath: metric] = BenchStats.median(succeeded.compactMap { $0[keyPath: metric] })
        }
        merged.count = BenchStats.median(succeeded.compactMap { $0.count.map(Double.init) }).map { Int($0.rounded()) }
        merged.anomalies = succeeded.compactMap(\.anomalies).max()
        if succeeded.count < runs.count {
            let failure = runs.first { $0.status != "ok" }?.status ?? ""
            merged.note = [merged.note, "\(runs.count - succeeded.count) of \(runs.count) runs \(failure)"]
                .compactMap { $0 }.joined(separator: "; ")
        }
        return merged
    }
}

/// Percentiles and medians.
enum BenchStats {
    /// The median (mean of the middle two for an even count), nil for no values.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The `p`-th percentile (0...100, nearest rank) of `sorted` nanosecond values, in ms.
    static func percentileMilliseconds(_ sorted: [UInt64], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        let index = min(sorted.count - 1, max(0, rank - 1))
        return Double(sorted[index]) / 1e6
    }
}
