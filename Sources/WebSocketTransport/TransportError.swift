/// The errors of the WebSocket transport; every throwing API in this module throws only these.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A configuration value is out of range or inconsistent; the text names it.
    case invalidConfiguration(String)
    /// A URL passed to ``WebSocketClientContext/connect(to:subprotocol:allowSelfSigned:maxMessageBytes:maxQueuedBytes:headers:)``
    /// is not a `ws://` or `wss://` URL with a host; the associated value says why.
    case invalidURL(String)
    /// A C call failed: the function, its return code (or errno; 0 when none says anything),
    /// and what it means.
    ///
    /// For example `lws_create_context` when the port is taken or a TLS file is unreadable.
    case libraryCall(operation: String, code: Int32, message: String)
    /// A client connection did not open; `reason` is lws's own text (e.g. `HS: ws upgrade
    /// response not 101`) or the transport's (e.g. `connection refused`).
    case connectionFailed(url: String, reason: String)
    /// The server or client context is shut down (or shutting down), so the call could not run.
    case shutDown

    /// A one-line description for logs.
    public var description: String {
        switch self {
        case .invalidConfiguration(let what): "invalid transport configuration: \(what)"
        case .invalidURL(let why): "invalid WebSocket URL: \(why)"
        case .libraryCall(let operation, let code, let message):
            code == 0 ? "\(operation) failed: \(message)" : "\(operation) failed (\(code)): \(message)"
        case .connectionFailed(let url, let reason): "connection to \(url) failed: \(reason)"
        case .shutDown: "the WebSocket transport is shut down"
        }
    }
}
