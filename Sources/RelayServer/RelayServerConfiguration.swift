import RelayConsole
import RelayCore
import RelayProtocol
import RedisClient
import SQLite
import WebSocketTransport

/// Everything `watchrelay serve` can be told.
public struct RelayServerConfiguration: Sendable {
    /// Interface to bind. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// Port; 0 picks a free one. Default 8765.
    public var port = 8765
    /// SQLite database file. Default `watchrelay-relay.db`.
    public var databasePath = "watchrelay-relay.db"
    /// Keep the durable state in this Redis instead of SQLite (`--store redis://…`); nil (the
    /// default) uses the SQLite file at ``databasePath``.
    public var redis: RedisEndpoint?
    /// With ``redis``: run as a node of the cluster on that Redis (a leader lease, fencing,
    /// forwarding; docs/REDIS.md). nil: the only relay on that Redis, unguarded (the CLI's
    /// `--single-node`). `watchrelay serve --store` sets it by default.
    public var cluster: ClusterConfiguration?
    /// `synchronous` of the store: `.full` fsyncs every group commit (default).
    public var synchronous: SQLiteDatabase.Synchronous = .full
    /// PEM certificate and key: serve `wss://` and `https://`.
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    /// Hard cap on one WebSocket message. Default 1 MiB.
    public var maxFrameBytes = Limits.defaultMaxFrameBytes
    /// Bytes queued to one slow connection before it is closed with 1008. Default 8 MiB.
    public var maxQueuedBytesPerConnection = 8 << 20
    /// lws's per-connection receive buffer and largest read (``ServerConfiguration/receiveBufferBytes``).
    /// Default 16384.
    public var receiveBufferBytes = ServerConfiguration.defaultReceiveBufferBytes
    /// What ``receiveBufferBytes`` may be.
    public static let receiveBufferRange = ServerConfiguration.receiveBufferRange
    /// Proxies whose `X-Forwarded-For` names the client (``ServerConfiguration/trustedProxies``;
    /// `serve --trusted-proxy`): per-address limits then count the clients behind them.
    public var trustedProxies: Set<String> = []
    /// `text` if it is an IPv4 or IPv6 address, in the form the transport reports peers in (as
    /// ``trustedProxies`` holds them); nil otherwise.
    public static func ipAddress(_ text: String) -> String? { ServerConfiguration.plainIPAddress(text) }
    /// Ping a silent connection after this many seconds; hang up 10 s later. Default 30.
    public var pingAfterSeconds = 30
    public var hangupAfterSeconds = 40
    /// The relay's rules and limits; payloads of queued items load on demand from the store.
    public var relay = RelayConfiguration(loadsPayloadsOnDemand: true)
    /// `serve --console`: the browser console and fault API at `/console` (off when nil).
    public var console: ConsoleConfiguration?
    /// Tests only (`@testable`): runs on a cluster node's loader thread as it starts, before it
    /// reads the state from Redis. A test holds a load there, as a large store's takes long, to
    /// see the lease renewed meanwhile, or learns which thread loads (ClusterTests).
    var clusterLoadHook: (@Sendable () -> Void)?

    public init() {}

    /// The URL clients connect to (an IPv6 address in brackets: `ws://[::1]:8765/v1`).
    func url(port: Int) -> String {
        "\(tlsCertificatePath == nil ? "ws" : "wss")://\(ConsoleConfiguration.urlHost(host)):\(port)/v1"
    }
}
