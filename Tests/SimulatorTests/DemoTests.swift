import Foundation
import TestSupport
import Testing

/// `watchrelay demo` (what `make run` runs): after each widget reload it waits for the rest of
/// the widget work that is due (no fixed pause) and prints every widget as it is then.
@Suite(.timeLimit(.minutes(3)))
struct DemoTests {
    @Test func theDemoPrintsEveryWidgetAfterEachSnapshot() async throws {
        let directory = TemporaryDirectory()
        let (status, text) = try await runWatchrelay(["demo", "--out", directory.path])
        #expect(status == 0, "\(text)")
        let steps = text.components(separatedBy: "── 3. Delete torvalds")
        try #require(steps.count == 2, "\(text)")
        // Four favorites on every face after the adds, three after the delete.
        #expect(steps[0].contains("( 4 )") && steps[0].contains("1/4") && steps[0].contains("╭─ stack.rectangular"), "\(steps[0])")
        #expect(steps[1].contains("( 3 )") && steps[1].contains("1/3") && !steps[1].contains("torvalds ("), "\(steps[1])")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/widgets.svg"))
    }

    /// `demo --fixtures DIR` with a directory that holds no fixtures printed the story's title
    /// and started its relay before the usage error.
    @Test func fixturesThatDoNotLoadFailBeforeTheStory() async throws {
        let tmp = TemporaryDirectory()
        let (status, out) = try await runWatchrelay(
            ["demo", "--fixtures", tmp.path("none"), "--out", tmp.path("out")], environment: ["TMPDIR": tmp.path])
        #expect(status == 2)
        #expect(out.isEmpty, "the story began: \(out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty)
    }

}

/// Runs the `watchrelay` built next to the tests (or `executable`, a copy of it) to its end:
/// exit status and standard output. `environment` is added to this process's.
func runWatchrelay(
    _ arguments: [String], environment: [String: String] = [:], executable: String? = nil
) async throws -> (status: Int32, out: String) {
    let exe = try executable ?? #require(ProcessModeTests.binary, "watchrelay must be built next to the tests (make test does)")
    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: exe)
    process.arguments = arguments
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = await readToEnd(out.fileHandleForReading)
    await waitForExit(process)
    return (process.terminationStatus, text)
}
