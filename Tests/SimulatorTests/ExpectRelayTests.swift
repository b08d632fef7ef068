import Foundation
import Simulator
import TestSupport
import Testing

/// `expectRelay` awaits the relay's counters: it passes on a change that comes after the step
/// began (a device that just left), and a mismatch that stays names what it last saw — over
/// sockets (the console's `state` events) and in memory (the relay's own changes).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ExpectRelayTests {
    static func scenario(_ name: String) -> Scenario {
        Scenario(
            name: name,
            steps: InMemoryModeTests.start + [
                InMemoryModeTests.step("expectRelay") { $0.pairs = 1; $0.connections = 2 },
                InMemoryModeTests.step("stop", "watch"),
                InMemoryModeTests.step("expectRelay") { $0.connections = 1; $0.timeout = 10 },
                InMemoryModeTests.step("expectRelay") { $0.pairs = 2; $0.timeout = 0.3 },
            ])
    }

    @Test(arguments: [false, true])
    func expectRelayAwaitsAChangeAndNamesWhatItLastSaw(inMemory: Bool) async throws {
        let runner =
            inMemory
            ? ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures) : ScenarioRunner(fixturesDirectory: Repo.fixtures)
        let result = await runner.run(Self.scenario("expect-relay"))
        let failed = try #require(result.failedStep, "\(result.steps.map(\.line).joined(separator: "\n"))")
        #expect(failed.index == 9, "the step after the watch left passed: \(result.failureMessage ?? "")")
        // What it saw: the pair and the phone's connection. The queued count is left out: a
        // snapshot the phone pushes just then waits for the stopped watch (seen on a slow run).
        let message = result.failureMessage ?? ""
        #expect(message.contains("expected pairs 2; seen pairs 1, queued "), "\(message)")
        #expect(message.hasSuffix(", connections 1") || message.contains(", connections 1;"), "\(message)")
    }
}

/// `expectRelay` with `timeout: 0` checks the relay's counters as they are, once: it failed
/// nearly always over sockets (its deadline came before the console's first state did), and
/// in memory when the timer won the race with the current counters.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ExpectRelayZeroTimeoutTests {
    @Test(arguments: [false, true])
    func aZeroTimeoutChecksTheCountersAsTheyAre(inMemory: Bool) async throws {
        let runner =
            inMemory
            ? ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures) : ScenarioRunner(fixturesDirectory: Repo.fixtures)
        let steps =
            InMemoryModeTests.start + [InMemoryModeTests.step("expectRelay") { $0.pairs = 1; $0.connections = 2 }]
            + (0..<5).map { _ in InMemoryModeTests.step("expectRelay") { $0.pairs = 1; $0.connections = 2; $0.timeout = 0 } }
            + [InMemoryModeTests.step("expectRelay") { $0.pairs = 2; $0.timeout = 0 }]
        let result = await runner.run(Scenario(name: "expect-relay-now", steps: steps))
        // Every check of the counters as they are passes; the last, of a count the relay does
        // not have, fails having looked: it names what it saw.
        let failed = try #require(result.failedStep, "\(result.steps.map(\.line).joined(separator: "\n"))")
        #expect(failed.index == 12, "\(result.failureMessage ?? "")")
        #expect(result.failureMessage?.contains("expected pairs 2; seen pairs 1, queued ") == true, "\(result.failureMessage ?? "")")
    }
}
