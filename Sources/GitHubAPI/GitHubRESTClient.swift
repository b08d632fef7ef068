import Foundation
import GitExplorerPayloads
import Primitives
import RelayProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A GitHub REST client on URLSession: a user, and all of a user's repositories.
///
/// Every request sends `Accept: application/vnd.github+json`, the API version, a `User-Agent`,
/// and `Authorization: Bearer` when a token is set. Answers with an `ETag` are kept in
/// ``cache`` and revalidated with `If-None-Match`: a 304 reuses the cached body, and costs no
/// rate limit when a token is set (GitHub charges an anonymous one, as the stub does).
/// Repositories are fetched at 100 per page, following the `Link: rel="next"` header until the
/// last page, order kept.
///
/// Failures are ``GitHubError`` values: 404 → ``GitHubError/userNotFound(_:)``, a rate-limit
/// 403/429 → ``GitHubError/rateLimited(retryAt:)``, a bad body →
/// ``GitHubError/malformedResponse(_:)``, 5xx or no connection → ``GitHubError/unavailable(_:)``.
public struct GitHubRESTClient: Sendable {
    /// GitHub's public API, the default base URL.
    public static let defaultBaseURL = URL(string: "https://api.github.com")!

    /// The API root; paths such as `/users/{login}` are appended to it.
    public let baseURL: URL
    /// The bearer token, if any.
    public let token: String?
    /// The `User-Agent` header GitHub requires (default `WatchRelay-GitHubAPI`).
    public let userAgent: String
    /// The timeout of each single request (default 10 s); a page counts as one request.
    public let requestTimeout: Duration
    /// The most pages one ``repos(_:)`` call follows (default 50, i.e. 5,000 repositories).
    public let maxPages: Int
    /// The ETag cache, shared by every copy of this client.
    public let cache: ETagCache
    let session: URLSession
    /// The bounds of the client's own session (nil with a session given to ``init``).
    let transfers: BoundedTransfers?
    let now: @Sendable () -> Date
    /// The largest answer body kept (16 MiB: a page of 100 repositories is about 500 KB).
    public static let maxBodyBytes = 16 << 20
    /// The longest one answer may take by default, however busy the server keeps the
    /// connection (a body sent a byte at a time is never silent long enough for
    /// ``requestTimeout``).
    public static let answerDeadline: Duration = .seconds(30)

    /// Creates a client; nothing is sent until the first call.
    /// - Parameters:
    ///   - baseURL: the API root (default `https://api.github.com`), e.g. a stub's base URL.
    ///   - token: a bearer token for a higher rate limit, or `nil`.
    ///   - userAgent: the `User-Agent` header.
    ///   - requestTimeout: the timeout of each request (default 10 s).
    ///   - maxPages: the most pages one repos call follows (default 50).
    ///   - answerDeadline: the longest one answer may take (default ``answerDeadline``).
    ///   - session: the URLSession to use; `nil` (the default) makes an ephemeral one with no URL
    ///     cache whose answers are bounded (``maxBodyBytes``, ``answerDeadline``) and which follows
    ///     no redirect to another origin (``BoundedTransfers``).
    ///   - cache: the ETag cache (default a new, empty one).
    ///   - now: the clock for `Retry-After`.
    public init(
        baseURL: URL = defaultBaseURL,
        token: String? = nil,
        userAgent: String = "WatchRelay-GitHubAPI",
        requestTimeout: Duration = .seconds(10),
        maxPages: Int = 50,
        answerDeadline: Duration = answerDeadline,
        session: URLSession? = nil,
        cache: ETagCache = ETagCache(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.baseURL = baseURL
        self.token = token
        self.userAgent = userAgent
        self.requestTimeout = requestTimeout
        self.maxPages = max(1, maxPages)
        if let session {
            self.session = session
            self.transfers = nil
        } else {
            let transfers = BoundedTransfers(maxBodyBytes: Self.maxBodyBytes, deadline: answerDeadline)
            self.session = Self.makeSession(timeout: requestTimeout, delegate: transfers)
            self.transfers = transfers
        }
        self.cache = cache
        self.now = now
    }

    /// Fetches `GET /users/{login}`.
    /// - Throws: ``GitHubError``; ``GitHubError/userNotFound(_:)`` also for a string that cannot be a login.
    public func user(_ login: String) async throws(GitHubError) -> User {
        let url = try userURL(login)
        let page = try await get(url, login: login)
        return try GitHubDecoding.decode(GitHubUserResource.self, from: page.body, what: "user \(login)").model(asked: login)
    }

    /// Fetches every page of `GET /users/{login}/repos?per_page=100`, in GitHub's order.
    /// - Throws: ``GitHubError``; a failing page fails the whole call (no partial list).
    public func repos(_ login: String) async throws(GitHubError) -> [Repo] {
        var next: URL? = try reposURL(login)
        var repos: [Repo] = []
        var visited: Set<String> = []
        var pageNumber = 0
        while let url = next {
            pageNumber += 1
            guard pageNumber <= maxPages else {
                throw .malformedResponse("repos of \(login): more than \(maxPages) pages")
            }
            guard visited.insert(url.absoluteString).inserted else {
                throw .malformedResponse("repos of \(login): page \(pageNumber) links back to \(url.absoluteString)")
            }
            let page = try await get(url, login: login)
            let what = "repos of \(login), page \(pageNumber)"
            for resource in try GitHubDecoding.decode([GitHubRepoResource].self, from: page.body, what: what) {
                repos.append(try resource.model())
            }
            next = try page.link.flatMap { (value) throws(GitHubError) -> URL? in
                guard let target = LinkHeader(parsing: value).next else { return nil }
                guard let url = URL(string: target, relativeTo: baseURL)?.absoluteURL else {
                    throw .malformedResponse("\(what): Link next '\(target)' is not a URL")
                }
                // The next page is fetched with the token: only from GitHub's own origin.
                guard Self.sameOrigin(url, baseURL) else {
                    throw .malformedResponse("\(what): Link next \(Excerpt.quoted(target)) is on another host")
                }
                return url
            }
        }
        return repos
    }

    // MARK: - URLs

    /// Whether `login` can be a GitHub login (1...39 letters, digits, `-` or `_`), so it is
    /// safe to put in a path unescaped.
    static func isValidLogin(_ login: String) -> Bool {
        (1...39).contains(login.utf8.count)
            && login.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    func userURL(_ login: String) throws(GitHubError) -> URL {
        try endpoint("/users/\(validated(login))")
    }

    func reposURL(_ login: String) throws(GitHubError) -> URL {
        try endpoint("/users/\(validated(login))/repos?per_page=100")
    }

    private func validated(_ login: String) throws(GitHubError) -> String {
        guard Self.isValidLogin(login) else { throw .userNotFound(login) }
        return login
    }

    private func endpoint(_ pathAndQuery: String) throws(GitHubError) -> URL {
        var root = baseURL.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        guard let url = URL(string: root + pathAndQuery) else {
            throw .unavailable("base URL \(baseURL.absoluteString) cannot take a path")
        }
        return url
    }

    /// Whether `a` and `b` have the same scheme, host and port (the default port of the scheme
    /// when none is written).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int?) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(a) == origin(b)
    }

    static func makeSession(timeout: Duration, delegate: BoundedTransfers) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
        configuration.timeoutIntervalForRequest = seconds
        configuration.httpMaximumConnectionsPerHost = BoundedTransfers.connectionsPerHost
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }
}
