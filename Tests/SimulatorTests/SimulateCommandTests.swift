import Foundation
import Simulator
import TestSupport
import Testing

/// `watchrelay simulate` as a user runs it (the binary built next to the tests).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SimulateCommandTests {
    /// A fixture directory with a file that is not a fixture is the run's error, exit 1, said
    /// once: every scenario failed its `start github` on it, exit 3, as if the app had failed.
    @Test func aFixtureThatDoesNotLoadIsAnErrorNotAFailedScenario() async throws {
        let directory = TemporaryDirectory()
        directory.write("{broken", to: "users/octocat.json")
        let (status, out) = try await runWatchrelay(
            ["simulate", "--memory", "--fixtures", directory.path, Repo.scenarios + "/pairing.json"])
        #expect(status == 1, "\(out)")
        #expect(!out.contains("FAIL"), "no scenario ran: \(out)")
    }
}
