import Foundation
import GitExplorerPayloads
import Simulator
import TestSupport
import Testing

/// A broken expectation fails with a message naming the step, what was expected and what was
/// seen; the suite (and so `watchrelay simulate`) maps it to exit code 3.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct FailureReportTests {
    /// Pairs, adds two users, then expects the circular widget to show 99 favorites.
    static let broken = Scenario(
        name: "broken-on-purpose",
        steps: [
            step("start", "relay"), step("start", "github"), step("start", "phone"), step("start", "watch"),
            { var s = ScenarioStep(action: "pair"); s.phone = "phone"; s.watch = "watch"; return s }(),
            { var s = step("add", "phone"); s.login = "octocat"; return s }(),
            { var s = step("wait", "watch"); s.event = "snapshot"; s.favorites = ["octocat"]; return s }(),
            { var s = step("advance", "watch"); s.seconds = 1; return s }(),
            { var s = step("expectWidget", "watch"); s.widget = "circular"; s.equals = "99\nFAV"; return s }(),
            { var s = step("expectPhoneFavorites", "phone"); s.favorites = ["never-reached"]; return s }(),
        ])

    static func step(_ action: String, _ actor: String) -> ScenarioStep {
        ScenarioStep(action: action, actor: actor)
    }

    /// On the in-memory relay: the report is the runner's logic, not the sockets' (the CLI
    /// test below and ``ProcessModeTests`` fail the same scenario over sockets).
    @Test func aBrokenExpectationNamesExpectedSeenAndStep() async throws {
        let runner = ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures)
        let result = await runner.run(Self.broken)
        #expect(!result.passed)
        #expect(result.steps.count == 9, "the run stops at the failing step")
        let failed = try #require(result.failedStep)
        #expect(failed.index == 9)
        #expect(failed.name == "expectWidget watch circular")
        let message = try #require(result.failureMessage)
        #expect(message.contains("step 9 (expectWidget watch circular)"))
        #expect(message.contains(#"expected face.circular text "99\nFAV""#))
        #expect(message.contains(#"seen "1\nFAV""#), "the widget shows one favorite: \(message)")
        #expect(failed.line.contains("expected:") && failed.line.contains("seen:"))

        var suite = ScenarioSuite()
        suite.append(result)
        #expect(suite.exitCode == 3)
        #expect(suite.summary == "0 passed, 1 failed")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(suite.json.utf8)) as? [String: Any])
        #expect(report["exitCode"] as? Int == 3)
        let scenarios = try #require(report["scenarios"] as? [[String: Any]])
        #expect((scenarios.first?["failure"] as? String)?.contains("step 9") == true)
    }

    @Test func anUnknownActionIsAnInvalidScenario() throws {
        let json = #"{"name": "x", "steps": [{"action": "teleport", "actor": "watch"}]}"#
        #expect(throws: ScenarioError.invalid("step 1: unknown action 'teleport'")) {
            try Scenario.decode(Data(json.utf8))
        }
    }

    /// The CLI (built next to the tests): exit code 3 and the failure on standard output, with
    /// the actors in this process, as child processes, and on the in-memory relay.
    @Test(arguments: [[], ["--processes"], ["--memory"]])
    func theCLIExitsWith3OnAFailedExpectation(mode: [String]) async throws {
        let file = NSTemporaryDirectory() + "broken-\(UUID().uuidString).json"
        let data = try JSONEncoder().encode(Self.broken)
        try data.write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (status, text) = try await runWatchrelay(["simulate", "--fixtures", Repo.fixtures] + mode + [file])
        #expect(status == 3)
        #expect(text.contains("FAIL broken-on-purpose"))
        #expect(text.contains("0 passed, 1 failed"))
        #expect(text.contains(#"expected: face.circular text "99\nFAV""#), "\(text)")
    }

    /// `simulate --memory` over the whole directory: the scenarios that need the socket relay
    /// say SKIP and why, the run exits 0.
    @Test func theCLISkipsWhatTheInMemoryRelayCannotRun() async throws {
        let (status, text) = try await runWatchrelay(
            ["simulate", "--fixtures", Repo.fixtures, "--memory"]
                + ["link-flap-favorites.json", "widget-refresh.json"].map { Repo.scenarios + "/" + $0 })
        #expect(status == 0, "\(text)")
        #expect(text.contains("SKIP link-flap-favorites: step "), "\(text)")
        #expect(text.contains("PASS widget-refresh"))
        #expect(text.contains("1 passed, 0 failed, 1 skipped"))
    }
}
