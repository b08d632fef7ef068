import Foundation
import Simulator
import TestSupport
import Testing

/// `expectRelay` over sockets checks the relay as it is when the step runs, not the console's
/// last push (taken up to 150 ms earlier, before the step before it changed the relay).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ExpectRelayFreshTests {
    /// The watch away, the phone's add waits at the relay (queued 1): an `expectRelay` of the
    /// count from before the add must fail. It passed on the console's push from the watch's
    /// leaving, which the add came within 150 ms of: the first state a new event stream gets.
    @Test func anExpectRelayOfTheCountBeforeTheLastStepFails() async throws {
        let scenario = Scenario(
            name: "expect-relay-fresh",
            steps: InMemoryModeTests.start + [
                // These two must pass, however loaded the machine: the watch's ack of the
                // phone's first snapshot took over the default second under make test's load.
                InMemoryModeTests.step("expectRelay") { $0.pairs = 1; $0.queued = 0; $0.connections = 2; $0.timeout = 10 },
                InMemoryModeTests.step("stop", "watch"),
                InMemoryModeTests.step("expectRelay") { $0.connections = 1; $0.timeout = 10 },
                InMemoryModeTests.step("add", "phone") { $0.login = "octocat" },
                InMemoryModeTests.step("expectRelay") { $0.queued = 0; $0.timeout = 0.5 },
            ])
        for _ in 0..<5 {
            let result = await ScenarioRunner(fixturesDirectory: Repo.fixtures).run(scenario)
            let failed = try #require(result.failedStep, "it passed: \(result.steps.map(\.line).joined(separator: "\n"))")
            #expect(failed.index == 10, "\(result.failureMessage ?? "")")
            #expect(result.failureMessage?.contains("seen pairs 1, queued 1") == true, "\(result.failureMessage ?? "")")
        }
    }
}
