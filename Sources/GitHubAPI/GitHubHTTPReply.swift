import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP answer from GitHub, reduced to what the client decides on.
///
/// ``resolve(login:cached:now:)`` is the client's whole status policy as a pure function:
/// which statuses give a body, which reuse the cache, and which typed error every other
/// answer becomes. It is tested without sockets.
struct GitHubHTTPReply: Sendable {
    /// The HTTP status.
    var status: Int
    /// The headers, names lowercased.
    var headers: [String: String]
    /// The body bytes.
    var body: Data

    /// What to do with an answer: decode a fresh body (and cache it if it has an ETag), or
    /// reuse the cached one after a 304.
    enum Resolution: Sendable, Equatable {
        /// A 2xx: decode `body`; store it if `etag` is set.
        case fresh(body: Data, etag: String?, link: String?)
        /// A 304 that matches the cached entry.
        case notModified(ETagCache.Entry)
    }

    /// Seconds to wait after a rate-limit answer that says neither when the limit resets nor
    /// when to retry (GitHub's advice for secondary limits: "at least one minute").
    static let defaultRetryDelay: TimeInterval = 60

    /// Classifies the answer.
    /// - Parameters:
    ///   - login: the user the request was about, for ``GitHubError/userNotFound(_:)``.
    ///   - cached: the entry whose ETag was sent as `If-None-Match`, if any.
    ///   - now: the current time, for `Retry-After`.
    /// - Throws: the ``GitHubError`` for every status that carries no usable body.
    func resolve(login: String, cached: ETagCache.Entry?, now: Date) throws(GitHubError) -> Resolution {
        switch status {
        case 200...299:
            return .fresh(body: body, etag: headers["etag"], link: headers["link"])
        case 304:
            guard let cached else { throw .malformedResponse("304 Not Modified for a request without If-None-Match") }
            return .notModified(cached)
        case 404, 410:
            throw .userNotFound(login)
        case 403, 429:
            if let retryAt = retryTime(now: now) { throw .rateLimited(retryAt: retryAt) }
            throw .http(status: status)
        case 500...599:
            throw .unavailable("HTTP \(status)\(messageSuffix)")
        default:
            throw .http(status: status)
        }
    }

    /// When a 403 or 429 may be retried, or `nil` if it is not a rate-limit answer.
    ///
    /// `Retry-After` (seconds) wins, as GitHub's docs say; then `X-RateLimit-Reset` when
    /// `X-RateLimit-Remaining` is 0; a 429, or a 403 whose message mentions a rate limit,
    /// without either waits ``defaultRetryDelay``.
    func retryTime(now: Date) -> Date? {
        if let seconds = headers["retry-after"].flatMap({ Int($0.trimmingSpaces) }), seconds >= 0 {
            return now.addingTimeInterval(TimeInterval(seconds))
        }
        if headers["x-ratelimit-remaining"]?.trimmingSpaces == "0",
            let reset = headers["x-ratelimit-reset"].flatMap({ Int64($0.trimmingSpaces) })
        {
            return Date(timeIntervalSince1970: TimeInterval(reset))
        }
        if status == 429 || message?.lowercased().contains("rate limit") == true {
            return now.addingTimeInterval(Self.defaultRetryDelay)
        }
        return nil
    }

    /// GitHub's error `message`, if the body is a JSON object with one.
    var message: String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return object["message"] as? String
    }

    private var messageSuffix: String {
        message.map { ": \($0)" } ?? ""
    }
}

extension GitHubHTTPReply {
    /// Reads status and headers from a URLSession response.
    init(_ response: HTTPURLResponse, body: Data) {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            headers[name.lowercased()] = value
        }
        self.init(status: response.statusCode, headers: headers, body: body)
    }
}
