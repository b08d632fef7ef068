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

    /// Its report's reader gone (`simulate … | head -1`), simulate ends as a Unix tool does, by
    /// SIGPIPE, and leaves no run directory behind: SIGPIPE killed it mid-scenario and the run's
    /// directory (the actors' state, the children's logs) stayed in TMPDIR.
    @Test func aReportWhoseReaderIsGoneLeavesNoRunDirectoryBehind() async throws {
        let directory = TemporaryDirectory()
        let output = Pipe()
        let (process, runDirectories) = try await Self.startInRunDirectory(
            #"{"name": "slow", "steps": [{"action": "sleep", "seconds": 0.5}, {"action": "sleep", "seconds": 5}]}"#,
            in: directory, output: output, errors: FileHandle.nullDevice)
        try output.fileHandleForReading.close()  // the reader goes; the first step's line finds no one
        await waitForExit(process)
        #expect(process.terminationStatus == SIGPIPE && process.terminationReason == .uncaughtSignal)
        #expect(runDirectories().isEmpty, "\(runDirectories())")
    }

    /// Starts `simulate --memory` on `scenario` with `directory` as its TMPDIR; returns once its
    /// run's directory is there, with a way to list the run directories still there.
    static func startInRunDirectory(
        _ scenario: String, in directory: TemporaryDirectory, output: Any, errors: Any
    ) async throws -> (TestProcess, @Sendable () -> [String]) {
        directory.write(scenario, to: "scenario.json")
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: try #require(ProcessModeTests.binary))
        process.arguments = ["simulate", "--memory", directory.path("scenario.json")]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": directory.path]) { $1 }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let runDirectories: @Sendable () -> [String] = {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("watchrelay-sim-") }
        }
        try await eventually(30, "the run's directory") { !runDirectories().isEmpty }
        return (process, runDirectories)
    }
}
