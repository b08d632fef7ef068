import Foundation
import Simulator
import TestSupport
import Testing

/// The report's child processes (`simulate --processes --json`): every one the run started, in
/// the order they ended.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ProcessReportTests {
    static let steps = ["relay", "github", "phone", "watch"].map { ScenarioStep(action: "start", actor: $0) } + [
        ProcessModeTests.step("kill", "phone"), ProcessModeTests.step("start", "phone"),
    ]

    /// The phone killed mid-run ended first, then the watch, the phone and the relay the end of
    /// the run stops in that order: the relays were listed first, then phones, then watches.
    @Test func theProcessesAreListedInTheOrderTheyEnded() async throws {
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests (make test does)")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary)
        let result = await runner.run(Scenario(name: "process-order", steps: Self.steps))
        #expect(result.passed, "\(result.failureMessage ?? "")")
        #expect(result.processes.map(\.actor) == ["phone", "watch", "phone", "relay"], "\(result.processes)")
    }

    /// On a cluster the redis-server the run started is a child process too, killed at its end:
    /// it was left out of the report.
    @Test func aClusterReportListsItsRedisServer() async throws {
        let binary = try #require(ProcessModeTests.binary, "watchrelay must be built next to the tests (make test does)")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, childExecutable: binary, cluster: true)
        let result = await runner.run(Scenario(name: "cluster-redis", steps: Self.steps))
        #expect(result.passed, "\(result.failureMessage ?? "")")
        let redis = result.processes.filter { $0.actor == "redis" }
        #expect(redis.count == 1 && redis.allSatisfy(\.wasKilled), "\(result.processes)")
        #expect(result.processes.last?.actor == "redis", "Redis, the store, ends last: \(result.processes)")
    }
}
