import Primitives
import RedisClient
import RelayConsole
import RelayCore
import WebSocketTransport

/// Why ``RelayServer/start(_:environment:clock:log:)`` refused a configuration.
public enum RelayServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The node id or lease TTL is invalid.
    case invalidCluster(String)

    public var description: String {
        switch self {
        case .invalidCluster(let reason): "invalid cluster configuration: \(reason)"
        }
    }
}

extension RelayServer {
    /// Starts a node of the cluster on `redis`: listens, subscribes to its channel, and
    /// returns after its first lease round (it leads with its state loaded, or knows who leads).
    ///
    /// With a `console`, every engine this node runs while it leads reports to that one hub:
    /// the node's console shows the whole cluster's devices and frames and takes faults while
    /// the node leads, and no devices while it is an edge (docs/REDIS.md).
    static func startNode(
        _ configuration: RelayServerConfiguration, redis: RedisEndpoint, cluster: ClusterConfiguration,
        console: (hub: ConsoleHub, handler: HTTPRequestHandler?)?,
        environment: RelayEnvironment, clock: Primitives.Clock, log: Logger
    ) async throws -> RelayServer {
        guard cluster.isValid else {
            throw RelayServerError.invalidCluster(
                "node id '\(cluster.nodeID)' (1–64 of A–Z a–z 0–9 _ -), lease TTL \(cluster.leaseTTLMilliseconds) ms (≥ 100)")
        }
        let metrics = RelayMetrics()
        let handler = ClusterNode(
            nodeID: cluster.nodeID, publisher: RedisClient(endpoint: redis, haltsAfterFailure: true), log: log,
            console: console?.hub, clock: clock)
        let transport = try WebSocketServer(
            configuration: configuration.serverConfiguration(
                metrics: metrics, hub: console?.hub, consoleHandler: console?.handler),
            handler: handler)
        handler.attach(post: { transport.post($0) })
        // The first subscription, awaited below (no check loop).
        let (subscribed, subscribedSignal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let subscriber = RedisSubscriber(endpoint: redis, channels: [ClusterMessage.channel(of: cluster.nodeID, database: redis.database)]) { event in
            switch event {
            case .subscribed:
                // Posted before the signal, so the barrier below comes after it in the inbox.
                _ = transport.post(ClusterNode.Subscription(up: true))
                subscribedSignal.yield()
            case .disconnected:
                _ = transport.post(ClusterNode.Subscription(up: false))
            case .message(_, let payload):
                if let message = ClusterMessage(decoding: payload) {
                    _ = transport.post(ClusterNode.Inbound(message: message))
                } else {
                    log.warning("cluster: undecodable message", ("bytes", String(payload.count)))
                }
            }
        }
        let leadership = ClusterLeadership(
            context: ClusterLeadership.Context(
                configuration: configuration, endpoint: redis, environment: environment, clock: clock, log: log,
                metrics: metrics, console: console?.hub, post: { transport.post($0) }),
            nodeID: cluster.nodeID, ttlMilliseconds: cluster.leaseTTLMilliseconds)
        do {
            try await leadership.start()
            // Forwarding starts once the node hears its channel (a leader answers there).
            let heard = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await subscribed.first { _ in true } != nil }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            guard heard else { throw RelayServerError.invalidCluster("could not subscribe to \(redis) within 10 s") }
            // The subscription and the first lease round only posted what they found (to the
            // service thread's inbox, in order); a client that connected right after start
            // could be accepted in the same service turn, before those were applied, and be
            // closed as if the leader were changing (seen in ClusterTests under load). A request
            // posted after them returns once they are applied: then the node takes clients.
            _ = await RelayEngine.StatsRequest.ask(transport, otherwise: RelayEngine.noStats)
        } catch {
            await transport.shutdown()
            await subscriber.close()
            await leadership.stop()
            await handler.closePublisher()
            throw error
        }
        let consoleURL = configuration.console?.url(
            host: configuration.host, port: transport.port, tls: configuration.tlsCertificatePath != nil)
        let server = RelayServer(
            transport: transport, engine: nil, committer: nil, node: (handler, leadership, subscriber), metrics: metrics,
            url: configuration.url(port: transport.port), console: console?.hub, consoleURL: consoleURL, log: log)
        log.info(
            "relay listening", ("url", server.url), ("store", configuration.storeDescription), ("node", cluster.nodeID))
        return server
    }
}

extension RelayServerConfiguration {
    /// The transport's configuration: limits, TLS, `/healthz`, `/metrics` and the console's routes.
    func serverConfiguration(
        metrics: RelayMetrics, hub: ConsoleHub?, consoleHandler: HTTPRequestHandler?
    ) -> ServerConfiguration {
        var configuration = ServerConfiguration(
            host: host, port: port, tlsCertificatePath: tlsCertificatePath, tlsPrivateKeyPath: tlsPrivateKeyPath,
            maxMessageBytes: maxFrameBytes, maxQueuedBytesPerConnection: maxQueuedBytesPerConnection,
            pingAfterSeconds: pingAfterSeconds, hangupAfterSeconds: hangupAfterSeconds,
            // The contract answers invalid UTF-8 with `bad_json` and keeps the connection
            // (our parser validates it), rather than lws's close with 1007.
            validatesUTF8: false, receiveBufferBytes: receiveBufferBytes,
            httpRoutes: [
                "/healthz": { HTTPResponse.text("ok\n") },
                "/metrics": {
                    HTTPResponse(
                        status: 200, contentType: "text/plain; version=0.0.4",
                        body: Array((metrics.render() + (hub?.renderMetrics() ?? "")).utf8))
                },
            ],
            httpHandler: consoleHandler)
        configuration.trustedProxies = trustedProxies
        return configuration
    }
}
