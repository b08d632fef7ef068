import Foundation
import Primitives

/// A `watchrelay` child process of `simulate --processes`: standard input and output are
/// pipes, standard error goes to a log file; ``kill()`` is a SIGKILL.
///
/// Started with `posix_spawn` rather than Foundation's `Process`: the child gets an empty
/// signal mask and default SIGINT/SIGTERM/SIGPIPE (a cooperative-pool thread's mask would
/// otherwise be inherited), and every pipe end is opened close-on-exec, so no other child
/// inherits one — a child's stdin reaches end-of-file as soon as this process closes it or
/// dies, and its stdout as soon as it dies.
///
/// Standard output is read by a dedicated thread (blocking `read`), which hands each line to
/// `onLine` in order; it ends at end-of-file, i.e. when the child ends, and then calls `onEnd`.
final class ChildProcess: Sendable {
    /// The child (its pid, reaping, how it ended).
    private let process: SpawnedProcess
    /// The child's process ID.
    var pid: pid_t { process.pid }
    /// What was started (the actor's name), for messages.
    let name: String
    /// Where the child's standard error goes.
    let logPath: String
    /// The write end of the child's standard input (-1 once closed).
    private let input: LockedState<Int32>
    /// Starts `executable arguments…`.
    /// - Parameters:
    ///   - onLine: called on the reader thread with each line of standard output, in order.
    ///   - onEnd: called on the reader thread once standard output ended (the child ended).
    /// - Throws: ``StepFailure`` if the process cannot be started.
    init(
        name: String, executable: String, arguments: [String], logPath: String,
        onLine: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void
    ) throws {
        self.name = name
        self.logPath = logPath
        ChildProcesses.ignoreSIGPIPE()
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        let (child, status) = try ChildProcesses.spawnLock.withLock { _ -> (pid_t, Int32) in
            // Glibc's module has no pipe2: pipe, then close-on-exec, under the lock every spawn
            // of this module takes, so no other child is started in between and inherits them.
            guard pipe(&stdinPipe) == 0 else { throw Self.failure(name, "pipe", errno) }
            guard pipe(&stdoutPipe) == 0 else {
                close(stdinPipe[0])
                close(stdinPipe[1])
                throw Self.failure(name, "pipe", errno)
            }
            for fd in stdinPipe + stdoutPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let spawned = spawnChild(executable, arguments) { actions in
                // dup2 clears close-on-exec on the copies, so only fds 0, 1 and 2 reach the child.
                posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
                posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
                posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
            switch spawned {
            case .success(let child): return (child, 0)
            case .failure(let error): return (0, error.code)
            }
        }
        // The child's ends are the child's now.
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard status == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw Self.failure(name, "posix_spawn \(executable)", status)
        }
        process = SpawnedProcess(pid: child)
        input = LockedState(stdinPipe[1])
        let output = stdoutPipe[0]
        let reader = Thread {
            Self.readLines(output, onLine)
            close(output)
            onEnd()
        }
        reader.name = "watchrelay-child-\(name)"
        // Ends at the child's end-of-output: nothing waits for the thread, only for its lines.
        reader.start()
    }

    private static func failure(_ name: String, _ operation: String, _ code: Int32) -> StepFailure {
        StepFailure(expected: "child process '\(name)' to start", seen: "\(operation): \(String(cString: strerror(code)))")
    }

    /// Reads `fd` to its end, calling `onLine` with each complete line.
    private static func readLines(_ fd: Int32, _ onLine: @Sendable (String) -> Void) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending.append(contentsOf: chunk[0..<n])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                onLine(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        if !pending.isEmpty { onLine(String(decoding: pending, as: UTF8.self)) }
    }

