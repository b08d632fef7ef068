import Foundation
import GitHubAPI

/// GitHub's rate limit across requests: once GitHub refused one for it, nothing is asked of it
/// until the reset.
///
/// GitHub's rule: a client refused for its primary rate limit (403 or 429 with
/// `X-RateLimit-Remaining: 0`) must not ask again before `X-RateLimit-Reset`, and one refused
/// for a secondary limit not before `Retry-After` ("continuing to make requests while rate
/// limited may result in the banning of your integration"). The limit is the token's (or the
/// address's), not one user's or one request kind's: a refusal for a refresh holds for repo
/// requests and adds too. Until the reset, each of them fails at once with the same
/// ``GitHubError/rateLimited(retryAt:)`` (a refresh keeps every favorite's last data; a fresh
/// repos cache still answers), and none is sent.
extension PhoneCompanion {
    /// The end of the rate-limit refusal in force now, if any (one that ended is forgotten).
    func rateLimitRetryAt() -> Date? {
        guard let until = rateLimitedUntil else { return nil }
        guard now() < until else {
            rateLimitedUntil = nil
            return nil
        }
        return until
    }

    /// Remembers a rate-limit refusal until its reset (the latest of several), but at most
    /// ``longestRateLimitWait`` from now; other errors, and a reset already past, change nothing.
    func remember(_ error: GitHubError) {
        guard case .rateLimited(let retryAt) = error, retryAt > now() else { return }
        let until = min(retryAt, now().addingTimeInterval(Self.longestRateLimitWait))
        rateLimitedUntil = max(rateLimitedUntil ?? until, until)
    }

    /// The longest a refusal keeps the companion from GitHub: GitHub's primary window (an
    /// hour). A reset further away (a server's garbage, a phone clock far behind) would have
    /// kept every refresh from GitHub until the process restarted.
    static let longestRateLimitWait: TimeInterval = 3600

    /// Calls GitHub, unless a rate-limit refusal is in force: then fails at once with it. A
    /// refusal the call meets is remembered.
    func askGitHub<T>(_ call: () async throws(GitHubError) -> T) async throws(GitHubError) -> T {
        if let retryAt = rateLimitRetryAt() { throw .rateLimited(retryAt: retryAt) }
        do throws(GitHubError) {
            return try await call()
        } catch {
            remember(error)
            throw error
        }
    }
}
