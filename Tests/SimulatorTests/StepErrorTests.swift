import Foundation
import Simulator
import TestSupport
import Testing

/// `expectError` on every step that can fail: the step passes when it fails with that error.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StepErrorTests {
    static func step(_ action: String, _ actor: String? = nil, _ edit: (inout ScenarioStep) -> Void = { _ in }) -> ScenarioStep {
        ProcessModeTests.step(action, actor, edit)
    }

    /// Pairs, adds octocat, runs `steps`, in memory.
    static func run(_ steps: [ScenarioStep]) async -> ScenarioResult {
        let added = InMemoryModeTests.start + [step("add", "phone") { $0.login = "octocat" }]
        return await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(Scenario(name: "expect-error", steps: added + steps))
    }

    /// A phone's `move` (like `remove` and `refresh`) that fails as expected passes: it reported
    /// "expected an error containing 'not_a_favorite', seen success" (the phone step checked the
    /// error, then the runner, seeing no error come out of it, said the step had succeeded).
    /// `add` was right: the runner left its error to the phone step.
    @Test(arguments: [
        step("move", "phone") { $0.login = "torvalds"; $0.index = 0; $0.expectError = "not_a_favorite" },
        step("add", "phone") { $0.login = "no-such-user-404"; $0.expectError = "user_not_found" },
    ])
    func aPhoneStepThatFailsAsExpectedPasses(_ failing: ScenarioStep) async throws {
        let result = await Self.run([failing, Self.step("expectPhoneFavorites", "phone") { $0.favorites = ["octocat"] }])
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    /// And one that succeeds instead fails, saying so.
    @Test func aPhoneStepExpectedToFailThatSucceedsFails() async throws {
        let result = await Self.run([
            Self.step("move", "phone") { $0.login = "octocat"; $0.index = 0; $0.expectError = "not_a_favorite" }
        ])
        let message = result.failureMessage ?? ""
        #expect(message.contains("expected an error containing 'not_a_favorite'; seen success"), "\(message)")
    }

    /// A `pair` that fails on the phone's side (no relay to ask for a code) as expected passes:
    /// only the watch's error was checked, and the phone's failed the step ("expected the step
    /// to succeed"), whatever `expectError` said.
    @Test func aPairWhosePhoneCannotGetACodeFailsAsExpected() async throws {
        let steps = ["relay", "github", "phone", "watch"].map { ScenarioStep(action: "start", actor: $0) } + [
            Self.step("stop", "relay"),
            Self.step("pair") { $0.phone = "phone"; $0.watch = "watch"; $0.expectError = "timed out" },
        ]
        let result = await ScenarioRunner(fixturesDirectory: Repo.fixtures).run(Scenario(name: "pair-no-relay", steps: steps))
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }
}

/// `expectError` is matched against the runner's own failures too: a step on a stopped actor,
/// a watch's `start` that does not activate. They were passed on as the step's failure,
/// whatever `expectError` said.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StepFailureExpectErrorTests {
    @Test func aStepOnAStoppedPhoneFailsAsExpected() async throws {
        let result = await StepErrorTests.run([
            StepErrorTests.step("stop", "phone"),
            StepErrorTests.step("add", "phone") { $0.login = "torvalds"; $0.expectError = "stopped" },
        ])
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    /// And one whose failure says something else still fails, naming both.
    @Test func aStepOnAStoppedPhoneWithAnotherErrorExpectedFails() async throws {
        let result = await StepErrorTests.run([
            StepErrorTests.step("stop", "phone"),
            StepErrorTests.step("add", "phone") { $0.login = "torvalds"; $0.expectError = "user_not_found" },
        ])
        let message = result.failureMessage ?? ""
        #expect(message.contains("expected an error containing 'user_not_found'; seen expected phone 'phone' running, seen stopped"), "\(message)")
    }
}

/// A `pair` checks its own `expectError` (it asks for a new code when one expired): the
/// runner's failures (a watch stopped) were passed on there too, whatever it said.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PairStepFailureExpectErrorTests {
    @Test func aPairWithAStoppedWatchFailsAsExpected() async throws {
        let result = await StepErrorTests.run([
            StepErrorTests.step("stop", "watch"),
            StepErrorTests.step("pair") { $0.phone = "phone"; $0.watch = "watch"; $0.expectError = "stopped" },
        ])
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }
}
