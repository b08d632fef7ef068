import Foundation
import Primitives
import Simulator
import Synchronization

/// A relay (or peer) the benchmark runs as a child process, pinned to one core with `taskset`.
///
/// Started with `posix_spawn` rather than Foundation's `Process`: a child inherits the signal
/// mask of the thread that spawns it, and the cooperative pool's threads block SIGTERM, so a
/// `Process` child never sees the SIGTERM that should stop it. Here the child starts with an
/// empty mask and default SIGINT, SIGTERM and SIGPIPE.
///
/// Standard output goes to a file, so a child that prints its URL as its first line (as
/// `watchrelay serve`, the C relay and the Python relay do) is read by polling that file;
/// standard error goes to a log file, shown when the child fails.
final class BenchChild: Sendable {
    /// The child (taskset execs the command, so its PID is the relay's own).
    private let process: SpawnedProcess
    /// The process ID.
    var pid: Int32 { process.pid }
    /// What was started, for messages.
    let name: String
    /// Where the child's standard error goes.
    let logPath: String
    private let stdoutPath: String
    /// Set by ``kill()``: the exit was intended.
    private let killed = Atomic<Bool>(false)

    /// Starts `executable arguments…` under `taskset -c cpu`.
    ///
    /// - Throws: `BenchError.setup` if `taskset` cannot be started.
    init(name: String, executable: String, arguments: [String], cpu: Int, directory: String) throws {
        self.name = name
        stdoutPath = "\(directory)/\(name).stdout"
        logPath = "\(directory)/\(name).stderr"
        let (stdoutPath, logPath) = (stdoutPath, logPath)
        let spawned = spawnChild(BenchChild.tasksetPath, ["-c", String(cpu), executable] + arguments) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let child: pid_t
        switch spawned {
        case .success(let pid): child = pid
        case .failure(let error): throw BenchError.setup("\(name): cannot start \(BenchChild.tasksetPath): \(error)")
        }
        process = SpawnedProcess(pid: child)
    }

    /// `taskset` from util-linux.
    static let tasksetPath =
        ["/usr/bin/taskset", "/bin/taskset"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/bin/taskset"

    /// Waits (up to `timeout`) for the child's first line of standard output.
    func firstLine(timeout: Duration = .seconds(15)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: stdoutPath, encoding: .utf8),
                let newline = text.firstIndex(of: "\n")
            {
                return String(text[..<newline])
            }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchError.setup("\(name) printed no URL within \(timeout)\(failureDetail())")
    }

    /// Waits (up to `timeout`) until something accepts TCP connections on 127.0.0.1:`port`.
    func waitForPort(_ port: Int, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if BenchPorts.accepts(port: port) { return }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError.setup("\(name) did not listen on port \(port) within \(timeout)\(failureDetail())")
    }

    /// Whether the child is still running (reaps it once it exited).
    var isRunning: Bool { process.isRunning }

    /// Whether the child exited without being asked to.
    var exitedUnexpectedly: Bool {
        !isRunning && !killed.load(ordering: .relaxed)
    }

    /// Kills the child with SIGKILL at once (its connections end with a reset) and reaps it.
    func kill() async {
        killed.store(true, ordering: .relaxed)
        await process.signal(SIGKILL)
    }

    /// Sends SIGTERM, waits up to `grace` for the exit, then SIGKILL. Idempotent.
    func stop(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        killed.store(true, ordering: .relaxed)
        if await !process.signal(SIGTERM, grace: grace) { await process.signal(SIGKILL) }
    }

    /// The exit status and the last lines of standard error, for an error message.
    func failureDetail() -> String {
        let state = process.termination ?? "still running"
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = log.split(separator: "\n").suffix(5).joined(separator: "\n    ")
        return " (\(state))" + (tail.isEmpty ? "" : ":\n    \(tail)")
    }
}

/// An interrupted benchmark does not leave relays behind.
enum BenchChildren {
    /// On SIGINT, SIGTERM or SIGHUP: SIGKILL every live child, then exit with 128 + signal.
    /// Returns once a signal is sure to reach the handler; keep the result alive.
    static func killOnTermination() async -> SignalHandlers {
        await SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
            ChildProcesses.killAll()
            StandardError.write("bench: interrupted (signal \(number)); relays killed\n")
            exit(128 + number)
        }
    }
}

/// Free ports and TCP probes on 127.0.0.1.
enum BenchPorts {
    /// A port the kernel picked as free just now (``LoopbackPort/free()``).
    static func free() throws -> Int {
        do { return try LoopbackPort.free() } catch { throw BenchError.setup(error.description) }
    }

    /// Whether a TCP connect to 127.0.0.1:`port` succeeds (the socket is closed at once).
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = LoopbackPort.loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Failures of the benchmark itself (not of a relay's performance).
enum BenchError: Error, CustomStringConvertible {
    /// A tool, file or child process is missing or did not start.
    case setup(String)
    /// A scenario could not complete (connection refused, protocol error, timeout).
    case scenario(String)

    var description: String {
        switch self {
        case .setup(let message): "setup: \(message)"
        case .scenario(let message): message
        }
    }
}
