import RelayCore
import RelayProtocol
import RelayStore
import WebSocketTransport

/// `watchrelay serve`: RelayCore + RelayStore + the lws transport, with `/healthz` and `/metrics`.
///
/// `start` loads the durable state, listens, and returns; ``shutdown()`` closes every client
/// with 1001, commits what is pending and returns once everything stopped.
public actor RelayServer {
    /// The port actually bound.
    public nonisolated let port: Int
    /// `ws://host:port/v1` (or `wss://`).
    public nonisolated let url: String
    /// Live metrics (also served at `/metrics`).
    public nonisolated let metrics: RelayMetrics

    private let transport: WebSocketServer
    private let engine: RelayEngine
    private let committer: Committer
    private let log: Logger
    private var tasks: [Task<Void, Never>] = []
    private var stopping = false

    /// Loads the store at `configuration.databasePath`, listens, and starts serving.
    public static func start(
        _ configuration: RelayServerConfiguration, environment: RelayEnvironment = .live,
        clock: RelayClock = .system, log: Logger = Logger()
    ) async throws -> RelayServer {
        let storage: any RelayStorage = try SQLiteRelayStorage(
            path: configuration.databasePath, synchronous: configuration.synchronous)
        let pairs = try storage.loadAll(now: clock.now())
        let metrics = RelayMetrics()
        let transport = try WebSocketServer(
            configuration: ServerConfiguration(
                host: configuration.host, port: configuration.port, tlsCertificatePath: configuration.tlsCertificatePath,
                tlsPrivateKeyPath: configuration.tlsPrivateKeyPath, maxMessageBytes: configuration.maxFrameBytes,
                maxQueuedBytesPerConnection: configuration.maxQueuedBytesPerConnection,
                pingAfterSeconds: configuration.pingAfterSeconds, hangupAfterSeconds: configuration.hangupAfterSeconds,
                // The contract answers invalid UTF-8 with `bad_json` and keeps the connection
                // (our parser validates it), rather than lws's close with 1007.
                validatesUTF8: false,
                httpRoutes: [
                    "/healthz": { HTTPResponse.text("ok\n") },
                    "/metrics": {
                        HTTPResponse(
                            status: 200, contentType: "text/plain; version=0.0.4", body: Array(metrics.render().utf8))
                    },
                ]))
        let core = RelayState(configuration: configuration.relay, environment: environment, pairs: pairs)
        let engine = RelayEngine(core: core, transport: transport, metrics: metrics, clock: clock, log: log)
        let committer = Committer(
            storage: storage, log: log,
            committed: { ticket, mutations in Task { await engine.committed(ticket, mutations: mutations) } },
            failed: { ticket in Task { await engine.commitFailed(ticket) } })
        await engine.attach(committer)
        let server = RelayServer(
            transport: transport, engine: engine, committer: committer, metrics: metrics,
            url: configuration.url(port: transport.port), log: log)
        await server.startTasks()
        log.info(
            "relay listening", ("url", server.url), ("db", configuration.databasePath), ("pairs", String(pairs.count)))
        return server
    }

    private init(
        transport: WebSocketServer, engine: RelayEngine, committer: Committer, metrics: RelayMetrics, url: String,
        log: Logger
    ) {
        self.transport = transport
        self.engine = engine
        self.committer = committer
        self.metrics = metrics
        self.port = transport.port
        self.url = url
        self.log = log
    }

    private func startTasks() {
        let transport = transport
        let engine = engine
        // Events in order, one at a time, into the engine (which hands batches to the committer).
        tasks.append(Task { await engine.consume(transport.eventBatches) })
        // Deadlines (reply timeouts) and gauges.
        tasks.append(
            Task {
                var n = 0
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(25))
                    n += 1
                    await engine.tick(refreshGauges: n % 20 == 0)
                }
            })
    }

    /// Closes every client with 1001, commits what is pending, and stops.
    public func shutdown() async {
        guard !stopping else { return }
        stopping = true
        log.info("relay shutting down")
        await transport.shutdown()
        // The event task ends when the transport's stream finished and every batch is committed.
        await tasks[0].value
        await committer.stop()
        tasks[1].cancel()
        await tasks[1].value
        log.info("relay stopped")
    }

    /// Counts for tests and scenarios: live connections, pairs, queued durable items.
    public var stats: (connections: Int, pairs: Int, queued: Int) {
        get async { await engine.stats }
    }
}
