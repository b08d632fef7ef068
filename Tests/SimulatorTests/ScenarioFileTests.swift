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
}

/// Every scenario in `Simulator/scenarios/` passes when run in-process.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ScenarioFileTests {
    @Test(arguments: Repo.scenarioFiles())
    func scenarioPasses(_ file: String) async throws {
        let scenario = try Scenario.load(path: Repo.scenarios + "/" + file)
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures)
        let result = await runner.run(scenario, file: file)
        #expect(result.passed, "\(result.failureMessage ?? "")\n\(result.steps.map(\.line).joined(separator: "\n"))")
    }
}
