import Glibc

/// Settings of a ``WebSocketServer``; every limit has a safe default.
public struct ServerConfiguration: Sendable {
    /// The address to listen on (an IP address or interface name); default `127.0.0.1`.
    public var host: String
    /// The TCP port; 0 (the default) picks an ephemeral port, reported by ``WebSocketServer/port``.
    public var port: Int
    /// The only path that accepts a WebSocket upgrade; default `/v1`.
    public var path: String
    /// The subprotocol a client must offer in `Sec-WebSocket-Protocol`; default `watchrelay.v1`.
    public var subprotocol: String
    /// PEM certificate file for `wss://`; set together with ``tlsPrivateKeyPath`` or not at all.
    ///
    /// See ``ClientConfiguration/enablesTLS`` for the lws 4.1 caveat about creating TLS contexts
    /// while `wss://` handshakes are in flight.
    public var tlsCertificatePath: String?
    /// PEM private key file for `wss://`.
    public var tlsPrivateKeyPath: String?
    /// Largest inbound message kept, in bytes (default 1 MiB); a larger one becomes `.tooLarge`.
    public var maxMessageBytes: Int
    /// Largest outbound backlog per connection, in bytes (default 8 MiB); past it the connection
    /// is closed with 1008 and its queued data dropped.
    public var maxQueuedBytesPerConnection: Int
    /// Seconds in which nothing (no message, no pong) arrived before the server pings a
    /// connection (default 30; ``KeepaliveSchedule``).
    public var pingAfterSeconds: Int
    /// Seconds in which nothing arrived before the server hangs up (default 40); must exceed
    /// ``pingAfterSeconds``.
    public var hangupAfterSeconds: Int
    /// How long ``WebSocketServer/shutdown()`` waits for clients to acknowledge close (default 1 s).
    public var shutdownGracePeriod: Duration
    /// Whether lws checks that text frames are valid UTF-8, closing with 1007 if not (default true).
    public var validatesUTF8: Bool
    /// lws's receive buffer, in bytes (default 16384, 512...32768).
    ///
    /// lws 4.1 uses this one number three ways: it allocates a buffer of this size for every
    /// connection while it is open, it reads at most this much per `recv()`, and it hands text
    /// over in RECEIVE chunks of at most this size. The per-connection buffer only holds control
    /// frame payloads (data frames are parsed in place in the thread's read buffer), so beyond
    /// one page it is never touched and costs address space, not memory: from 4 KiB up an idle
    /// connection's RSS is the same, and a larger buffer takes a large message in fewer system
    /// calls. Below 4 KiB buffers share pages: less memory per connection, more reads per
    /// message. Measured in BENCHMARKS.md ("The receive buffer").
    public var receiveBufferBytes: Int
    /// Plain HTTP routes served on the same port, keyed by exact path (e.g. `/healthz`).
    ///
    /// Any other path answers 404. - Important: handlers run on the lws service thread: they must
    /// be fast, must not block, and must be thread-safe.
    public var httpRoutes: [String: HTTPRouteHandler]
    /// Answers any plain-HTTP request that no route matched (default nil: 404).
    public var httpHandler: HTTPRequestHandler?
    /// Most bytes the server holds, over all its connections, for messages that have begun to
    /// arrive and not ended (fragments, or a frame whose header promised more). Past it the
    /// connection holding the largest such message is closed with 1013 (Try Again Later) and
    /// its bytes dropped: without it, connections that each start a message of nearly
    /// ``maxMessageBytes`` and never finish it held 1 MiB apiece (200 of them: 225 MB).
    public var maxUnfinishedMessageBytes: Int
    /// Peers (IP addresses, plain form) whose `X-Forwarded-For` names the client: a connection
    /// from one of them reports the last address of that header (the one the proxy appended)
    /// as its remote address, so per-address limits count the clients behind a proxy such as
    /// HAProxy with `option forwardfor`. Empty (the default): the TCP peer, always; a header
    /// from any other peer is ignored, since a client could write it itself.
    public var trustedProxies: Set<String> = []
    /// Set by ``WebSocketServer/init(configuration:handler:)``: events go to it, not the stream.
    var eventHandler: (any ServerEventHandler)?

