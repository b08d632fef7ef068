import Foundation
import RedisClient

#if canImport(Glibc)
    import Glibc
#endif

/// A `redis-server` child for a test: 127.0.0.1 on a free port, its data in a temporary
/// directory, `appendonly yes` with `appendfsync always` (what the relay's runbook asks for),
/// no RDB snapshots. ``kill9()`` and ``restart()`` keep the directory, so a restarted server
/// loads the append-only file the killed one wrote.
public final class RedisServerProcess: @unchecked Sendable {
    // @unchecked: `process` is replaced only by the owning test task (restart), one call at a time.
    private var process: TestProcess?
    /// The port, the same across restarts.
    public let port: Int
    /// Where the append-only file lives.
    public let directory: TemporaryDirectory

    /// `redis://127.0.0.1:PORT/0`.
    public var url: String { "redis://127.0.0.1:\(port)/0" }
    public var endpoint: RedisEndpoint { RedisEndpoint(host: "127.0.0.1", port: port) }

    /// Starts a server and returns once it answers `PING`.
    public static func start() async throws -> RedisServerProcess {
        var lastError: (any Error)?
        // A port found free can be taken before redis binds it (parallel tests): try another.
        for _ in 0..<5 {
            // Bound once by the kernel's choice, released when the ClosedPort goes.
            let port = try ClosedPort().port
            let server = RedisServerProcess(port: port, directory: TemporaryDirectory())
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
                await server.kill9()
            }
        }
        throw lastError ?? TestFailure("redis-server did not start")
    }

    private init(port: Int, directory: TemporaryDirectory) {
        self.port = port
        self.directory = directory
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The server's process id while it runs (a test stops it with SIGSTOP to stall every client).
    public var processIdentifier: Int32? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    /// SIGKILL, then waits (without blocking a thread) until the server is gone.
    public func kill9() async {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await waitForExit(process)
        self.process = nil
    }

    /// Starts the server again on the same port and directory (after ``kill9()``).
    public func restart() async throws {
        await kill9()
        try await launch()
    }

    /// `SHUTDOWN` (the child inherits the test process's blocked SIGTERM, so no signal but
    /// SIGKILL reaches it), then SIGKILL if it still runs; waits until the server exited.
    public func stop() async {
        guard let process, process.isRunning else { return }
        let client = RedisClient(endpoint: endpoint, timeoutMilliseconds: 1000)
        _ = await client.execute([RedisCommand("SHUTDOWN")])
        await client.close()
        await kill9()
    }

    private func launch() async throws {
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: try Self.binary())
        p.arguments = [
            "--bind", "127.0.0.1", "--port", String(port), "--dir", directory.path, "--appendonly", "yes",
            "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", directory.path("redis.log"),
        ]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let client = RedisClient(endpoint: endpoint, timeoutMilliseconds: 1000)
        let deadline = ContinuousClock.now + .seconds(20 * timeoutScale)
        var ready = false
        while !ready, p.isRunning, ContinuousClock.now < deadline {
            // LOADING while it replays the append-only file; ready once PING answers PONG, from
            // this server: a parallel test's redis-server may hold the port this one could not
            // bind, and answer until this one exits; its `dir` is another test's directory.
            if case .success(.status("PONG")) = await client.execute([RedisCommand("PING")])[0] {
                guard case .success(let reply) = await client.execute([RedisCommand("CONFIG", "GET", "dir")])[0],
                    reply.elements?.last?.text.map({ URL(fileURLWithPath: $0).resolvingSymlinksInPath().path })
                        == URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
                else {
                    await client.close()
                    throw TestFailure("port \(port) is another redis-server's")
                }
                ready = true
            } else {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        await client.close()
        if ready { return }
        guard p.isRunning else { throw TestFailure("redis-server exited at start (port \(port) taken?)") }
        throw TestFailure("redis-server on port \(port) did not answer PING within \(20 * timeoutScale) s")
    }

    private static func binary() throws -> String {
        for path in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw TestFailure("redis-server is not installed (scripts/install-deps.sh installs it)")
    }
}
