import RelayConsole
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
    /// `http://host:port/console?token=…` when started with a console.
    public nonisolated let consoleURL: String?
    /// The console's state and fault plan, when started with one.
    public nonisolated let console: ConsoleHub?

    private let transport: WebSocketServer
    private let engine: RelayEngine
    private let store: RelayStore
    private let log: Logger
    private var tasks: [Task<Void, Never>] = []
    private var stopping = false

    /// Loads the store at `configuration.databasePath`, listens, and starts serving.
    public static func start(
        _ configuration: RelayServerConfiguration, environment: RelayEnvironment = .live,
        clock: RelayClock = .system, log: Logger = Logger()
    ) async throws -> RelayServer {
        let hub = try configuration.console.map { (console) throws(ConsoleError) in
            try console.check(host: configuration.host, tls: configuration.tlsCertificatePath != nil)
            return ConsoleHub(configuration: console, log: { message, fields in log.log(.info, message, fields) })
        }
        let store = try RelayStore(path: configuration.databasePath, synchronous: configuration.synchronous)
        let pairs = try await store.load(now: clock.now())
        let metrics = RelayMetrics()
        var consoleHandler: HTTPRequestHandler?
        if let hub {
            let routes = ConsoleRoutes(hub: hub, clock: { clock.now() })
            consoleHandler = { request in routes.handle(request) ?? .text("not found\n", status: 404) }
        }
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
                            status: 200, contentType: "text/plain; version=0.0.4",
                            body: Array((metrics.render() + (hub?.renderMetrics() ?? "")).utf8))
                    },
                ],
                httpHandler: consoleHandler))
        let core = RelayState(configuration: configuration.relay, environment: environment, pairs: pairs)
        let engine = RelayEngine(core: core, transport: transport, metrics: metrics, clock: clock, log: log, console: hub)
        let consoleURL = configuration.console?.url(
            host: configuration.host, port: transport.port, tls: configuration.tlsCertificatePath != nil)
        let server = RelayServer(
            transport: transport, engine: engine, store: store, metrics: metrics,
            url: configuration.url(port: transport.port), console: hub, consoleURL: consoleURL, log: log)
        await server.startTasks()
        log.info(
            "relay listening", ("url", server.url), ("db", configuration.databasePath), ("pairs", String(pairs.count)))
        return server
    }

    private init(
        transport: WebSocketServer, engine: RelayEngine, store: RelayStore, metrics: RelayMetrics, url: String,
        console: ConsoleHub?, consoleURL: String?, log: Logger
    ) {
        self.console = console
        self.consoleURL = consoleURL
        self.transport = transport
        self.engine = engine
        self.store = store
        self.metrics = metrics
        self.port = transport.port
        self.url = url
        self.log = log
    }

    private func startTasks() {
        let transport = transport
        let engine = engine
        let store = store
        let log = log
        // Events in order, one at a time, into the engine.
        tasks.append(Task { await engine.consume(transport.eventBatches) })
        // Group commits: whatever piled up during the previous commit goes in one transaction.
        tasks.append(
            Task {
                while let batch = await engine.takeBatch() {
                    var attempt = 0
                    while true {
                        do {
                            try await store.commit(batch.mutations, urgent: batch.urgent)
                            break
                        } catch {
                            attempt += 1
                            log.error("store commit failed", ("error", "\(error)"), ("attempt", String(attempt)))
                            try? await Task.sleep(for: .milliseconds(min(1000, 50 * attempt)))
                        }
                    }
                    await engine.committed(batch.ticket, mutations: batch.mutations.count)
                }
            })
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
        // The event task ends when the transport's stream finishes; the committer drains.
        await tasks[0].value
        await tasks[1].value
        tasks[2].cancel()
        await tasks[2].value
        log.info("relay stopped")
    }

    /// Counts for tests and scenarios: live connections, pairs, queued durable items.
    public var stats: (connections: Int, pairs: Int, queued: Int) {
        get async { await engine.stats }
    }
}