    /// Creates a configuration; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        path: String = "/v1",
        subprotocol: String = ServerConfiguration.watchRelaySubprotocol,
        tlsCertificatePath: String? = nil,
        tlsPrivateKeyPath: String? = nil,
        maxMessageBytes: Int = 1 << 20,
        maxQueuedBytesPerConnection: Int = 8 << 20,
        pingAfterSeconds: Int = 30,
        hangupAfterSeconds: Int = 40,
        shutdownGracePeriod: Duration = .seconds(1),
        validatesUTF8: Bool = true,
        receiveBufferBytes: Int = ServerConfiguration.defaultReceiveBufferBytes,
        httpRoutes: [String: HTTPRouteHandler] = [:],
        httpHandler: HTTPRequestHandler? = nil,
        maxUnfinishedMessageBytes: Int = 64 << 20
    ) {
        self.host = host
        self.port = port
        self.path = path
        self.subprotocol = subprotocol
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsPrivateKeyPath = tlsPrivateKeyPath
        self.maxUnfinishedMessageBytes = maxUnfinishedMessageBytes
        self.maxMessageBytes = maxMessageBytes
        self.maxQueuedBytesPerConnection = maxQueuedBytesPerConnection
        self.pingAfterSeconds = pingAfterSeconds
        self.hangupAfterSeconds = hangupAfterSeconds
        self.shutdownGracePeriod = shutdownGracePeriod
        self.validatesUTF8 = validatesUTF8
        self.receiveBufferBytes = receiveBufferBytes
        self.httpRoutes = httpRoutes
        self.httpHandler = httpHandler
    }

    /// The default of ``receiveBufferBytes``, also the buffer of every client connection.
    public static let defaultReceiveBufferBytes = 16384

    /// The WebSocket subprotocol of the wire contract (Protocol/PROTOCOL.md), the default of
    /// both ends: the one place it is written.
    public static let watchRelaySubprotocol = "watchrelay.v1"
    /// The range of ``receiveBufferBytes``: lws reads at most its 32 KiB service buffer at once.
    public static let receiveBufferRange = 512...32768

    /// `text` if it is an IPv4 or IPv6 address, in the form peers are reported in: the system's
    /// own spelling of the address (`2001:DB8:0::5` is `2001:db8::5`), an IPv4-mapped IPv6
    /// address as plain IPv4; nil otherwise. For ``trustedProxies`` and `X-Forwarded-For`, which
    /// are compared as text with peers' addresses (a review found `--trusted-proxy 2001:DB8::5`
    /// accepted and never matched).
    public static func plainIPAddress(_ text: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return spelled(AF_INET, &v4)
        }
        guard inet_pton(AF_INET6, text, &v6) == 1, let spelled = spelled(AF_INET6, &v6) else { return nil }
        return ServiceCore.unmappingIPv4(spelled)
    }

    /// `inet_ntop`'s text for the address at `address` (of `family`).
    private static func spelled<Address>(_ family: Int32, _ address: inout Address) -> String? {
        withUnsafeBytes(of: &address) { bytes in
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { buffer -> String? in
                // Ours for this scope; inet_ntop writes a NUL-terminated string of at most its size.
                guard let base = buffer.baseAddress, inet_ntop(family, bytes.baseAddress, base, socklen_t(buffer.count)) != nil
                else { return nil }
                return String(cString: base)
            }
        }
    }

    /// Whether the server speaks TLS (`wss://`, `https://`).
    var usesTLS: Bool { tlsCertificatePath != nil }

    /// Throws ``TransportError/invalidConfiguration(_:)`` naming the first bad value.
    func validate() throws(TransportError) {
        guard !host.isEmpty else { throw .invalidConfiguration("host is empty") }
        guard (0...65535).contains(port) else { throw .invalidConfiguration("port \(port) is not 0...65535") }
        guard path.hasPrefix("/") else { throw .invalidConfiguration("path \(path) does not start with /") }
        guard Self.isToken(subprotocol) else {
            throw .invalidConfiguration("subprotocol \"\(subprotocol)\" is not an HTTP token")
        }
        guard (tlsCertificatePath == nil) == (tlsPrivateKeyPath == nil) else {
            throw .invalidConfiguration("tlsCertificatePath and tlsPrivateKeyPath must be set together")
        }
        try Self.validateLimits(maxMessageBytes: maxMessageBytes, maxQueuedBytes: maxQueuedBytesPerConnection)
        guard maxUnfinishedMessageBytes > 0 else { throw .invalidConfiguration("maxUnfinishedMessageBytes must be positive") }
        try Self.validateKeepalive(ping: pingAfterSeconds, hangup: hangupAfterSeconds)
        guard Self.receiveBufferRange.contains(receiveBufferBytes) else {
            throw .invalidConfiguration(
                "receiveBufferBytes \(receiveBufferBytes) is not \(Self.receiveBufferRange.lowerBound)...\(Self.receiveBufferRange.upperBound)")
        }
    }

    /// Checks the per-connection byte limits shared by server and client connections.
    static func validateLimits(maxMessageBytes: Int, maxQueuedBytes: Int) throws(TransportError) {
        guard maxMessageBytes > 0 else { throw .invalidConfiguration("maxMessageBytes must be positive") }
        guard maxQueuedBytes > 0 else { throw .invalidConfiguration("maxQueuedBytes must be positive") }
    }

    /// Checks the ping and hang-up times shared by server and client settings.
    static func validateKeepalive(ping: Int, hangup: Int) throws(TransportError) {
        // lws stores both in uint16_t and asserts hangup > ping.
        guard (1...65534).contains(ping) else { throw .invalidConfiguration("pingAfterSeconds must be 1...65534") }
        guard hangup > ping, hangup <= 65535 else {
            throw .invalidConfiguration("hangupAfterSeconds must be greater than pingAfterSeconds and at most 65535")
        }
    }

    /// RFC 7230 token characters, which is what a subprotocol name may contain.
    static func isToken(_ value: String) -> Bool {
        !value.isEmpty
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}

