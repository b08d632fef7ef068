import Foundation

extension DispatchSemaphore {
    /// Waits until signalled or `deadline` (on the monotonic clock, as a `DispatchTime` is;
    /// NSCondition's timeouts are the wall clock's, which a clock set back would stretch).
    /// A deadline already past only takes a signal already given.
    @discardableResult
    public func wait(until deadline: ContinuousClock.Instant) -> DispatchTimeoutResult {
        let (seconds, attoseconds) = max(.zero, ContinuousClock.now.duration(to: deadline)).components
        return wait(timeout: .now() + .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
    }
}
