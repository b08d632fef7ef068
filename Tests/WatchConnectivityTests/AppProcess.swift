import Foundation
import TestSupport

/// A WatchConnectivity app (or `watchrelay`) as a child process: its environment names the
/// relay, role and state directory; driven through stdin, read through stdout; `kill9` is SIGKILL.
final class AppProcess: Sendable {
    let name: String
    private let process: TestProcess
    private let input: FileHandle
    private let output: ChildOutput
    private let errors: ChildOutput

    /// Starts `executable` with `arguments` and `environment` added to this process's.
    init(_ name: String, executable: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        self.name = name
        process = TestProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        input = stdin.fileHandleForWriting
        output = ChildOutput(reading: stdout.fileHandleForReading)
        errors = ChildOutput(reading: stderr.fileHandleForReading)
    }

    /// An app on `relayURL` playing `role` with its state in `state`.
    convenience init(
        _ name: String, executable: String, relayURL: String, role: String, state: String, extra: [String: String] = [:]
    ) throws {
        try self.init(
            name, executable: executable,
            environment: ["WATCHRELAY_URL": relayURL, "WATCHRELAY_ROLE": role, "WATCHRELAY_STATE": state].merging(extra) { $1 })
    }

    /// Writes `line` to the child's stdin.
    func type(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// The next stdout line starting with `prefix` (earlier ones are dropped).
    @discardableResult
    func line(startingWith prefix: String, within seconds: Double = 20) async throws -> String {
        try await output.line(startingWith: prefix, from: name, within: seconds)
    }

    /// The stdout lines up to one starting with `prefix`, none dropped: every line taken by the
    /// time it came (it included).
    func lines(through prefix: String, within seconds: Double = 20) async throws -> [String] {
        try await output.lines(through: prefix, from: name, within: seconds)
    }

    /// The next stderr line starting with `prefix` (earlier ones are dropped).
    @discardableResult
    func errorLine(startingWith prefix: String, within seconds: Double = 20) async throws -> String {
        try await errors.line(startingWith: prefix, from: "\(name)'s stderr", within: seconds)
    }

    /// Every stdout line read so far (taken).
    func takeLines() -> [String] { output.takeAll() }

    /// Waits for the child to end by itself: its status, whether a signal ended it, and its stderr.
    /// Returns once both its stdout and stderr were read to their end, so ``takeLines()`` after it
    /// holds everything the child printed (the readers can lag the exit on a loaded machine).
    func exit(within seconds: Double = 30) async throws -> (status: Int32, signalled: Bool, stderr: String) {
        try await withTimeout(seconds * timeoutScale, "\(name) to exit") { await waitForExit(self.process) }
        try await eventually(5, "\(name)'s stdout and stderr to end") { self.output.isClosed && self.errors.isClosed }
        return (
            process.terminationStatus, process.terminationReason == .uncaughtSignal,
            errors.takeAll().joined(separator: "\n")
        )
    }

    /// SIGKILL, then waits until the child is gone.
    func kill9() async {
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
    }

    /// Kills the child if it still runs (for cleanup).
    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// The directory the package's executables are built in (next to the test bundle).
var buildDirectory: String {
    URL(fileURLWithPath: watchrelayBinary).deletingLastPathComponent().path
}
