import Foundation
import Primitives
import RedisClient
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
    /// The engine and its committer of a single node (nil for a cluster node).
    private let engine: RelayEngine?
    private let committer: Committer?
    /// A cluster node's handler and lease thread (nil for a single node).
    private let node: (handler: ClusterNode, leadership: ClusterLeadership, subscriber: RedisSubscriber)?
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
        if let redis = configuration.redis, let cluster = configuration.cluster {
            return try await startNode(
                configuration, redis: redis, cluster: cluster, console: hub.map { ($0, consoleHandler) },
                environment: environment, clock: clock, log: log)
        }
        // On a thread of its own: a Redis store blocks its caller until Redis answers (up to its
        // timeout), and this task runs on the cooperative pool.
        let (storage, core) = try await onOwnThread {
            let storage = try configuration.openStorage(log: log)
            return (storage, try configuration.loadCore(from: storage, environment: environment, now: clock.now()))
        }
        let metrics = RelayMetrics()
        let engine = RelayEngine(
            core: core, metrics: metrics, clock: clock, log: log, console: hub,
            maxQueuedBytesPerConnection: configuration.maxQueuedBytesPerConnection)
        // The committer's confirmations go back to the engine through the transport's inbox.
        let mailbox = LockedState<WebSocketServer?>(nil)
        let committer = Committer.posting(storage: storage, log: log) { mailbox.withLock { $0 }?.post($0) ?? false }
        engine.attach(committer: committer)
        let transport: WebSocketServer
        do {
            transport = try WebSocketServer(
                configuration: configuration.serverConfiguration(metrics: metrics, hub: hub, consoleHandler: consoleHandler),
                handler: engine)
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
            "relay listening", ("url", server.url), ("store", configuration.storeDescription), ("pairs", String(core.pairCount)))
        return server
    }

    init(
        transport: WebSocketServer, engine: RelayEngine?, committer: Committer?,
        node: (handler: ClusterNode, leadership: ClusterLeadership, subscriber: RedisSubscriber)? = nil,
        metrics: RelayMetrics, url: String, console: ConsoleHub?, consoleURL: String?, log: Logger
    ) {
        self.node = node
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
        await committer?.stop()
        if let node {
            await node.subscriber.close()
            // Commits what the leader's engine handed over last, then releases the lease.
            await node.leadership.stop()
            await node.handler.closePublisher()
        }
        log.info("relay stopped")
    }

    /// Counts for tests and scenarios: live connections, pairs, queued durable items.
    public var stats: (connections: Int, pairs: Int, queued: Int) {
        get async {
            if let engine {
                let stats = await engine.stats(via: transport)
                return (stats.connections, stats.pairs, stats.queued)
            }
            let stats = await RelayEngine.StatsRequest.ask(transport, otherwise: RelayEngine.noStats)
            return (stats.connections, stats.pairs, stats.queued)
        }
    }
}

/// Runs `body` on a thread of its own and returns its result: blocking work (loading the store)
/// that must not hold a cooperative-pool thread while it waits.
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread.named("relay-load") { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}
