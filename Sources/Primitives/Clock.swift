#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time, injectable: the relay's deadlines and the watch's widget work read it, and
/// the watch also sleeps on it until an instant of its own time, so work runs at its due time
/// with one timer and no polling.
///
/// Instants are milliseconds since 1970-01-01T00:00:00Z; RelayProtocol reads them as
/// `Timestamp`s (`clock.now()`, `clock.sleep(until)`). ``system`` is the real clock; a
/// manual one that moves only when a test says so is in the TestClock module (tests and the
/// simulator), never in a product module.
public struct Clock: Sendable {
    /// The current instant, in milliseconds since the Unix epoch.
    public var milliseconds: @Sendable () -> Int64
    /// Waits until the clock reads at least the given instant (milliseconds since the epoch);
    /// false if the waiting task was cancelled first.
    public var sleepUntilMilliseconds: @Sendable (_ until: Int64) async -> Bool

    /// A clock reading `milliseconds`; by default it sleeps in real time for the difference.
    public init(
        milliseconds: @escaping @Sendable () -> Int64,
        sleepUntilMilliseconds: (@Sendable (_ until: Int64) async -> Bool)? = nil
    ) {
        self.milliseconds = milliseconds
        self.sleepUntilMilliseconds = sleepUntilMilliseconds ?? { until in
            let ms = until - milliseconds()
            do {
                if ms > 0 { try await Task.sleep(for: .milliseconds(ms)) }
                return !Task.isCancelled
            } catch {
                return false
            }
        }
    }

    /// The system's real-time clock (`CLOCK_REALTIME`).
    public static let system = Clock {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
