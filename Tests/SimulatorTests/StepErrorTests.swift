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
}
