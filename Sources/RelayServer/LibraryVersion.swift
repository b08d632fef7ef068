import WebSocketTransport

extension RelayServer {
    /// The libwebsockets version loaded at run time (for `--version`), so that the commands
    /// need not reach into the transport.
    public static var libwebsocketsVersion: String { LibWebSockets.version }

    /// The WebSocket subprotocol it speaks (for `--version`).
    public static var subprotocol: String { ServerConfiguration.watchRelaySubprotocol }
}
