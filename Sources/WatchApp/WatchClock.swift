import Foundation
import RelayProtocol
import WebSocketTransport

/// The watch's notion of now: the system clock, or a manual one tests advance.
public struct WatchClock: Sendable {
    /// The current instant.
    public var now: @Sendable () -> Timestamp

    public init(now: @escaping @Sendable () -> Timestamp) {
        self.now = now
    }

    /// Wall-clock time.
    public static let system = WatchClock { Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000)) }

    /// A clock that moves only when told (the widget tests' `TestClock`).
    public static func manual(_ clock: ManualClock) -> WatchClock {
        WatchClock { clock.now }
    }
}

/// A clock for tests: starts at a fixed instant and moves by ``advance(by:)``.
public final class ManualClock: Sendable {
    private let current: LockedState<Timestamp>

    public init(_ start: Timestamp = Timestamp(millisecondsSinceEpoch: 1_796_000_000_000)) {
        current = LockedState(start)
    }

    /// The clock's instant.
    public var now: Timestamp { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by duration: Duration) {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        current.withLock { $0 = $0.adding(milliseconds: ms) }
    }
}
