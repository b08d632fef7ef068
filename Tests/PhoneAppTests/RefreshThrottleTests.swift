import PhoneApp
import Testing

/// The manual-refresh throttle: Combine's `throttle(latest: false)`, the first request wins.
struct RefreshThrottleTests {
    let t0 = ContinuousClock.now

    @Test func theFirstRequestWinsAndLaterOnesInTheWindowAreDropped() {
        var throttle = RefreshThrottle(interval: .seconds(10))
        #expect(throttle.request(at: t0) == .allowed)
        #expect(throttle.request(at: t0.advanced(by: .seconds(1))) == .throttled(retryAfter: .seconds(9)))
        #expect(throttle.request(at: t0.advanced(by: .milliseconds(9_999))) == .throttled(retryAfter: .milliseconds(1)))
    }

    @Test func droppedRequestsDoNotExtendTheWindow() {
        var throttle = RefreshThrottle(interval: .seconds(10))
        _ = throttle.request(at: t0)
        for s in 1...9 { _ = throttle.request(at: t0.advanced(by: .seconds(s))) }
        #expect(throttle.request(at: t0.advanced(by: .seconds(10))) == .allowed)
        #expect(throttle.windowEnd == t0.advanced(by: .seconds(20)))
    }

    @Test func aRequestAfterTheWindowOpensTheNextOne() {
        var throttle = RefreshThrottle(interval: .seconds(10))
        _ = throttle.request(at: t0)
        #expect(throttle.request(at: t0.advanced(by: .seconds(25))) == .allowed)
        #expect(throttle.request(at: t0.advanced(by: .seconds(26))) == .throttled(retryAfter: .seconds(9)))
    }

    @Test func aZeroIntervalNeverThrottles() {
        var throttle = RefreshThrottle(interval: .zero)
        #expect(throttle.request(at: t0) == .allowed)
        #expect(throttle.request(at: t0) == .allowed)
    }
}
