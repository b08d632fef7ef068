import Foundation
import Testing

/// `watchrelay serve` as a real child process (so `kill` means SIGKILL).
final class RelayProcess: @unchecked Sendable {
    // @unchecked: the Process is only touched by the owning test task.
    let process: Process
    let url: String

    /// The `watchrelay` binary built next to the test bundle.
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The bundle may be `…/debug/WatchRelayPackageTests.xctest` (a file) on Linux.
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("watchrelay").path
    }

    /// Starts a relay on port 0 with `db`; returns once it printed its URL.
    static func start(db: String, extra: [String] = []) throws -> RelayProcess {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["serve", "--port", "0", "--db", db, "--log-level", "error"] + extra
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var line = Data()
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(UInt8(ascii: "\n")) && Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let text = String(data: line, encoding: .utf8)?.split(separator: "\n").first, text.hasPrefix("ws") else {
            p.terminate()
            throw TestFailure("the relay did not print its URL")
        }
        return RelayProcess(process: p, url: String(text))
    }

    private init(process: Process, url: String) {
        self.process = process
        self.url = url
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func terminate() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
