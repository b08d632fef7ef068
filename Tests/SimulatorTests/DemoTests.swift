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

    /// SIGINT or SIGTERM while the story ran killed the demo with the signal's default action and
    /// left its temporary directory (the relay's database, the phone's and the watch's state)
    /// in TMPDIR. Now it removes it, says so on stderr, and exits with 128 + the signal (or,
    /// had the story ended first, as usual: 0, or 128 + the signal if it came during the exit;
    /// the directory removed all the same).
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalDuringTheStoryLeavesNoTemporaryDirectoryBehind(signal: Int32) async throws {
        let tmp = TemporaryDirectory()
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: try #require(ProcessModeTests.binary))
        process.arguments = ["demo", "--out", tmp.path("out")]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp.path]) { $1 }
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        try process.run()
        async let stdout = readToEnd(out.fileHandleForReading)
        async let stderr = readToEnd(err.fileHandleForReading)
        let demoDirectories: @Sendable () -> [String] = {
            ((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []).filter { $0.hasPrefix("watchrelay-demo-") }
        }
        try await eventually(30, "the demo's directory") { !demoDirectories().isEmpty || !process.isRunning }
        kill(process.processIdentifier, signal)
        let (text, errors) = await (stdout, stderr)
        await waitForExit(process)
        #expect(demoDirectories().isEmpty, "left behind: \(demoDirectories())")
        #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
        if text.contains("done in") {
            // The story ended first. The signal may still land before the demo exits, while it
            // removes its directory: then it is interrupted all the same (seen once in a test run).
            #expect([0, 128 + signal].contains(process.terminationStatus), "\(errors)")
        } else {
            #expect(process.terminationStatus == 128 + signal, "\(errors)")
            #expect(errors.contains("demo: interrupted (signal \(signal)); its temporary directory removed"), "\(errors)")
        }
    }

    /// After the story, `demo --console` stops cleanly on SIGINT (Ctrl-C): exit 0, the
    /// directory removed. A second handler for the signals, beside the story's, missed it half
    /// the time (two dispatch sources race for one signal), and the demo ran on.
    @Test func aSignalAfterTheStoryStopsTheConsoleCleanly() async throws {
        let tmp = TemporaryDirectory()
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: try #require(ProcessModeTests.binary))
        process.arguments = ["demo", "--console", "--out", tmp.path("out")]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp.path]) { $1 }
        let (out, input) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let stdout = ChildOutput(reading: out.fileHandleForReading)
        _ = try await stdout.line(startingWith: "  type: add LOGIN", from: "the demo", within: 60)
        for _ in 0..<3 {  // each time: the race went the story handler's way about half the time
            kill(process.processIdentifier, SIGINT)
            if (try? await eventually(5, "the demo to stop") { !process.isRunning }) != nil { break }
            Issue.record("SIGINT did not stop demo --console")
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await waitForExit(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "status \(process.terminationStatus)")
        #expect(try await stdout.line(startingWith: "  done in", from: "the demo", within: 10).hasPrefix("  done in"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0.hasPrefix("watchrelay-demo-") }.isEmpty)
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
