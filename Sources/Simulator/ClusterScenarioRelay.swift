import RelayConsole

/// The relay of `simulate --cluster`: two nodes, `a` and `b`, on one redis-server
/// (docs/REDIS.md, "Several nodes"). Phones connect to `a`, watches to `b`, so every frame
/// between a phone and its watch crosses nodes; `a` starts first and so leads after a clean
/// start. Both nodes run in this process (two ``RelayServer``s) or as `watchrelay serve
/// --store redis://…` children (`--processes`), each with its console: the counters and the
/// faults are the leading node's, whichever that is after a restart.
///
/// Stopping it stops both nodes (in-process cleanly, releasing the lease; children by
/// SIGKILL, so a restarted cluster waits out the dead leader's lease, ``leaseTTLMilliseconds``,
/// with its clients closed with 1001 until then). Redis is the store and stays up.
struct ClusterScenarioRelay: ScenarioRelay {
    /// How a node joins: the Redis, its id, the lease.
    struct Node: Sendable {
        let redisURL: String
        let id: String
        let leaseTTLMilliseconds: Int
    }

    /// The nodes' ids, in start order: phones on the first, watches on the second.
    static let nodeIDs = ["a", "b"]
    /// Short, so a cluster restarted after SIGKILL leads again within a scenario's waits;
    /// renewed every third of it.
    static let leaseTTLMilliseconds = 1000

    let nodes: [any ScenarioRelay]

    /// Starts the nodes in order on `ports` (0 or missing: any), each with `database` as its
    /// `--db` (unused with Redis), its console on `consoleToken` and `contextBytes` (nil: the
    /// default); as children of `executable` when one is given.
    static func start(
        redisURL: String, ports: [Int], database: String, consoleToken: String, contextBytes: Int? = nil,
        executable: String?
    ) async throws -> ClusterScenarioRelay {
        var nodes: [any ScenarioRelay] = []
        do {
            for (i, id) in nodeIDs.enumerated() {
                let node = Node(redisURL: redisURL, id: id, leaseTTLMilliseconds: leaseTTLMilliseconds)
                let port = i < ports.count ? ports[i] : 0
                if let executable {
                    nodes.append(
                        try await RelayChildProcess.start(
                            executable: executable, port: port, database: database, consoleToken: consoleToken,
                            contextBytes: contextBytes, node: node))
                } else {
                    nodes.append(
                        try await InProcessRelay.start(
                            port: port, database: database, consoleToken: consoleToken, contextBytes: contextBytes, node: node))
                }
            }
        } catch {
            // The nodes started go, and so does the run's record of them: they are in the report.
            for node in nodes.reversed() { await node.stop() }
            throw RelayStartFailure.wrapping(error, records: nodes.flatMap(\.records))
        }
        return ClusterScenarioRelay(nodes: nodes)
    }

    var url: String { nodes[0].url }
    var watchURL: String { nodes[1].url }
    var port: Int { nodes[0].port }
    var ports: [Int] { nodes.map(\.port) }
    var records: [ChildProcessRecord] { nodes.flatMap(\.records) }

    func consolePort(of state: ConsoleJSON.State) -> Int {
        guard let id = state.node?.id, let i = Self.nodeIDs.firstIndex(of: id) else { return port }
        return nodes[i].port
    }

    /// The edge first, then the leader (which releases its lease on a clean shutdown).
    func stop() async {
        for node in nodes.reversed() { await node.stop() }
    }
}

/// A relay that did not start, with the child processes it started and ended on the way (a
/// cluster's first node, a `serve` that exited): the run reports them as it does every other.
struct RelayStartFailure: Error {
    /// Why it did not start.
    let error: any Error
    /// The processes it ran, ended.
    let records: [ChildProcessRecord]

    /// `error` with `records` added to those it carries already.
    static func wrapping(_ error: any Error, records: [ChildProcessRecord]) -> RelayStartFailure {
        guard let inner = error as? RelayStartFailure else { return RelayStartFailure(error: error, records: records) }
        return RelayStartFailure(error: inner.error, records: records + inner.records)
    }
}
