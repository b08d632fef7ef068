import Foundation

/// The fixture server's primary rate limit: at most ``limit`` requests per ``window``.
///
/// Like GitHub's: the window starts with the first request after the previous one ended;
/// every answer except a 304 to a request with `Authorization` counts; past the limit every
/// request is refused with 403 (an anonymous one that would be 304 too),
/// `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset` (the window's end, epoch seconds).
public struct GitHubStubRateLimit: Sendable, Hashable {
    /// The requests allowed per window (GitHub: 60 anonymous, 5,000 with a token).
    public var limit: Int
    /// The window length (GitHub: one hour).
    public var window: Duration

    /// Creates a limit of `limit` requests per `window` (default one hour).
    public init(limit: Int, window: Duration = .seconds(3600)) {
        self.limit = max(0, limit)
        self.window = window
    }

    /// The window length in seconds.
    var windowSeconds: TimeInterval {
        TimeInterval(window.components.seconds) + TimeInterval(window.components.attoseconds) * 1e-18
    }
}

/// The current rate-limit window of the fixture server.
struct GitHubStubRateWindow: Sendable, Hashable {
    /// When the window began.
    var start: Date
    /// The requests charged in it.
    var used: Int
    /// When it ends.
    var end: Date

    /// The window in force at `now`: this one, or a fresh one if it has ended (or none began).
    static func current(_ window: GitHubStubRateWindow?, now: Date, length: TimeInterval) -> GitHubStubRateWindow {
        if let window, now < window.end { return window }
        return GitHubStubRateWindow(start: now, used: 0, end: now.addingTimeInterval(length))
    }

    /// `X-RateLimit-Reset`: the window's end in whole epoch seconds, rounded up.
    var resetEpochSeconds: Int64 {
        Int64(end.timeIntervalSince1970.rounded(.up))
    }
}

/// A way to make the fixture server misbehave, for testing a client's error handling.
public enum GitHubStubFault: Sendable, Hashable {
    /// 200 with an HTML body (not JSON).
    case garbage
    /// 200 with JSON of the wrong shape (a user whose `id` is a string and without `avatar_url`;
    /// a repos page whose items lack `full_name`).
    case wrongShape
    /// 500 Internal Server Error, as when GitHub is down.
    case down
    /// 429 with `Retry-After`, GitHub's answer for a secondary rate limit.
    case secondaryRateLimit(retryAfterSeconds: Int)
}
