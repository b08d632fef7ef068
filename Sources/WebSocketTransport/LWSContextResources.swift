import CWebSockets

#if canImport(Glibc)
    import Glibc
#endif

/// C memory that lws keeps pointers to for the whole life of one context.
///
/// lws stores the protocols array (and its name strings), the retry policy, the interface and
/// TLS file strings by pointer, so all of it is allocated here on the service thread before
/// `lws_create_context` and freed by ``deallocate()`` only after `lws_context_destroy` returned.
struct LWSContextResources {
    /// Name of protocols[0] on a server: plain HTTP, and where lws binds an upgrade that
    /// offers no subprotocol (which the filter then refuses).
    static let httpProtocolName = "watchrelay-http"
    /// Name of the local protocol every client connection binds to.
    static let clientProtocolName = "watchrelay-client"

    /// Per-thread service buffer, the largest single socket read.
    static let serviceBufferSize: UInt32 = 32 << 10

    /// The protocols array, terminated by a zeroed entry.
    let protocols: UnsafeMutablePointer<lws_protocols>
    /// Entries before the terminator.
    let protocolCount: Int
    /// Index of the WebSocket protocol in ``protocols``.
    let webSocketProtocolIndex: Int
    /// The `id` of the WebSocket protocol entry. lws copies the protocols array into each vhost,
    /// so callbacks see a copy: the entry is recognised by this id, never by its address.
    static let webSocketProtocolID: UInt32 = 0x5752_5753
    /// Ping / hang-up policy of each client connection. A server's is all zeros, which turns
    /// lws's keepalive off: the server keeps its own (``KeepaliveSchedule``).
    let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    /// The timer that wakes the loop at the shutdown deadline.
    let shutdownTimer: UnsafeMutablePointer<lws_sorted_usec_list_t>
    /// The server handler's timer (``ServerEventHandler/endOfTurn(outbound:)``), with its owner.
    let handlerTimer: UnsafeMutablePointer<relay_timer>
    /// ``handlerTimer``'s sul, its first member, as lws's timer calls take it.
    var handlerTimerList: UnsafeMutablePointer<lws_sorted_usec_list_t> {
        UnsafeMutableRawPointer(handlerTimer).assumingMemoryBound(to: lws_sorted_usec_list_t.self)
    }
    /// A server's keepalive timer (``KeepaliveSchedule``), with its owner.
    let keepaliveTimer: UnsafeMutablePointer<relay_timer>
    /// ``keepaliveTimer``'s sul, as lws's timer calls take it.
    var keepaliveTimerList: UnsafeMutablePointer<lws_sorted_usec_list_t> {
        UnsafeMutableRawPointer(keepaliveTimer).assumingMemoryBound(to: lws_sorted_usec_list_t.self)
    }
    /// The libev loop the context runs on (see ``EventLoopChoice``), nil for lws's poll() loop.
    ///
    /// Owned by the service thread: created here, handed to lws as a foreign loop, run one
    /// iteration at a time by ``ServiceCore/run()`` and destroyed in ``deallocate()``.
    private(set) var eventLoop: UnsafeMutableRawPointer?
    /// The one-entry `foreign_loops` array lws reads at context creation.
    private let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// Context options (`LWS_SERVER_OPTION_*`).
    private let options: UInt64
    /// The listening port, or `CONTEXT_PORT_NO_LISTEN` for a client context.
    private let port: Int32
    private let connectTimeoutSeconds: UInt32
    /// The interface / TLS file strings for a server (`strdup`ed, in ``strings`` too).
    private let interface: UnsafeMutablePointer<CChar>?
    private let certificatePath: UnsafeMutablePointer<CChar>?
    private let privateKeyPath: UnsafeMutablePointer<CChar>?
    /// Every `strdup`ed string, freed in ``deallocate()``.
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(role: ServiceLoop.Role) {
        let names: [String]
        let ping: Int
        let hangup: Int
        var options: UInt64 = 0
        // The per-connection rx buffer lws allocates, also its largest read and RECEIVE chunk.
        var receiveBufferBytes = ServerConfiguration.defaultReceiveBufferBytes
        switch role {
        case .server(let configuration, _):
            receiveBufferBytes = configuration.receiveBufferBytes
            names = [Self.httpProtocolName, configuration.subprotocol]
            webSocketProtocolIndex = 1
            // lws's keepalive off (a zero hang-up): ServiceCore keeps its own, KeepaliveSchedule.
            (ping, hangup) = (0, 0)
            port = Int32(configuration.port)
            connectTimeoutSeconds = 0
            interface = Self.duplicate(configuration.host, into: &strings)
            options |= UInt64(LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND)
            if Self.isIPv4Literal(configuration.host) {
                // lws 4.1 with IPv6 on parses an IPv4 literal into the wrong sockaddr and listens
                // on every interface (`*:port`); with IPv6 off it binds exactly that address.
                options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
            }
            if configuration.validatesUTF8 { options |= UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) }
            if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
                options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
                certificatePath = Self.duplicate(certificate, into: &strings)
                privateKeyPath = Self.duplicate(key, into: &strings)
            } else {
                certificatePath = nil
                privateKeyPath = nil
            }
        case .client(let configuration):
            names = [Self.clientProtocolName]
            webSocketProtocolIndex = 0
            (ping, hangup) = (configuration.pingAfterSeconds, configuration.hangupAfterSeconds)
            port = CONTEXT_PORT_NO_LISTEN
            connectTimeoutSeconds = UInt32(clamping: configuration.connectTimeoutSeconds)
            (interface, certificatePath, privateKeyPath) = (nil, nil, nil)
            if configuration.enablesTLS { options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
            if configuration.validatesUTF8 { options |= UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) }
        }
        self.options = options
        protocolCount = names.count
        protocols = .allocate(capacity: names.count + 1)
        protocols.initialize(repeating: lws_protocols(), count: names.count + 1)
        for (index, name) in names.enumerated() {
            var entry = lws_protocols()
            entry.name = UnsafePointer(Self.duplicate(name, into: &strings))
            entry.callback = lwsCallback
            // Server: the ConnectionID (ws) or HTTP response ID (http). Unused by clients, which
            // keep the ID in opaque user data, but harmless.
            entry.per_session_data_size = MemoryLayout<UInt64>.size
            entry.rx_buffer_size = receiveBufferBytes
            // Without this lws caps each send() at rx_buffer_size and copies the rest of a frame
            // into its own buffer; one default fragment plus frame header fits in one send.
            entry.tx_packet_size = OutboundMessage.defaultFragmentSize + 16
            entry.id = index == webSocketProtocolIndex ? Self.webSocketProtocolID : 0
            protocols[index] = entry
        }
        retryPolicy = .allocate(capacity: 1)
        var policy = lws_retry_bo_t()
        policy.secs_since_valid_ping = UInt16(clamping: ping)
        policy.secs_since_valid_hangup = UInt16(clamping: hangup)
        retryPolicy.initialize(to: policy)
        shutdownTimer = .allocate(capacity: 1)
        shutdownTimer.initialize(to: lws_sorted_usec_list_t())
        handlerTimer = .allocate(capacity: 1)
        handlerTimer.initialize(to: relay_timer())
        keepaliveTimer = .allocate(capacity: 1)
        keepaliveTimer.initialize(to: relay_timer())
        eventLoop = EventLoopChoice.current == .libev ? relay_ev_loop_new() : nil
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: eventLoop)
    }

    /// Goes back to lws's poll() loop (after the libev plugin could not be loaded).
    /// - Returns: whether there was a libev loop to drop.
    mutating func dropEventLoop() -> Bool {
        guard let loop = eventLoop else { return false }
        relay_ev_loop_destroy(loop)
        eventLoop = nil
        foreignLoops.pointee = nil
        return true
    }

    /// Whether lws bound `wsi` to the WebSocket protocol (and not to the HTTP one).
    static func isBoundToWebSocketProtocol(_ wsi: OpaquePointer) -> Bool {
        lws_get_protocol(wsi)?.pointee.id == webSocketProtocolID
    }

    /// Builds the creation info for the role; its pointers stay valid until ``deallocate()``.
    func creationInfo(user: UnsafeMutableRawPointer) -> lws_context_creation_info {
        var info = lws_context_creation_info()
        info.protocols = UnsafePointer(protocols)
        info.user = user
        info.gid = -1
        info.uid = -1
        info.count_threads = 1
        info.pt_serv_buf_size = Self.serviceBufferSize
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        info.options = options
        if eventLoop != nil {
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = foreignLoops
        }
        info.port = port
        info.connect_timeout_secs = connectTimeoutSeconds
        // lws's other network round trips (TLS handshake, waiting for the 101) default to 5 s.
        info.timeout_secs = connectTimeoutSeconds
        info.iface = interface.map { UnsafePointer($0) }
        info.ssl_cert_filepath = certificatePath.map { UnsafePointer($0) }
        info.ssl_private_key_filepath = privateKeyPath.map { UnsafePointer($0) }
        return info
    }

    /// Frees everything; call only after `lws_context_destroy` (or a failed create) returned.
    func deallocate() {
        protocols.deinitialize(count: protocolCount + 1)
        protocols.deallocate()
        retryPolicy.deinitialize(count: 1)
        retryPolicy.deallocate()
        shutdownTimer.deinitialize(count: 1)
        shutdownTimer.deallocate()
        handlerTimer.deinitialize(count: 1)
        handlerTimer.deallocate()
        keepaliveTimer.deinitialize(count: 1)
        keepaliveTimer.deallocate()
        foreignLoops.deinitialize(count: 1)
        foreignLoops.deallocate()
        if let eventLoop { relay_ev_loop_destroy(eventLoop) }
        for string in strings { free(string) }
    }

    /// Whether `host` is a dotted IPv4 address such as `127.0.0.1`.
    static func isIPv4Literal(_ host: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1
    }

    /// A C copy of `string` owned by `strings`.
    private static func duplicate(_ string: String, into strings: inout [UnsafeMutablePointer<CChar>])
        -> UnsafeMutablePointer<CChar>
    {
        guard let copy = strdup(string) else { fatalError("strdup: out of memory") }
        strings.append(copy)
        return copy
    }
}
