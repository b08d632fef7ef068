import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import TestSupport
import Testing

/// `watchrelay serve` as a real child process (so `kill` means SIGKILL).
final class RelayProcess: @unchecked Sendable {
    // @unchecked: the Process is only touched by the owning test task.
    let process: TestProcess
    let url: String

    /// Starts a relay on port 0 with `db` (unless `extra` has `--store`); returns once it printed its URL. With `debugLog`, its
    /// debug log (every connection's open and close, with the close code) goes to that file.
    /// `binary` is the executable, and `leading` what comes before the options (`watchrelay`
    /// needs `serve`; `watchrelay-relay` takes it or not).
    static func start(
        db: String, extra: [String] = [], debugLog: String? = nil, binary: String = watchrelayBinary,
        leading: [String] = ["serve"]
    ) async throws -> RelayProcess {
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: binary)
        // --exit-on-stdin-eof: the relay ends with this test process, even if a test is abandoned
        // (time limit) or the run is killed; `stdin`'s write end stays open as long as we live.
        // A test's first frames can come later than the relay's 10 s `hello` deadline when the
        // whole suite runs on two cores (a CI run saw `hello_required` for a hello sent on time by
        // the test's clock, with unit suites taking 33 s to get a thread); tests of the deadline set their own.
        let hello = extra.contains("--hello-timeout-s") ? [] : ["--hello-timeout-s", String(Int(60 * timeoutScale))]
        // A node on Redis (`--store`) takes no --db: it would be a usage error.
        let store = extra.contains("--store") ? [] : ["--db", db]
        p.arguments = leading + [
            "--port", "0", "--log-level", debugLog == nil ? "error" : "debug", "--exit-on-stdin-eof",
        ] + store + hello + extra
        let out = Pipe()
        let stdin = Pipe()
        p.standardOutput = out
        p.standardInput = stdin
        if let debugLog {
            _ = FileManager.default.createFile(atPath: debugLog, contents: nil)
            p.standardError = FileHandle(forWritingAtPath: debugLog)
        } else {
            p.standardError = FileHandle.nullDevice
        }
        try p.run()
        // Stdout is read on a thread of its own, so no cooperative thread blocks on it.
        let output = ChildOutput(reading: out.fileHandleForReading)
        guard let first = try? await output.line(startingWith: "", from: "the relay", within: 60), first.hasPrefix("ws") else {
            p.terminate()
            throw TestFailure("the relay did not print its URL")
        }
        return RelayProcess(process: p, url: first, stdin: stdin)
    }

    /// The write end of the relay's standard input, kept open while this object lives.
    private let stdin: Pipe

    private init(process: TestProcess, url: String, stdin: Pipe) {
        self.process = process
        self.url = url
        self.stdin = stdin
    }

    /// The port from ``url`` (`ws://127.0.0.1:PORT/v1`).
    var port: Int {
        Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0
    }

    /// The child's resident set size (VmRSS in /proc/PID/status), in KiB.
    func residentKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestFailure("no VmRSS for the relay") }
        return kib
    }

    /// `GET /metrics`: every sample line as `name{labels}` → value.
    func metrics() async throws -> [String: Double] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        var samples: [String: Double] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { samples[String(parts[0])] = value }
        }
        return samples
    }

    /// `GET /healthz` answered `200 ok`.
    func healthy() async throws -> Bool {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/healthz")!)
        return (response as? HTTPURLResponse)?.statusCode == 200 && String(decoding: data, as: UTF8.self).hasPrefix("ok")
    }

    /// Polls `/metrics` until `condition` holds; fails after `seconds` (scaled for slow runs).
    func waitForMetrics(
        _ what: String, within seconds: Double = 20, _ condition: ([String: Double]) -> Bool
    ) async throws -> [String: Double] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * timeoutScale * 1000))
        while true {
            let samples = try await metrics()
            if condition(samples) { return samples }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("/metrics never showed \(what) within \(seconds * timeoutScale) s")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// SIGKILL, then waits (without blocking a thread) until the relay is gone.
    func kill9() async {
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
    }

    /// SIGTERM, then waits (without blocking a thread) until the relay has shut down.
    func stop() async {
        terminate()
        await waitForExit(process)
    }

    /// SIGSTOP, then waits until every thread of the relay is stopped (``stopAndWait(_:what:)``).
    func freeze() async throws {
        try await stopAndWait(process.processIdentifier, what: "the relay")
    }

    /// SIGTERM if the relay still runs (for `defer`, which cannot wait without blocking a
    /// cooperative thread for the whole shutdown; ``stop()`` waits).
    func terminate() {
        if process.isRunning { process.terminate() }
    }
}

/// `watchrelay watch` as a real child process (the headless watch: RelaySession over lws), so
/// a test can SIGSTOP, SIGCONT and SIGKILL a real client. Stdin stays open (interactive mode).
final class WatchProcess: @unchecked Sendable {
    // @unchecked: the Process and pipe are only touched by the owning test task; the stdout
    // lines are read on a thread of their own into a Sendable ChildOutput.
    let process: TestProcess
    private let input = Pipe()
    private let lines: ChildOutput

    init(relay: String, pairCode: String, stateDirectory: String) throws {
        process = TestProcess()
        process.executableURL = URL(fileURLWithPath: watchrelayBinary)
        process.arguments = [
            "watch", "--relay", relay, "--pair", pairCode, "--state", stateDirectory, "--name", "Stopped Watch",
            "--log-level", "error",
        ]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        lines = ChildOutput(reading: output.fileHandleForReading)
    }

    var pid: pid_t { process.processIdentifier }

    /// Waits for a stdout line starting with `prefix`.
    func line(startingWith prefix: String, within seconds: Double = 20) async throws {
        _ = try await lines.line(startingWith: prefix, from: "the watch", within: seconds)
    }

    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// SIGSTOP, then waits until every thread of the process is stopped (``stopAndWait(_:what:)``).
    func stop() async throws {
        guard process.isRunning else { return }
        try await stopAndWait(pid, what: "the watch")
    }

    /// SIGKILL (works on a stopped process too) and reap; safe to call twice.
    func kill9() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// SIGSTOP to `pid`, then waits until every thread of it is stopped.
///
/// `kill` only queues the stop: one thread takes it and then stops the others, and a thread
/// running on the other core (or a vCPU the host has descheduled) can go on for a moment, long
/// enough to read, commit and answer a frame on a loaded machine. A test that needs a frozen
/// process waits for `T` in /proc.
func stopAndWait(_ pid: pid_t, what: String) async throws {
    kill(pid, SIGSTOP)
    let deadline = ContinuousClock.now + .seconds(10 * timeoutScale)
    while true {
        if allThreadsStopped(pid) { return }
        guard ContinuousClock.now < deadline else { break }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw TestFailure("\(what) (pid \(pid)) did not stop within \(10 * timeoutScale) s of SIGSTOP")
}

/// Whether every thread of `pid` is in state T (stopped), from /proc/PID/task/*/stat.
func allThreadsStopped(_ pid: pid_t) -> Bool {
    let tasks = "/proc/\(pid)/task"
    guard let ids = try? FileManager.default.contentsOfDirectory(atPath: tasks), !ids.isEmpty else { return false }
    return ids.allSatisfy { id in
        // "tid (comm) S ...": the state follows the last ')'.
        guard let stat = try? String(contentsOfFile: "\(tasks)/\(id)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first == "T"
    }
}
