import Foundation

/// The outcome of `watchrelay bench`: the table of medians, ours-to-peer ratios and the goals,
/// as text for standard output and as JSON.
struct BenchReport: Codable, Sendable {
    /// One comparison of WatchRelay with a peer on one figure.
    struct Ratio: Codable, Sendable {
        /// e.g. `throughput 1 KiB msg/s`.
        var figure: String
        var peer: String
        /// WatchRelay's value divided by the peer's.
        var ratio: Double
        /// How to read it, e.g. `higher is better`.
        var reading: String
    }

    /// One target of the relay (``BenchGoals``) and where the run landed: `met` is nil when
    /// the run did not measure it.
    struct Goal: Codable, Sendable {
        var goal: String
        var measured: String
        var met: Bool?
    }

    var startedAt: String
    var durationSeconds: Double
    var machine: BenchMachine
    var loadAverageAfter: [Double]
    /// The 1, 5 and 15 minute load averages when each run began.
    var loadAtRunStarts: [[Double]]
    var runs: Int
    var relayCPU: Int
    var generatorCPU: Int
    /// The file name of the executable measured as the `watchrelay` relay (`watchrelay-relay`
    /// or `watchrelay`); optional so that reports written before it still decode.
    var relayExecutable: String?
    var medians: [BenchResult]
    var ratios: [Ratio]
    var goals: [Goal]
    /// Every run's rows, in run order.
    var allRuns: [[BenchResult]]

    /// Builds the report: medians per row across runs, then ratios and goals from the medians.
    init(
        startedAt: String, durationSeconds: Double, machine: BenchMachine, options: BenchOptions, relayExecutable: String,
        allRuns: [[BenchResult]], loadAtRunStarts: [[Double]]
    ) {
        self.loadAtRunStarts = loadAtRunStarts
        self.startedAt = startedAt
        self.durationSeconds = durationSeconds
        self.machine = machine
        loadAverageAfter = BenchSystem.loadAverage()
        runs = allRuns.count
        relayCPU = options.relayCPU
        generatorCPU = options.generatorCPU
        self.relayExecutable = URL(fileURLWithPath: relayExecutable).lastPathComponent
        self.allRuns = allRuns
        var order: [String] = []
        var byID: [String: [BenchResult]] = [:]
        for run in allRuns {
            for row in run {
                if byID[row.id] == nil { order.append(row.id) }
                byID[row.id, default: []].append(row)
            }
        }
        medians = order.map { BenchResult.median(of: byID[$0]!) }
        ratios = Self.ratios(medians)
        goals = BenchGoals.evaluate(medians)
    }

    private static func find(_ rows: [BenchResult], _ scenario: String, _ target: String, _ label: String)
        -> BenchResult?
    {
        rows.first { $0.scenario == scenario && $0.target == target && $0.label == label && $0.status == "ok" }
    }

    private static func ratios(_ rows: [BenchResult]) -> [Ratio] {
        var ratios: [Ratio] = []
        let ours = BenchTarget.watchrelay.rawValue
        for row in rows where row.target == ours && row.status == "ok" {
            for peer in BenchTarget.peers.map(\.rawValue) {
                guard let other = find(rows, row.scenario, peer, row.label) else { continue }
                func add(_ name: String, _ path: KeyPath<BenchResult, Double?>, _ reading: String) {
                    guard let a = row[keyPath: path], let b = other[keyPath: path], b > 0 else { return }
                    ratios.append(Ratio(figure: "\(row.scenario) \(row.label) \(name)", peer: peer, ratio: a / b, reading: reading))
                }
                switch row.scenario {
                case "throughput":
                    add("msg/s", \.messagesPerSecond, "higher is better")
                    add("relay CPU-s/1k", \.relayCPUSecondsPer1k, "lower is better")
                case "curve":
                    add("relay CPU-s/1k", \.relayCPUSecondsPer1k, "lower is better")
                    add("p99", \.p99Milliseconds, "lower is better")
                case "latency", "manyPairs":
                    add("p50", \.p50Milliseconds, "lower is better")
                    add("p99", \.p99Milliseconds, "lower is better")
                case "connections":
                    add("RSS/conn", \.rssPerConnectionKiB, "lower is better")
                default:
                    break
                }
            }
        }
        return ratios
    }

