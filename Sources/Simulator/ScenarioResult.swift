import Foundation

/// A failed step or expectation: what was expected and what was seen.
public struct StepFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the step expected.
    public var expected: String
    /// What it saw instead.
    public var seen: String

    /// A failure with both sides.
    public init(expected: String, seen: String) {
        self.expected = expected
        self.seen = seen
    }

    public var description: String { "expected \(expected), seen \(seen)" }
}

/// The outcome of one step.
public struct StepResult: Sendable, Hashable {
    /// The step's 1-based index in the scenario.
    public var index: Int
    /// The step in words, e.g. `add phone octocat`.
    public var name: String
    /// Whether it passed.
    public var passed: Bool
    /// How long it took, in milliseconds.
    public var milliseconds: Int
    /// Why it failed, if it did.
    public var failure: StepFailure?

    /// One line for the terminal.
    public var line: String {
        let head = "  [\(index)] \(name)"
        guard let failure else { return "\(head) ok (\(milliseconds) ms)" }
        return "\(head) FAIL\n      expected: \(failure.expected)\n      seen:     \(failure.seen)"
    }
}

/// The outcome of a scenario: its steps (up to the first failure) and the verdict.
public struct ScenarioResult: Sendable, Hashable {
    /// The scenario's name.
    public var name: String
    /// The file it came from, if any.
    public var file: String?
    /// The steps run.
    public var steps: [StepResult]
    /// How long it took, in milliseconds.
    public var milliseconds: Int
    /// The child processes it ran (`--processes`), in the order they ended.
    public var processes: [ChildProcessRecord] = []
    /// Why it did not run at all (a step the runner's mode cannot do, e.g. a socket-only link
    /// fault with `--memory`); nil when it ran.
    public var skipped: String?

    /// Whether it ran and every step passed.
    public var passed: Bool { skipped == nil && steps.allSatisfy(\.passed) }

    /// Whether it ran and a step failed.
    public var failed: Bool { skipped == nil && !passed }

    /// The failing step, if any.
    public var failedStep: StepResult? { steps.first { !$0.passed } }

    /// It never got to its first step: its file could not be loaded (the failed `load` of
    /// ``ScenarioSuite``) or its run directory could not be made (`run directory`): the one step
    /// is that step 0.
    public var didNotStart: Bool { steps.count == 1 && steps[0].index == 0 && !steps[0].passed }

    /// The failure in one paragraph: step index and name, expected and seen.
    public var failureMessage: String? {
        guard let step = failedStep, let f = step.failure else { return nil }
        return "scenario '\(name)' step \(step.index) (\(step.name)): expected \(f.expected); seen \(f.seen)"
    }

    /// The machine-readable report of this scenario.
    public var json: [String: Any] {
        var out: [String: Any] = [
            "name": name, "passed": passed, "milliseconds": milliseconds,
            "steps": steps.map { s -> [String: Any] in
                var d: [String: Any] = [
                    "index": s.index, "name": s.name, "passed": s.passed, "milliseconds": s.milliseconds,
                ]
                if let f = s.failure { d["expected"] = f.expected; d["seen"] = f.seen }
                return d
            },
        ]
        if let file { out["file"] = file }
        if !processes.isEmpty {
            out["processes"] = processes.map { p -> [String: Any] in
                var d: [String: Any] = ["actor": p.actor, "pid": Int(p.pid), "termination": p.termination ?? "running"]
                if let node = p.node { d["node"] = node }
                return d
            }
        }
        if let failureMessage { out["failure"] = failureMessage }
        if let skipped { out["skipped"] = skipped }
        return out
    }
}
