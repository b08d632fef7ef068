import Foundation
import Simulator
import TestSupport
import Testing

/// A `linkFault` on an actor goes to the device of its current pair: a phone that switched to a
/// second watch is in two pairs under one name, and the fault went to the first pair's phone
/// (not connected any more), so the watch it talks to now saw nothing.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LinkFaultTargetTests {
    static func step(_ action: String, _ actor: String? = nil, _ edit: (inout ScenarioStep) -> Void = { _ in }) -> ScenarioStep {
        ProcessModeTests.step(action, actor, edit)
    }

    @Test func aFaultOnAPhoneWithTwoPairsGoesToItsCurrentOne() async throws {
        let steps = ["relay", "github", "phone", "watch", "watch2"].map { ScenarioStep(action: "start", actor: $0) } + [
            Self.step("pair") { $0.phone = "phone"; $0.watch = "watch" },
            Self.step("switchWatch", "phone") { $0.watch = "watch2" },
            Self.step("pair") { $0.phone = "phone"; $0.watch = "watch2" },
            // Scaled: under ThreadSanitizer (make test-tsan) 3 s was too short for the fault to land.
            Self.step("wait", "watch2") { $0.event = "reachable"; $0.timeout = 5 * timeoutScale },
            Self.step("linkFault", "phone") { $0.fault = "unreachable" },
            Self.step("wait", "watch2") { $0.event = "unreachable"; $0.timeout = 5 * timeoutScale },
        ]
        let result = await ScenarioRunner(fixturesDirectory: Repo.fixtures).run(Scenario(name: "fault-current-pair", steps: steps))
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }
}
