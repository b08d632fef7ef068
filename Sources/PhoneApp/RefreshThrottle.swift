/// The manual-refresh throttle: within ``interval`` of an allowed request, later requests are dropped.
///
/// Combine's `throttle(for:scheduler:latest: false)` as a value type: the *first* request of a
/// window wins and opens the window; every request inside it is refused (and reported as
/// throttled with the time left), none is deferred to the window's end. A request at or after
/// the window's end is allowed and opens the next window. Pure: the caller passes the time, so
/// tests need no clock and no sleeping.
public struct RefreshThrottle: Sendable, Hashable {
    /// The answer to one request.
    public enum Decision: Sendable, Hashable {
        /// Go ahead; the window now runs until `now + interval`.
        case allowed
        /// Dropped: another request won this window; the next one is allowed after `retryAfter`.
        case throttled(retryAfter: Duration)
    }

    /// The window opened by an allowed request (the seed app's 10 s).
    public let interval: Duration
    /// When the current window ends, if one was opened.
    public private(set) var windowEnd: ContinuousClock.Instant?

    /// Creates a throttle with no window open; a zero or negative interval never throttles.
    public init(interval: Duration) {
        self.interval = interval
    }

    /// Decides the request made at `now`, opening a new window when it is allowed.
    public mutating func request(at now: ContinuousClock.Instant) -> Decision {
        if let windowEnd, now < windowEnd {
            return .throttled(retryAfter: now.duration(to: windowEnd))
        }
        if interval > .zero { windowEnd = now.advanced(by: interval) }
        return .allowed
    }
}
