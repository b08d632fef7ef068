import Foundation
import TestSupport
import WebSocketTransport
import Testing

/// `watchrelay <subcommand>` as a real child process, driven through its stdin and stdout (so `kill` means SIGKILL).
final class ChildProcess: Sendable {
    let process: Process
    private let stdin: FileHandle
    private let lines = LineBuffer()

    /// The `watchrelay` binary built next to the test bundle.
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The bundle may be `…/debug/WatchRelayPackageTests.xctest` (a file) on Linux.
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("watchrelay").path
    }

    /// Starts `watchrelay <subcommand>` with `arguments` (stderr is discarded).
    init(_ arguments: [String], subcommand: String = "phone") throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [subcommand] + arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin = input.fileHandleForWriting
        let lines = self.lines
        let handle = output.fileHandleForReading
        // A blocking reader of the child's stdout; it ends when the child's stdout closes.
        let reader = Thread {
            while true {
                let chunk = handle.availableData
                lines.state.withLock { state in
                    if chunk.isEmpty {
                        state.closed = true
                        return
                    }
                    state.partial.append(chunk)
                    while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                        state.buffered.append(String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self))
                        state.partial = Data(state.partial[(newline + 1)...])
                    }
                }
                if chunk.isEmpty { return }
            }
        }
        reader.start()
    }

    /// Types a line on the child's stdin.
    func type(_ line: String) {
        stdin.write(Data((line + "\n").utf8))
    }

    /// The next stdout line starting with `prefix` (earlier lines are dropped); fails after `seconds`.
    func line(startingWith prefix: String, within seconds: Double = 10) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * timeoutScale * 1000)))
        while ContinuousClock.now < deadline {
            let (found, closed) = lines.state.withLock { state -> (String?, Bool) in
                while !state.buffered.isEmpty {
                    let line = state.buffered.removeFirst()
                    if line.hasPrefix(prefix) { return (line, false) }
                }
                return (nil, state.closed)
            }
            if let found { return found }
            if closed { throw TestFailure("the child exited before printing '\(prefix)…'") }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("the child printed no '\(prefix)…' line within \(seconds) s")
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
    func exitStatus(within seconds: Double = 10) async throws -> Int32 {
        try await eventually(seconds, "the child to exit") { !self.process.isRunning }
        return process.terminationStatus
    }

    /// Every stdout line once the child closed its stdout; fails after `seconds`.
    func output(within seconds: Double = 10) async throws -> [String] {
        try await eventually(seconds, "the child's output to end") { self.lines.state.withLock { $0.closed } }
        return lines.state.withLock { state in
            defer { state.buffered = [] }
            return state.buffered
        }
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

/// Lines read from a child's stdout, shared by the reader thread and the test.
private final class LineBuffer: Sendable {
    let state = LockedState<(buffered: [String], partial: Data, closed: Bool)>(([], Data(), false))
}
