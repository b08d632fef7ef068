import Foundation
import TestSupport
import Testing

/// `watchrelay <subcommand>` as a real child process, driven through its stdin and stdout (so `kill` means SIGKILL).
final class ChildProcess: Sendable {
    let process: TestProcess
    private let stdin: FileHandle
    private let lines: ChildOutput

    /// Starts `watchrelay <subcommand>` with `arguments` (stderr is discarded); `executable`
    /// and `directory` name another copy of the binary and the working directory, `environment`
    /// variables set on top of this process's.
    init(
        _ arguments: [String], subcommand: String = "phone", executable: String = watchrelayBinary,
        directory: String? = nil, environment: [String: String] = [:]
    ) throws {
        process = TestProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [subcommand] + arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin = input.fileHandleForWriting
        lines = ChildOutput(reading: output.fileHandleForReading)
    }

    /// Types a line on the child's stdin.
    func type(_ line: String) {
        stdin.write(Data((line + "\n").utf8))
    }

    /// The next stdout line starting with `prefix` (earlier lines are dropped); fails after `seconds`.
    func line(startingWith prefix: String, within seconds: Double = 30) async throws -> String {
        try await lines.line(startingWith: prefix, from: "the child", within: seconds)
    }

    /// The stdout lines up to one starting with `prefix`, none dropped: every line taken by the
    /// time it came (it included); fails after `seconds`.
    func lines(through prefix: String, within seconds: Double = 30) async throws -> [String] {
        try await lines.lines(through: prefix, from: "the child", within: seconds)
    }

    /// Closes the child's stdin (the end of input).
    func closeInput() {
        try? stdin.close()
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// SIGKILL, then waits (without blocking a thread) until the child is gone.
    func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        _ = try await exitStatus()
    }

    /// Waits for the child to exit by itself; returns its status. Polls instead of
    /// `waitUntilExit`, which would block one of the few cooperative threads.
    func exitStatus(within seconds: Double = 30) async throws -> Int32 {
        try await eventually(seconds, "the child to exit") { !self.process.isRunning }
        return process.terminationStatus
    }

    /// Every stdout line once the child closed its stdout; fails after `seconds`.
    func output(within seconds: Double = 30) async throws -> [String] {
        try await eventually(seconds, "the child's output to end") { self.lines.isClosed }
        return lines.takeAll()
    }

    /// Kills the child if it still runs (for `defer`; nothing waits).
    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Runs `watchrelay <subcommand> <arguments>` to completion: its exit status and stdout.
    static func run(_ arguments: [String], subcommand: String = "phone") async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(arguments, subcommand: subcommand)
        defer { child.terminate() }
        let lines = try await child.output()
        let status = try await child.exitStatus()
        return (status, lines.map { $0 + "\n" }.joined())
    }
}
