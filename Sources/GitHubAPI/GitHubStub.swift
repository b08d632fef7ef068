import Foundation
import RelayProtocol
import WebSocketTransport

/// The fixture GitHub API as a value-type state machine: a request and the time in, the
/// answer out; no sockets, no clock, no locks (``GitHubStubServer`` adds those).
///
/// It serves `GET /users/{login}`, `GET /users/{login}/repos` (and GitHub's own pagination
/// targets `GET /user/{id}` and `GET /user/{id}/repos`) from a ``GitHubFixtureCatalog`` the
/// way GitHub does:
/// - `per_page` (default 30, at most 100) and `page`, with a `Link` header (`prev`, `next`,
///   `last`, `first`) when there is more than one page;
/// - a strong `ETag` (a hash of the body) and 304 Not Modified for a matching `If-None-Match`,
///   free of rate limit only for a request with `Authorization`, as GitHub's (an anonymous 304
///   is charged, and refused with 403 once the limit is spent);
/// - `X-RateLimit-Limit`, `-Remaining`, `-Reset`, `-Used` and `-Resource` on every answer, and
///   when a ``GitHubStubRateLimit`` is set and spent, 403 with GitHub's message (no limit by
///   default: the headers then count against 5,000 and nothing is refused);
/// - 404 with GitHub's JSON body for an unknown user or path, or a method other than GET/HEAD.
/// - the API URLs in the objects (`url`, `repos_url`, …: `https://api.github.com/…` in the
///   fixture files) name the server itself, as GitHub's name the API host the client used: the
///   `Host` of the request if it is a well-formed `host[:port]`, else ``baseURL``.
///
/// ``GitHubStubFault``s make it misbehave per login or everywhere, and ``counters`` record
/// what it answered.
public struct GitHubStub: Sendable {
    /// GitHub's JSON content type.
    public static let jsonContentType = "application/json; charset=utf-8"
    /// The limit the rate-limit headers report when no ``rateLimit`` is set.
    public static let unlimitedReportedLimit = 5000
    /// The window the rate-limit headers report when no ``rateLimit`` is set.
    static let unlimitedWindowSeconds: TimeInterval = 3600

    /// The users and repositories served.
    public let catalog: GitHubFixtureCatalog
    /// The primary rate limit, or `nil` for none.
    public var rateLimit: GitHubStubRateLimit?
    /// The root of `Link` targets for a request without a well-formed `Host` header (none, or
    /// not a `host[:port]`), e.g. `http://127.0.0.1:8080`.
    public var baseURL: String
    /// What has been answered so far.
    public private(set) var counters = GitHubStubCounters()
    /// A fault for every request, over any per-login fault.
    public var globalFault: GitHubStubFault?
    /// Faults by lowercased login.
    private var faults: [String: GitHubStubFault] = [:]
    private var window: GitHubStubRateWindow?
    /// Each account's repositories encoded once, by account ID, each filled on first request.
    var encodedRepos: [Int64: [[UInt8]?]] = [:]

    /// Creates the stub.
    /// - Parameters:
    ///   - catalog: the users and repositories to serve.
    ///   - rateLimit: the primary rate limit, or `nil` (the default) for none.
    ///   - baseURL: the root of `Link` targets when a request has no well-formed `Host` header.
    public init(
        catalog: GitHubFixtureCatalog, rateLimit: GitHubStubRateLimit? = nil, baseURL: String = "http://127.0.0.1"
    ) {
        self.catalog = catalog
        self.rateLimit = rateLimit
        self.baseURL = baseURL
    }

    /// Makes every request about `login` (case-insensitive) misbehave, or behave again with `nil`.
    public mutating func setFault(_ fault: GitHubStubFault?, for login: String) {
        faults[login.lowercased()] = fault
    }

    /// Clears every fault: the global one and every login's.
    public mutating func clearFaults() {
        globalFault = nil
        faults = [:]
    }

    /// Sets the primary rate limit (`nil`: none) with a fresh window: `limit` more requests
    /// are answered from now on, whatever the current window had charged.
    public mutating func restartRateLimit(_ rateLimit: GitHubStubRateLimit?) {
        self.rateLimit = rateLimit
        window = nil
    }

    /// The fault set for `login`, if any (``globalFault`` first).
    public func fault(for login: String) -> GitHubStubFault? {
        globalFault ?? faults[login.lowercased()]
    }

