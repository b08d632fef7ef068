import Foundation
import Primitives

/// `redis-server` for `simulate --cluster`: on 127.0.0.1 and a free port, its append-only file
/// (`appendfsync always`, as docs/REDIS.md asks) in the run's directory. It is the cluster's
/// store, so it lives for the whole run: a relay `stop`/`restart` stops the nodes, not Redis.
///
/// It ends with this process however this process ends (as the relays do with
/// `--exit-on-stdin-eof`): Redis has no such option, so a small `sh` starts a watcher that
/// holds the child's standard input and SIGKILLs the server at its end of file (this process
/// gone, or ``stop()``), then `exec`s the server, which keeps the child's pid.
final class RedisChildProcess: Sendable {
    private let process: ChildProcess
    /// The port it listens on.
    let port: Int

    /// `redis://127.0.0.1:PORT/0`.
    var url: String { "redis://127.0.0.1:\(port)/0" }

    /// Debian's `redis-server` (package `redis-server`; `make test` installs it).
    static let binary = "/usr/bin/redis-server"

    /// Starts a server with its data in `directory`; returns once it logged that it accepts
    /// connections. A port taken between the pick and the bind is tried again with another.
    static func start(directory: String) async throws -> RedisChildProcess {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw StepFailure(expected: "\(binary) for a cluster (apt-get install redis-server)", seen: "no such program")
        }
        var seen = ""
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            // Redis logs to standard output; the one line wanted is its readiness.
            let (lines, output) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(1))
            let process = try ChildProcess(
                name: "redis", executable: "/bin/sh",
                arguments: [
                    "-c", watchedServer, "redis", "--bind", "127.0.0.1", "--port", String(port), "--dir", directory,
                    "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--appendfilename", "cluster.aof",
                ],
                logPath: directory + "/redis.stderr.log",
                onLine: { line in if line.contains("Ready to accept connections") { output.yield(line) } },
                onEnd: { output.finish() })
            let (ready, _) = await lines.first(within: 15) { $0 }
            if ready != nil { return RedisChildProcess(process: process, port: port) }
            await Self.end(process)
            seen = "\(process.termination ?? "no readiness within 15 s") \(process.stderrTail())"
        }
        throw StepFailure(expected: "redis-server to start", seen: seen)
    }

    /// fd 3 keeps the child's standard input for the watcher (an asynchronous list's own
    /// standard input is /dev/null); `$$` is the shell's pid, which `exec` hands to the server.
    /// The watcher kills it only while it is still the watcher's parent (field 4 of
    /// /proc/self/stat): once the server is gone the watcher is someone else's child, and the
    /// pid may be another process's.
    private static let watchedServer = """
        exec 3<&0; { cat <&3 >/dev/null; read -r _ _ _ parent _ </proc/self/stat; [ "$parent" = "$$" ] && kill -9 $$; } \
        >/dev/null 2>&1 & exec 3<&- </dev/null; exec \(binary) "$@"
        """

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// What became of it, for the run's report.
    var record: ChildProcessRecord { process.record }

    /// Ends the server (nothing of a finished run is kept) and waits until it is reaped.
    func stop() async {
        await Self.end(process)
    }

    /// Closes the server's standard input, so its watcher SIGKILLs it while the pid is surely
    /// its own; SIGKILL from here only if it still runs 5 s later.
    private static func end(_ process: ChildProcess) async {
        process.closeInput()
        await process.waitForEnd(grace: .seconds(5))
        await process.kill()
    }
}