/// Settings of a ``WebSocketClientContext`` shared by all its connections.
public struct ClientConfiguration: Sendable {
    /// Seconds without a valid pong or traffic before lws pings a connection (default 30).
    public var pingAfterSeconds: Int
    /// Seconds without validity before lws hangs up (default 40); must exceed ``pingAfterSeconds``.
    public var hangupAfterSeconds: Int
    /// Seconds lws allows for each step of opening a connection: the TCP connect, the TLS
    /// handshake, and the wait for the upgrade response (default 10).
    public var connectTimeoutSeconds: Int
    /// How long ``WebSocketClientContext/shutdown()`` waits for servers to acknowledge close (default 1 s).
    public var shutdownGracePeriod: Duration
    /// Whether lws checks that text frames are valid UTF-8, closing with 1007 if not (default true).
    public var validatesUTF8: Bool
    /// Whether the context can open `wss://` connections (default true).
    ///
    /// - Important: lws 4.1 re-creates a process-global OpenSSL index each time a TLS-enabled
    ///   context (client, or server with a certificate) is created, and a `wss://` handshake in
    ///   flight on another context at that moment fails ("can't get wsi from ssl privdata").
    ///   Create TLS-enabled contexts up front, and set this to false for contexts that only use
    ///   `ws://`, so creating them never disturbs a handshake elsewhere in the process.
    public var enablesTLS: Bool

    /// Creates a configuration; every parameter has the documented default.
    public init(
        pingAfterSeconds: Int = 30,
        hangupAfterSeconds: Int = 40,
        connectTimeoutSeconds: Int = 10,
        shutdownGracePeriod: Duration = .seconds(1),
        validatesUTF8: Bool = true,
        enablesTLS: Bool = true
    ) {
        self.pingAfterSeconds = pingAfterSeconds
        self.hangupAfterSeconds = hangupAfterSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.shutdownGracePeriod = shutdownGracePeriod
        self.validatesUTF8 = validatesUTF8
        self.enablesTLS = enablesTLS
    }

    /// Throws ``TransportError/invalidConfiguration(_:)`` naming the first bad value.
    func validate() throws(TransportError) {
        guard connectTimeoutSeconds > 0 else { throw .invalidConfiguration("connectTimeoutSeconds must be positive") }
        try ServerConfiguration.validateKeepalive(ping: pingAfterSeconds, hangup: hangupAfterSeconds)
    }
}
