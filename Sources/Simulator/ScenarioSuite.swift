import Foundation

/// Several scenario files run one after another, with the report `watchrelay simulate` prints.
public struct ScenarioSuite: Sendable {
    /// The exit code when every scenario passed.
    public static let exitPassed: Int32 = 0
    /// The exit code when a scenario file could not be loaded (missing, unreadable, not a
    /// scenario) or a scenario had no run directory (TMPDIR unusable): the run is an error, not
    /// a failed check, whatever the other files did.
    public static let exitError: Int32 = 1
    /// The exit code when a scenario's expectation (or step) failed.
    public static let exitAssertionFailed: Int32 = 3
    /// The exit code when nothing failed but nothing ran either: every scenario was skipped
    /// (a CI job running `simulate --memory` on socket-only scenarios must not pass on them).
    public static let exitNothingRan: Int32 = 4

    /// The results so far, in file order.
    public private(set) var results: [ScenarioResult] = []

    /// An empty suite.
    public init() {}

    /// Loads and runs each file with `runner`; a file that cannot be loaded is reported as a
    /// failed scenario (step 0, `load`) and makes the exit code 1. `onResult` sees each
    /// scenario's result as it finishes.
    public mutating func run(
        files: [String], runner: ScenarioRunner, onStart: @Sendable (String) -> Void = { _ in },
        onResult: @Sendable (ScenarioResult) -> Void = { _ in }
    ) async {
        for file in files {
            onStart(file)
            let result: ScenarioResult
            do {
                let scenario = try await Self.load(file)
                result = await runner.run(scenario, file: file)
            } catch {
                let failure = StepFailure(expected: "a valid scenario file", seen: "\(error)")
                result = ScenarioResult(
                    name: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent, file: file,
                    steps: [StepResult(index: 0, name: "load", passed: false, milliseconds: 0, failure: failure)],
                    milliseconds: 0)
            }
            results.append(result)
            onResult(result)
        }
    }

    /// Loads `file` on a thread of its own: a pipe (`simulate <(make-scenario)`) blocks in `read`
    /// until its writer writes, which must not hold a cooperative-pool thread.
    private static func load(_ file: String) async throws -> Scenario {
        try await withCheckedThrowingContinuation { continuation in
            let reader = Thread { continuation.resume(with: Result { try Scenario.load(path: file) }) }
            reader.name = "watchrelay-scenario-file"
            // Ends once the file is read: the continuation is what waits for it.
            reader.start()
        }
    }

    /// Records a result run elsewhere.
    public mutating func append(_ result: ScenarioResult) {
        results.append(result)
    }

    /// How many passed.
    public var passedCount: Int { results.filter(\.passed).count }
    /// How many failed.
    public var failedCount: Int { results.filter(\.failed).count }
    /// How many could not run in the runner's mode (``ScenarioResult/skipped``).
    public var skippedCount: Int { results.filter { $0.skipped != nil }.count }

    /// `N passed, M failed` (and `, K skipped` when some could not run; `: nothing ran` when
    /// every one was skipped).
    public var summary: String {
        "\(passedCount) passed, \(failedCount) failed" + (skippedCount > 0 ? ", \(skippedCount) skipped" : "")
            + (nothingRan ? ": nothing ran" : "")
    }

    /// 1 if a scenario did not start (its file did not load, or no run directory); else 3 if a scenario failed (an assertion); else 4 if
    /// every scenario was skipped (nothing was checked); else 0 (some may have been skipped).
    public var exitCode: Int32 {
        if results.contains(where: \.didNotStart) { return Self.exitError }
        return failedCount > 0 ? Self.exitAssertionFailed : nothingRan ? Self.exitNothingRan : Self.exitPassed
    }

    /// Every scenario was skipped (and there was at least one).
    private var nothingRan: Bool { !results.isEmpty && skippedCount == results.count }

    /// The machine-readable report: every scenario with its steps, and the totals.
    public var json: String {
        let report: [String: Any] = [
            "passed": passedCount, "failed": failedCount, "skipped": skippedCount, "exitCode": Int(exitCode),
            "scenarios": results.map(\.json),
        ]
        guard
            let data = try? JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
            let text = String(data: data, encoding: .utf8)
        else { return "{}" }
        return text
    }
}