    /// The Markdown tables for standard output.
    func text() -> String {
        var lines: [String] = []
        let load = machine.loadAverage.map { Self.number($0, 2) }.joined(separator: " ")
        let loadAfter = loadAverageAfter.map { Self.number($0, 2) }.joined(separator: " ")
        lines.append("WatchRelay benchmarks — \(startedAt), \(runs) run(s), medians, \(Self.number(durationSeconds, 0)) s")
        lines.append(
            "\(machine.cpuModel), \(machine.cores) cores, Linux \(machine.kernel); relay (\(relayExecutable ?? "watchrelay") serve) on CPU \(relayCPU), "
                + "generator on CPU \(generatorCPU); load average \(load) at start, \(loadAfter) at end; 1-minute load at "
                + "each run's start: " + loadAtRunStarts.map { Self.number($0.first ?? 0, 2) }.joined(separator: ", "))
        lines.append("Figures are medians over the runs; notes are from the first run that succeeded.")
        lines.append("")
        lines.append(
            "| scenario | relay | point | msg/s | relay CPU-s/1k | relay CPU | gen CPU | other CPU | p50 ms | p99 ms "
                + "| relay RSS MiB | RSS/conn KiB | notes |")
        lines.append("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
        for row in medians {
            let cells = [
                row.scenario, row.target, row.label, Self.cell(row.messagesPerSecond, 0), Self.cell(row.relayCPUSecondsPer1k, 4),
                Self.cell(row.relayCPUPercent, 0, suffix: " %"), Self.cell(row.generatorCPUPercent, 0, suffix: " %"),
                Self.cell(row.otherCPUPercent, 0, suffix: " %"),
                Self.cell(row.p50Milliseconds, 3), Self.cell(row.p99Milliseconds, 3), Self.cell(row.relayRSSMiB, 1),
                Self.cell(row.rssPerConnectionKiB, 1),
                ([
                    row.status == "ok" ? nil : row.status, row.relayRSSBeforeMiB.map { "RSS before \(Self.number($0, 1)) MiB" },
                    row.note,
                ].compactMap { $0 }).joined(separator: "; "),
            ]
            lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "/") }.joined(separator: " | ") + " |")
        }
        if !ratios.isEmpty {
            lines.append("")
            lines.append("| WatchRelay ÷ peer | lws-c | python-websockets | mosquitto | reading |")
            lines.append("|---|--:|--:|--:|---|")
            var figures: [String] = []
            for ratio in ratios where !figures.contains(ratio.figure) { figures.append(ratio.figure) }
            for figure in figures {
                let row = ratios.filter { $0.figure == figure }
                let cells = BenchTarget.peers.map { peer in
                    row.first { $0.peer == peer.rawValue }.map { Self.number($0.ratio, 2) + "×" } ?? "—"
                }
                lines.append("| \(figure) | " + cells.joined(separator: " | ") + " | \(row[0].reading) |")
            }
        }
        lines.append("")
        lines.append("| goal | measured | met |")
        lines.append("|---|---|---|")
        for goal in goals {
            lines.append("| \(goal.goal) | \(goal.measured) | \(goal.met.map { $0 ? "yes" : "no" } ?? "—") |")
        }
        return lines.joined(separator: "\n")
    }

    private static func cell(_ value: Double?, _ decimals: Int, suffix: String = "") -> String {
        value.map { number($0, decimals) + suffix } ?? ""
    }

    /// `value` with `decimals` decimals (thousands unseparated, for scripts).
    static func number(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    /// Writes the JSON to `path`, creating its directory.
    func write(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: url)
    }
}
