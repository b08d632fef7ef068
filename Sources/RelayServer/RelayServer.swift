import Primitives
import RelayConsole
import RelayCore
import RelayProtocol
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
    private let committer: Committer
    private let log: Logger
    private var stopping = false

    /// Loads the store at `configuration.databasePath`, listens, and starts serving.
    public static func start(
        _ configuration: RelayServerConfiguration, environment: RelayEnvironment = .live,
        clock: Clock = .system, log: Logger = Logger()
    ) async throws -> RelayServer {
        let hub = try configuration.console.map { (console) throws(ConsoleError) in
            try console.check(host: configuration.host, tls: configuration.tlsCertificatePath != nil)
            return ConsoleHub(configuration: console, log: { message, fields in log.log(.info, message, fields) })
        }
        var consoleHandler: HTTPRequestHandler?
        if let hub {
            let routes = ConsoleRoutes(hub: hub, clock: { clock.now() })
            consoleHandler = { request in routes.handle(request) ?? .text("not found\n", status: 404) }
        }
        let storage = try configuration.openStorage(log: log)
        // Unsent payloads stay in the store when they load on demand: memory is bounded by the
        // delivery windows, not by what is queued, from the start.
        let pairs =
            configuration.relay.loadsPayloadsOnDemand
            ? try storage.loadIndex(now: clock.now()) : try storage.loadAll(now: clock.now())
        let metrics = RelayMetrics()
        let core = RelayState(configuration: configuration.relay, environment: environment, pairs: pairs)
        let engine = RelayEngine(core: core, metrics: metrics, clock: clock, log: log, console: hub)
        // The committer's confirmations go back to the engine through the transport's inbox.
        let mailbox = LockedState<WebSocketServer?>(nil)
        let committer = Committer(
            storage: storage, log: log,
            committed: { ticket, mutations in
                _ = mailbox.withLock { $0 }?.post(RelayEngine.Committed(ticket: ticket, mutations: mutations))
            },
            failed: { ticket in _ = mailbox.withLock { $0 }?.post(RelayEngine.CommitFailing(ticket: ticket)) },
            loaded: { read, payloads in
                _ = mailbox.withLock { $0 }?.post(
                    RelayEngine.PayloadsLoaded(pair: read.pair, direction: read.direction, payloads: payloads))
            })
        engine.attach(committer: committer)
        let transport: WebSocketServer
        do {
            transport = try WebSocketServer(
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
                    httpHandler: consoleHandler), handler: engine)
        } catch {
            await committer.stop()
            throw error
        }
        mailbox.withLock { $0 = transport }
        // Only now: a confirmation posted before the mailbox had the transport would be lost.
        committer.start()
        let consoleURL = configuration.console?.url(
            host: configuration.host, port: transport.port, tls: configuration.tlsCertificatePath != nil)
        let server = RelayServer(
            transport: transport, engine: engine, committer: committer, metrics: metrics,
            url: configuration.url(port: transport.port), console: hub, consoleURL: consoleURL, log: log)
        log.info(
            "relay listening", ("url", server.url), ("store", configuration.storeDescription), ("pairs", String(pairs.count)))
        return server
    }

    private init(
        transport: WebSocketServer, engine: RelayEngine, committer: Committer, metrics: RelayMetrics, url: String,
        console: ConsoleHub?, consoleURL: String?, log: Logger
    ) {
        self.console = console
        self.consoleURL = consoleURL
        self.transport = transport
        self.engine = engine
        self.committer = committer
        self.metrics = metrics
        self.port = transport.port
        self.url = url
        self.log = log
    }

    /// Closes every client with 1001, commits what is pending, and stops.
    public func shutdown() async {
        guard !stopping else { return }
        stopping = true
        log.info("relay shutting down")
        await transport.shutdown()
        // The engine handed its last batch to the committer when the context went away.
        await committer.stop()
        log.info("relay stopped")
    }

    /// Counts for tests and scenarios: live connections, pairs, queued durable items.
    public var stats: (connections: Int, pairs: Int, queued: Int) {
        get async {
            let stats = await engine.stats(via: transport)
            return (stats.connections, stats.pairs, stats.queued)
        }
    }
}
