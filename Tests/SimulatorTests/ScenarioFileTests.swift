import Foundation
import GitExplorerPayloads
import Simulator
import TestSupport
import Testing

/// The repository's scenario directory and fixtures, found from this file.
enum Repo {
    static let scenarios = repositoryRoot.appendingPathComponent("Simulator/scenarios").path
    static let fixtures = fixturesDirectory

    static func scenarioFiles() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: scenarios)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    /// Scenarios whose point is the socket relay itself: link faults applied on its service
    /// thread (`flap`, `delay`, `drop`, `no-reply`: the in-memory relay has none of them), faults
    /// set through the console's HTTP API, a relay restarted on its SQLite store, and one
    /// restarted with another `contextBytes` (each relay takes it its own way: the server's
    /// configuration, both nodes of a cluster).
    static let socketScenarios: Set<String> = [
        "link-flap-favorites.json", "link-no-reply-and-drop.json", "link-unreachable-profile.json", "relay-restart.json",
        "snapshot-cut.json",
    ]

    /// Scenarios run on a two-node cluster in `swift test` (`make test` runs every scenario on
    /// one with `simulate --cluster`, in-process and with child processes): the socket ones,
    /// pairing across nodes, and a watch switched on the other node.
    static let clusterScenarios: [String] = socketScenarios.sorted() + ["pairing.json", "watch-switch.json"]

    /// Scenarios with no fault only the socket relay applies: all but the two link-fault ones.
    static func inMemoryScenarioFiles() -> [String] {
        scenarioFiles().filter { $0 != "link-flap-favorites.json" && $0 != "link-no-reply-and-drop.json" }
    }
}

/// Every scenario in `Simulator/scenarios/` passes in this process: on the in-memory relay
/// (no sockets) wherever the in-memory relay can stand for the relay, and over a real
/// ``RelayServer`` on loopback for the ones about the socket relay, and on two relay nodes on
/// one redis-server with the phone and the watch on different nodes. ``ProcessModeTests`` runs
/// every one over sockets with child processes.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ScenarioFileTests {
    @Test(arguments: Repo.inMemoryScenarioFiles())
    func scenarioPassesInMemory(_ file: String) async throws {
        let scenario = try Scenario.load(path: Repo.scenarios + "/" + file)
        let result = await ScenarioRunner.inMemory(fixturesDirectory: Repo.fixtures).run(scenario, file: file)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    @Test(arguments: Repo.socketScenarios.sorted())
    func scenarioPassesOverSockets(_ file: String) async throws {
        let scenario = try Scenario.load(path: Repo.scenarios + "/" + file)
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures)
        let result = await runner.run(scenario, file: file)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }

    @Test(arguments: Repo.clusterScenarios)
    func scenarioPassesOnACluster(_ file: String) async throws {
        let scenario = try Scenario.load(path: Repo.scenarios + "/" + file)
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, cluster: true)
        let result = await runner.run(scenario, file: file)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }
}
