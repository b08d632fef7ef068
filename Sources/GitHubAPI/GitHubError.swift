import Foundation
import GitExplorerPayloads
import RelayProtocol

/// The errors of the GitHub REST client; every throwing API of ``GitHubClient`` and
/// ``GitHubRESTClient`` throws only these.
///
/// Each case maps to one protocol code through ``reposErrorCode`` (and
/// `ReposErrorCode.init(_:)`), the only place where GitHub failures become wire values.
public enum GitHubError: Error, Sendable, Hashable, CustomStringConvertible {
    /// GitHub answered 404 for the user (or the login cannot be a GitHub login); the login asked for.
    case userNotFound(String)
    /// GitHub refused the request for its rate limit (403 or 429 with `X-RateLimit-Remaining: 0`
    /// and `X-RateLimit-Reset`, or `Retry-After`); retry no earlier than `retryAt`.
    case rateLimited(retryAt: Date)
    /// A 2xx answer whose body is not the JSON GitHub sends (not JSON, a missing key, a wrong
    /// type, a pagination that does not end); the text names what was wrong and where.
    case malformedResponse(String)
    /// GitHub could not be reached or failed: a 5xx status, connection refused, a timeout,
    /// a DNS failure, a cancelled request; the text says which.
    case unavailable(String)
    /// Any other unexpected HTTP status (e.g. 401 for a bad token, 403 without rate-limit headers).
    case http(status: Int)

    /// The protocol code a `profile.repos.error` reply carries for this error.
    public var reposErrorCode: ReposErrorCode { ReposErrorCode(self) }

    /// A one-line description for logs and for the message of a `profile.repos.error`.
    public var description: String {
        switch self {
        case .userNotFound(let login): "GitHub user '\(login)' not found"
        case .rateLimited(let retryAt): "GitHub rate limit exceeded; retry at \(Self.iso8601(retryAt))"
        case .malformedResponse(let what): "malformed GitHub response: \(what)"
        case .unavailable(let why): "GitHub unavailable: \(why)"
        case .http(let status): "unexpected GitHub HTTP status \(status)"
        }
    }

    private static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

extension ReposErrorCode {
    /// The protocol code for a GitHub failure: not found, rate limited, or unavailable (every
    /// other failure, since the watch can only show "GitHub did not answer usefully").
    public init(_ error: GitHubError) {
        switch error {
        case .userNotFound: self = .userNotFound
        case .rateLimited: self = .rateLimited
        case .malformedResponse, .unavailable, .http: self = .githubUnavailable
        }
    }
}

extension ReposError {
    /// The failed reply to `profile.repos.request` for `login`, with the error's code and description.
    public init(login: String, error: GitHubError) {
        self.init(login: login, code: ReposErrorCode(error), message: error.description)
    }
}

extension ReposStaleness {
    /// Why an older repo list answers for now: the error's code and description.
    public init(_ error: GitHubError) {
        self.init(code: ReposErrorCode(error), message: error.description)
    }
}