    /// Writes one line to the child's standard input; false if the pipe is closed (the
    /// child ended: SIGPIPE is ignored, so the write fails with EPIPE).
    func write(line: String) -> Bool {
        input.withLock { fd in
            guard fd >= 0 else { return false }
            var bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    /// Whether the child still runs (reaps it once it ended).
    var isRunning: Bool { process.isRunning }

    /// SIGKILL, then waits until the child is reaped; closes its standard input. Idempotent.
    func kill() async {
        await process.signal(SIGKILL)
        closeInput()
    }

    /// Waits up to `grace` for the child to end by itself (after ``closeInput()``, say).
    func waitForEnd(grace: Duration) async {
        _ = await process.signal(0, grace: grace)
    }

    /// Closes the child's standard input (a `--machine` child then stops by itself).
    func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// How the child ended: `killed by signal 9`, `exit status 0`, or nil while it runs.
    var termination: String? { process.termination }

    /// When the child was reaped (nil while it runs).
    var endedAt: ContinuousClock.Instant? { process.endedAt }

    /// The last lines of standard error, for failure messages.
    func stderrTail(_ lines: Int = 5) -> String {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").suffix(lines).joined(separator: " | ")
    }
}

/// The child processes still running, so that an interrupted or failed run leaves none behind.
public enum ChildProcesses {
    /// PIDs of started and not yet reaped children.
    static let live = LockedState<Set<pid_t>>([])

    /// Held while a child's pipes are made and it is spawned.
    static let spawnLock = LockedState<Void>(())

    /// SIGKILLs every child still running; returns how many there were. Safe to call from a
    /// signal source's handler.
    @discardableResult
    public static func killAll() -> Int {
        let pids = live.withLock { $0 }
        for pid in pids { Glibc.kill(pid, SIGKILL) }
        return pids.count
    }

    /// How many children are running now.
    public static var count: Int { live.withLock { $0.count } }

    /// Writing to the pipe of a child that died must fail with EPIPE, not kill this process.
    static func ignoreSIGPIPE() {
        ignored.withLock { done in
            if !done { signal(SIGPIPE, SIG_IGN) }
            done = true
        }
    }

    private static let ignored = LockedState(false)
}

/// The scenario runs' temporary directories not yet removed, so that an interrupted run
/// (`simulate` on SIGINT, SIGTERM or SIGHUP) leaves none behind.
public enum RunDirectories {
    static let live = LockedState<Set<String>>([])

    /// Registers `directory`, then creates it (registered first: a signal in between finds it),
    /// in its parent (TMPDIR) only if that exists: a missing TMPDIR is not made, since nothing
    /// would remove it and the directories above it afterwards.
    ///
    /// - Throws: why it cannot be made (TMPDIR missing, a file, read-only, full), with the
    ///   directory forgotten; every scenario after would fail the same way.
    static func create(_ directory: String) throws(StepFailure) {
        live.withLock { _ = $0.insert(directory) }
        guard mkdir(directory, 0o755) == 0 else {
            let code = errno
            var reason = String(cString: strerror(code))
            if code == ENOENT {
                let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
                reason += " (TMPDIR \(parent) does not exist; simulate makes no directory but its run's)"
            }
            live.withLock { _ = $0.remove(directory) }
            throw StepFailure(expected: "a run directory in TMPDIR", seen: "mkdir \(directory): \(reason)")
        }
    }

    /// Removes `directory` and forgets it once it is gone.
    static func remove(_ directory: String) {
        if removeTree(directory) { live.withLock { _ = $0.remove(directory) } }
    }

    /// Removes every run directory still there; returns how many there were.
    @discardableResult
    public static func removeAll() -> Int {
        let directories = live.withLock { live in
            defer { live.removeAll() }
            return live
        }
        for directory in directories { _ = removeTree(directory) }
        return directories.count
    }

    /// Removes the tree at `path`, again if a file vanished under the walk (a relay's SQLite
    /// connection closing late deletes its `-wal` and `-shm` meanwhile, and the walk then stops
    /// short of the directory); whether it is gone.
    private static func removeTree(_ path: String) -> Bool {
        for _ in 0..<5 {
            try? FileManager.default.removeItem(atPath: path)
            if !FileManager.default.fileExists(atPath: path) { return true }
        }
        return false
    }
}