    /// Zeroes the counters (the rate-limit window is kept).
    public mutating func resetCounters() {
        counters = GitHubStubCounters()
    }

    /// Answers one request at time `now`, updating counters and the rate-limit window.
    ///
    /// Header names are matched case-insensitively (the transport already lowercases them).
    public mutating func respond(to request: HTTPRequest, now: Date) -> HTTPResponse {
        var request = request
        request.headers = Dictionary(request.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        counters.record(request)
        let limit = rateLimit?.limit ?? Self.unlimitedReportedLimit
        var current = GitHubStubRateWindow.current(
            window, now: now, length: rateLimit?.windowSeconds ?? Self.unlimitedWindowSeconds)
        let routed = route(request)
        let authorized = request.headers["authorization"] != nil
        let spent = rateLimit.map { current.used >= $0.limit } ?? false
        var response: HTTPResponse
        if routed.status == 200, let etag = routed.etag, Self.matches(request.headers["if-none-match"], etag),
            authorized || !spent
        {
            // GitHub: a conditional request answered 304 does not count against the primary
            // rate limit "if … made while correctly authorized with an Authorization header";
            // an anonymous one does.
            response = HTTPResponse(
                status: 304, contentType: Self.jsonContentType, body: [],
                headers: [HTTPHeader(name: "ETag", value: etag)])
            if !authorized {
                current.used += 1
                counters.charged += 1
            }
        } else if let rateLimit, spent {
            counters.rateLimited += 1
            current.used = rateLimit.limit
            response = Self.rateLimitExceeded(authenticated: request.headers["authorization"] != nil)
        } else if case .secondaryRateLimit(let seconds)? = routed.fault {
            counters.rateLimited += 1
            response = Self.secondaryRateLimited(retryAfter: seconds)
        } else {
            current.used += 1
            counters.charged += 1
            response = routed.response
        }
        window = current
        response.headers += Self.standardHeaders(limit: limit, window: current)
        counters.statuses[response.status, default: 0] += 1
        return response
    }

    /// Whether an `If-None-Match` value (a list of ETags, or `*`) matches `etag`, weakly as RFC 9110 says.
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        let wanted = weak(etag)
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingSpaces
            return tag == "*" || weak(tag) == wanted
        }
    }

    private static func weak(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    /// The headers GitHub puts on every API answer.
    private static func standardHeaders(limit: Int, window: GitHubStubRateWindow) -> [HTTPHeader] {
        [
            HTTPHeader(name: "X-GitHub-Media-Type", value: "github.v3; format=json"),
            HTTPHeader(name: "X-GitHub-Api-Version-Selected", value: "2022-11-28"),
            HTTPHeader(name: "X-RateLimit-Limit", value: String(limit)),
            HTTPHeader(name: "X-RateLimit-Remaining", value: String(max(0, limit - window.used))),
            HTTPHeader(name: "X-RateLimit-Reset", value: String(window.resetEpochSeconds)),
            HTTPHeader(name: "X-RateLimit-Used", value: String(window.used)),
            HTTPHeader(name: "X-RateLimit-Resource", value: "core"),
            HTTPHeader(name: "Vary", value: "Accept, Authorization, Cookie, X-GitHub-OTP"),
        ]
    }

    /// GitHub's 403 for a spent primary rate limit.
    private static func rateLimitExceeded(authenticated: Bool) -> HTTPResponse {
        let who =
            authenticated
            ? "user ID 1."
            : "127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. "
                + "Check out the documentation for more details.)"
        return json(
            status: 403,
            [
                "message": .string("API rate limit exceeded for \(who)"),
                "documentation_url": .string(
                    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"),
            ])
    }

    /// GitHub's 429 for a secondary rate limit, with `Retry-After`.
    private static func secondaryRateLimited(retryAfter seconds: Int) -> HTTPResponse {
        var response = json(
            status: 429,
            [
                "message": .string(
                    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
                "documentation_url": .string(
                    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"),
            ])
        response.headers.append(HTTPHeader(name: "Retry-After", value: String(max(0, seconds))))
        return response
    }

    /// A JSON answer.
    static func json(status: Int, _ value: JSONValue, headers: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: jsonContentType, body: JSONWriter.encode(value), headers: headers)
    }
}
