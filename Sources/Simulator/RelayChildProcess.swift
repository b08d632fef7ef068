import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `watchrelay serve` as a real child process, for `simulate --processes`: stopping it is a
/// SIGKILL (a crash), and its counters come from its `/metrics` endpoint.
final class RelayChildProcess: @unchecked Sendable {
    // @unchecked: the Process is only touched by the runner actor that owns this object.
    private let process: Process
    /// `ws://127.0.0.1:PORT/v1`, as the relay printed it.
    let url: String
    /// The port it listens on.
    let port: Int

    /// Starts `executable serve` on `port` (0: any) with `database`; returns once it printed its URL.
    static func start(executable: String, port: Int, database: String) throws -> RelayChildProcess {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = [
            "serve", "--port", String(port), "--db", database, "--sync", "normal", "--reply-timeout-ms", "1500",
            "--pairing-code-ttl-s", "1", "--log-level", "error",
        ]
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
        guard let text = String(data: line, encoding: .utf8)?.split(separator: "\n").first, text.hasPrefix("ws"),
            let bound = URL(string: String(text))?.port
        else {
            p.terminate()
            throw StepFailure(expected: "`watchrelay serve` to print its URL", seen: "nothing (\(executable))")
        }
        return RelayChildProcess(process: p, url: String(text), port: bound)
    }

    private init(process: Process, url: String, port: Int) {
        self.process = process
        self.url = url
        self.port = port
    }

    /// SIGKILL, then waits for the process to end.
    func kill9() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The relay's counters, read from `/metrics`: pairs, queued items, connections.
    func stats() async throws -> (connections: Int, pairs: Int, queued: Int) {
        let metrics = URL(string: "http://127.0.0.1:\(port)/metrics")!
        let (data, _) = try await URLSession.shared.data(from: metrics)
        var connections = 0
        var pairs = 0
        var queued = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Int(parts[1]) else { continue }
            if parts[0].hasPrefix("watchrelay_connections") { connections += value }
            if parts[0] == "watchrelay_pairs" { pairs = value }
            if parts[0].hasPrefix("watchrelay_queued_items") { queued += value }
        }
        return (connections, pairs, queued)
    }
}
