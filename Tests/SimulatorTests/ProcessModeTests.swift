import Foundation
import Simulator
import Testing

/// `--processes`: the relay as a `watchrelay serve` child, killed with SIGKILL on `stop`.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ProcessModeTests {
    /// `watchrelay` next to the tests (`swift build --build-tests` builds it there).
    static var binary: String? {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        let path = dir.appendingPathComponent("watchrelay").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    @Test func aKilledRelayLosesNothing() async throws {
        let binary = try #require(Self.binary, "watchrelay must be built next to the tests (make test does)")
        let scenario = try Scenario.load(path: Repo.scenarios + "/relay-restart.json")
        let runner = ScenarioRunner(fixturesDirectory: Repo.fixtures, relayExecutable: binary)
        let result = await runner.run(scenario)
        #expect(result.passed, "\(result.failureMessage ?? "")")
    }
}
