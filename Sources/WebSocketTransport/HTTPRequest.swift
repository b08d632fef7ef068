/// A plain-HTTP request to a ``WebSocketServer``, as the generic handler sees it.
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `HEAD`, `POST`, `PUT`, `DELETE`, `PATCH` or `OPTIONS`.
    public var method: String
    /// The URI path, e.g. `/users/octocat/repos`.
    public var path: String
    /// The query string without `?`, arguments joined with `&` (e.g. `page=2&per_page=100`).
    public var query: String
    /// The query's arguments, one per `&` of the URL, each percent-decoded (`a=1%262` is the one
    /// argument `a=1&2`): what ``queryItems`` reads, so a decoded `&` stays in its value.
    public var arguments: [String]
    /// The request headers the server reads, by lowercased name: `authorization`,
    /// `if-none-match`, `accept`, `user-agent`, `host`.
    public var headers: [String: String]

    /// Creates a request from its parts; without `arguments`, the query split at each `&`.
    public init(
        method: String, path: String, query: String = "", arguments: [String]? = nil, headers: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.arguments = arguments ?? query.split(separator: "&").map(String.init)
        self.headers = headers
    }

    /// The query's arguments as name → value (the last one wins); `=x` has the empty name.
    public var queryItems: [String: String] {
        var out: [String: String] = [:]
        for part in arguments where !part.isEmpty {
            // Empty pieces kept: an argument `=` is two of them, where dropping them left none
            // to index (a `GET /console?=` stopped the relay: index out of range).
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            out[String(pieces[0])] = pieces.count > 1 ? String(pieces[1]) : ""
        }
        return out
    }
}

/// A handler for any plain-HTTP request no route matched (e.g. the fixture GitHub server).
///
/// - Important: Runs on the lws service thread: fast, non-blocking, thread-safe.
public typealias HTTPRequestHandler = @Sendable (HTTPRequest) -> HTTPResponse
