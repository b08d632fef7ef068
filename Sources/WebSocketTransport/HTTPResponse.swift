/// A handler for one plain-HTTP route of a ``WebSocketServer``.
///
/// - Important: It runs on the lws service thread, which serves every connection of the server:
///   it must return quickly, must not block or await, and must be thread-safe.
public typealias HTTPRouteHandler = @Sendable () -> HTTPResponse

/// A complete plain-HTTP response served on the WebSocket port (health checks, metrics).
public struct HTTPResponse: Sendable, Equatable {
    /// The HTTP status code, e.g. 200.
    public var status: Int
    /// The `Content-Type` header value.
    public var contentType: String
    /// The body bytes, sent with a `Content-Length` header.
    public var body: [UInt8]
    /// Further headers (e.g. `ETag`, `Link`); names are sent lowercased.
    public var headers: [HTTPHeader]
    /// For a streaming response (server-sent events): the open-ended body, sent as the producer
    /// writes it, with no `Content-Length`; `body` is then ignored.
    public var stream: HTTPStream?

    /// Creates a response from its parts.
    public init(
        status: Int = 200, contentType: String = "text/plain; charset=utf-8", body: [UInt8], headers: [HTTPHeader] = []
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// Creates a `text/plain` UTF-8 response.
    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(text.utf8))
    }

    /// A `text/event-stream` response (server-sent events) whose body is `stream`.
    public static func eventStream(_ stream: HTTPStream) -> HTTPResponse {
        var response = HTTPResponse(
            contentType: "text/event-stream", body: [], headers: [HTTPHeader(name: "Cache-Control", value: "no-store")])
        response.stream = stream
        return response
    }

    /// The answer for a path with no route.
    static let notFound = HTTPResponse.text("not found\n", status: 404)

    /// The status as lws wants it; an out-of-range status becomes 500.
    var lwsStatus: UInt32 {
        (100...599).contains(status) ? UInt32(status) : 500
    }
}
