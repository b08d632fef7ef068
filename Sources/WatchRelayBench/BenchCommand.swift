import CLIArguments
import Foundation
import Primitives

/// `watchrelay bench`: the load generator and report of the WatchRelay benchmarks.
///
/// See `BenchOptions.help` for the scenarios and BENCHMARKS.md for how to read the results.
public enum BenchCommand {
    /// Runs `watchrelay bench` with its arguments (after the subcommand); returns the exit code.
    public static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "quick"])
        if args.flag("help") {
            StandardOutput.writeLine(BenchOptions.help)
            return 0
        }
        var paths = BenchPaths()
        let options = try BenchOptions(&args, paths: &paths)
        try args.rejectUnknown()
        // Returns only if already pinned (or re-executing failed).
        BenchSystem.pinSelf(to: options.generatorCPU)
        let signalSources = await BenchChildren.killOnTermination()
        defer { withExtendedLifetime(signalSources) {} }
        let fileLimit = BenchSystem.raiseOpenFileLimit()
        if fileLimit < options.connections + 512 {
            BenchProgress.note("warning: open-file limit \(fileLimit) is below --connections \(options.connections) + 512")
        }
        let directory = NSTemporaryDirectory() + "watchrelay-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let machine = BenchSystem.machine()
        let startedAt = ISO8601DateFormatter().string(from: Date())
        let began = ContinuousClock.now
        BenchProgress.note(
            "pid \(getpid()); \(machine.cpuModel), \(machine.cores) cores, load \(machine.loadAverage.map { String($0) }.joined(separator: " ")); "
                + "generator pinned to CPU \(BenchSystem.allowedCPUs()), relays to CPU \(options.relayCPU); "
                + "open files \(fileLimit)")
        let runner = BenchRunner(options: options, paths: paths, directory: directory)
        var allRuns: [[BenchResult]] = []
        var loads: [[Double]] = []
        for run in 1...options.runs {
            loads.append(BenchSystem.loadAverage())
            BenchProgress.note("run \(run) of \(options.runs), load \(loads[run - 1].map { String($0) }.joined(separator: " "))")
            allRuns.append(await suite(runner))
        }
        let report = BenchReport(
            startedAt: startedAt, durationSeconds: BenchRunner.seconds(ContinuousClock.now - began), machine: machine,
            options: options, relayExecutable: paths.watchrelay, allRuns: allRuns, loadAtRunStarts: loads)
        StandardOutput.writeLine(report.text())
        do {
            try report.write(to: options.output)
            BenchProgress.note("wrote \(options.output)")
        } catch {
            BenchProgress.note("cannot write \(options.output): \(error)")
            return 1
        }
        // A peer that fails is a finding, not a failure.
        let ours = BenchTarget.watchrelay.rawValue
        return report.medians.contains { $0.target == ours && $0.status.hasPrefix("failed") } ? 1 : 0
    }

    /// One run of every selected scenario; a failing point becomes a `failed: …` row and the
    /// run goes on.
    private static func suite(_ runner: BenchRunner) async -> [BenchResult] {
        let options = runner.options
        let targets = [BenchTarget.watchrelay] + options.peers
        var steps: [Step] = []
        if options.includes(.throughput) {
            for bytes in options.throughputSizes {
                let label = sizeLabel(bytes)
                for target in targets {
                    steps.append(Step("throughput", target, label) { try await runner.throughput(target, payloadBytes: bytes, label: label) })
                }
            }
        }
        if options.includes(.latency) {
            for rate in options.latencyRates {
                for target in targets {
                    steps.append(Step("latency", target, "\(rate)/s") {
                        try await runner.latency(target, rate: rate, payloadBytes: options.latencyBytes)
                    })
                }
            }
        }
        if options.includes(.pairs) {
            for target in targets {
                steps.append(Step("manyPairs", target, "\(options.pairs) pairs × 1/s") {
                    try await runner.manyPairs(
                        target, pairs: options.pairs, seconds: options.pairSeconds, payloadBytes: options.latencyBytes)
                })
            }
        }
        if options.includes(.curve) {
            for count in options.curvePairs {
                for target in targets {
                    steps.append(Step("curve", target, "\(count) pairs, \(options.curveRate)/s in all") {
                        try await runner.manyPairs(
                            target, pairs: count, rate: options.curveRate, seconds: options.pairSeconds,
                            payloadBytes: options.latencyBytes, scenario: "curve")
                    })
                }
            }
        }
        if options.includes(.connections) {
            for target in targets {
                steps.append(Step("connections", target, "\(options.connections / 2 * 2) idle") {
                    try await runner.connectionScale(target, connections: options.connections)
                })
            }
        }
        if options.includes(.durable) {
            for sync in ["full", "normal"] {
                steps.append(Step("durable", .watchrelay, "sync \(sync)") {
                    try await runner.durable(sync: sync, payloadBytes: options.durableBytes)
                })
            }
        }
        if options.includes(.queued) {
            for mebibytes in options.queuedMebibytes {
                steps.append(Step("queued", .watchrelay, "\(mebibytes) MiB queued") {
                    try await runner.queuedMemory(mebibytes: mebibytes)
                })
            }
        }
        if options.includes(.backlog) {
            for items in options.backlogItems {
                steps.append(Step("backlog", .watchrelay, "\(items) items") { try await runner.backlog(items: items) })
            }
        }
        var results: [BenchResult] = []
        for (number, step) in steps.enumerated() {
            let title = "[\(number + 1)/\(steps.count)] \(step.scenario) \(step.target.rawValue) \(step.label)"
            if let missing = runner.paths.missing(step.target) {
                results.append(.placeholder(scenario: step.scenario, target: step.target.rawValue, label: step.label, status: "skipped: \(missing)"))
                BenchProgress.note("\(title): skipped, \(missing)")
                continue
            }
            BenchProgress.note("\(title) …")
            do {
                let result = try await measureQuietly(step, title: title, options: options)
                results.append(result)
                BenchProgress.note("\(title): \(summary(result))")
            } catch {
                results.append(.placeholder(scenario: step.scenario, target: step.target.rawValue, label: step.label, status: "failed: \(error)"))
                BenchProgress.note("\(title): FAILED: \(error)")
            }
        }
        results.append(
            .placeholder(
                scenario: "widget", target: BenchTarget.watchrelay.rawValue, label: "refresh after snapshot",
                status: "pending (needs the watch app)"))
        return results
    }

    /// Runs a point, again (up to `options.retries` times) while other processes took more than
    /// `options.maxOtherCPU` of the machine during it; keeps the least disturbed attempt.
    private static func measureQuietly(_ step: Step, title: String, options: BenchOptions) async throws -> BenchResult {
        var best = try await step.body()
        var attempt = 0
        while attempt < options.retries, let others = best.otherCPUPercent, others > options.maxOtherCPU {
            attempt += 1
            BenchProgress.note("\(title): other processes used \(Int(others)) % CPU; measuring again (\(attempt))")
            try await Task.sleep(for: .seconds(2))
            let next = try await step.body()
            if next.status == "ok", (next.otherCPUPercent ?? 0) < others { best = next }
        }
        return best
    }

    /// One scenario point of a run.
    private struct Step {
        let scenario: String
        let target: BenchTarget
        let label: String
        let body: () async throws -> BenchResult

        init(_ scenario: String, _ target: BenchTarget, _ label: String, _ body: @escaping () async throws -> BenchResult) {
            self.scenario = scenario
            self.target = target
            self.label = label
            self.body = body
        }
    }

    /// `64 B`, `1 KiB`, `16 KiB`, `65536 B`.
    static func sizeLabel(_ bytes: Int) -> String {
        bytes % 1024 == 0 && bytes < 65536 ? "\(bytes / 1024) KiB" : "\(bytes) B"
    }

    /// A one-line summary of a result for the progress log.
    private static func summary(_ result: BenchResult) -> String {
        var parts: [String] = []
        if let rate = result.messagesPerSecond { parts.append("\(Int(rate)) msg/s") }
        if let p50 = result.p50Milliseconds, let p99 = result.p99Milliseconds {
            parts.append("p50 \(BenchReport.number(p50, 3)) ms, p99 \(BenchReport.number(p99, 3)) ms")
        }
        if let perConnection = result.rssPerConnectionKiB { parts.append("\(BenchReport.number(perConnection, 1)) KiB/conn") }
        if let relay = result.relayCPUPercent, let generator = result.generatorCPUPercent {
            parts.append("relay CPU \(Int(relay)) %, generator CPU \(Int(generator)) %")
        }
        if let others = result.otherCPUPercent { parts.append("other processes \(Int(others)) %") }
        if let rss = result.relayRSSMiB { parts.append("relay RSS \(BenchReport.number(rss, 1)) MiB") }
        if let anomalies = result.anomalies, anomalies > 0 { parts.append("\(anomalies) anomalies") }
        if let note = result.note { parts.append("(\(note))") }
        return parts.joined(separator: ", ")
    }
}
