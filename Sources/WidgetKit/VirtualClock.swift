import Foundation
import Primitives

/// The host's clock: it moves only when the host runs the day, from event to event and from
/// wake-up to wake-up, never sleeping. A provider that wants virtual time rather than
/// `Date()` reads ``now`` (see ``WidgetHost/ProviderClock``).
public final class VirtualClock: Sendable {
    private let current: LockedState<Date>

    /// A clock at `start`.
    public init(start: Date) {
        current = LockedState(start)
    }

    /// The virtual instant.
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock to `date` (never backwards).
    func move(to date: Date) {
        current.withLock { $0 = max($0, date) }
    }
}
