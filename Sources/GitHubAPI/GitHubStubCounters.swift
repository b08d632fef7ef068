import WebSocketTransport

/// What the fixture server has answered, for tests and the CLI's summary.
public struct GitHubStubCounters: Sendable, Hashable {
    /// Every request received.
    public var requests = 0
    /// The requests charged against the rate limit (every answer except rate-limit refusals and
    /// a 304 to a request with `Authorization`).
    public var charged = 0
    /// Answers by HTTP status.
    public var statuses: [Int: Int] = [:]
    /// Requests by path (no query).
    public var paths: [String: Int] = [:]
    /// The `Authorization` header of the last request (`nil` if it had none).
    public var lastAuthorization: String?
    /// The `User-Agent` header of the last request.
    public var lastUserAgent: String?
    /// The `Accept` header of the last request.
    public var lastAccept: String?
    /// The `If-None-Match` header of the last request.
    public var lastIfNoneMatch: String?

    /// Creates empty counters.
    public init() {}

    /// The answers with this status.
    public func count(status: Int) -> Int { statuses[status, default: 0] }

    /// The 304 Not Modified answers (revalidations: free with `Authorization`).
    public var notModified: Int { count(status: 304) }

    /// The rate-limit refusals (403 over the primary limit, 429 for a secondary one).
    public var rateLimited = 0

    /// Records a request's headers.
    mutating func record(_ request: HTTPRequest) {
        requests += 1
        paths[request.path, default: 0] += 1
        lastAuthorization = request.headers["authorization"]
        lastUserAgent = request.headers["user-agent"]
        lastAccept = request.headers["accept"]
        lastIfNoneMatch = request.headers["if-none-match"]
    }
}
