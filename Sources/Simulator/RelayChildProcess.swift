import Foundation
import GitHubAPI
import RedisClient
import RelayConsole
import RelayServer
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `watchrelay serve` as a real child process, for `simulate --processes`: stopping it is a
/// SIGKILL (a crash); its counters come from its console's events.
final class RelayChildProcess: ScenarioRelay {
    private let process: ChildProcess
    /// `ws://127.0.0.1:PORT/v1`, as the relay printed it.
    let url: String
    /// The port it listens on.
    let port: Int
    /// Its cluster node's id, if it is one.
    private let nodeID: String?

    /// Starts `executable serve` on `port` (0: any) with `database` (and its console with
    /// `consoleToken`; `--context-bytes` with `contextBytes`; as a node of a cluster with
    /// `node`); returns once it printed its URL.
    static func start(
        executable: String, port: Int, database: String, consoleToken: String? = nil, contextBytes: Int? = nil,
        node: ClusterScenarioRelay.Node? = nil
    ) async throws -> RelayChildProcess {
        // Its first line is its URL; later lines are not kept.
        let (lines, output) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(1))
        let console = consoleToken.map { ["--console", "--console-token", $0] } ?? []
        let limits = contextBytes.map { ["--context-bytes", String($0)] } ?? []
        // A node on Redis keeps nothing in `database` (--db and --sync do not go with --store).
        let store =
            node.map { ["--store", $0.redisURL, "--node-id", $0.id, "--lease-ttl-ms", String($0.leaseTTLMilliseconds)] }
            ?? ["--db", database, "--sync", "normal"]
        let process = try ChildProcess(
            name: "relay", executable: executable,
            arguments: [
                "serve", "--port", String(port), "--reply-timeout-ms", String(ScenarioRunner.replyTimeoutMilliseconds),
                "--pairing-code-ttl-s", "1", "--log-level", "error", "--exit-on-stdin-eof",
            ] + console + limits + store,
            logPath: database + (node.map { ".\($0.id)" } ?? "") + ".stderr.log",
            onLine: { line in output.yield(line) }, onEnd: { output.finish() })
        // Awaited: the line, or the end of its output (it exited), or one 15 s deadline timer.
        let first = await withTaskGroup(of: String?.self) { group in
            group.addTask { await lines.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(15))
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        guard let text = first, text.hasPrefix("ws"), let bound = URL(string: text)?.port else {
            await process.kill()
            var record = process.record
            record.node = node?.id
            throw RelayStartFailure(
                error: StepFailure(
                    expected: "`watchrelay serve` to print its URL",
                    seen: "nothing (\(executable)) \(process.termination ?? "") \(process.stderrTail())"),
                records: [record])
        }
        return RelayChildProcess(process: process, url: text, port: bound, nodeID: node?.id)
    }

    private init(process: ChildProcess, url: String, port: Int, nodeID: String?) {
        self.process = process
        self.url = url
        self.port = port
        self.nodeID = nodeID
    }

    /// SIGKILL, then waits until the process is reaped.
    func stop() async {
        await process.kill()
    }

    var records: [ChildProcessRecord] {
        var record = process.record
        record.node = nodeID
        return [record]
    }
}

/// The relay in this process: ``RelayServer`` with the scenarios' short timeouts.
struct InProcessRelay: ScenarioRelay {
    let server: RelayServer

    static func start(
        port: Int, database: String, consoleToken: String? = nil, contextBytes: Int? = nil,
        node: ClusterScenarioRelay.Node? = nil
    ) async throws -> InProcessRelay {
        var c = RelayServerConfiguration()
        if let node {
            c.redis = try RedisEndpoint(url: node.redisURL)
            c.cluster = ClusterConfiguration(nodeID: node.id, leaseTTLMilliseconds: node.leaseTTLMilliseconds)
        }
        c.console = consoleToken.map { ConsoleConfiguration(token: $0) }
        c.port = port
        c.databasePath = database
        c.synchronous = .normal
        c.relay.limits = ScenarioRunner.relayLimits(contextBytes: contextBytes)
        c.relay.pairingCodeTTLms = 1500
        return InProcessRelay(server: try await RelayServer.start(c, log: .silent))
    }

    var url: String { server.url }
    var port: Int { server.port }
    var records: [ChildProcessRecord] { [] }
    func stop() async { await server.shutdown() }
}
