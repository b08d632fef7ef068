import Primitives

/// Until when a cluster leader may act on its lease: its lease thread moves the end on at each
/// renewal Redis confirmed, its service thread looks before the engine handles anything.
///
/// The lease thread only sees the end at its next round. A leader that stood still past it (a
/// SIGSTOP, a long stall) read its clients' frames at once when it resumed, before that round
/// posted its step-down, and answered some from a core another node may have moved on from (an
/// `outstanding` listing an item acked through the new leader). Here the service thread sees
/// the end on the monotonic clock and steps down first. A renewal confirmed after the service
/// thread saw the end does not move it: the lease thread then gives that lease up, as one not
/// renewed in time, so the node never holds a lease without acting on it.
final class LeaseValidity: Sendable {
    private let state: LockedState<(until: ContinuousClock.Instant, over: Bool)>
    /// Wakes the lease thread once the service thread saw the end.
    private let ended: @Sendable () -> Void

    /// A validity ending at `until`; `ended` runs (on the service thread) when that is seen.
    init(until: ContinuousClock.Instant, ended: @escaping @Sendable () -> Void) {
        state = LockedState((until, false))
        self.ended = ended
    }

    /// Moves the end to `until` (a renewal was confirmed); false if the end was seen first.
    func extend(to until: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            guard !state.over else { return false }
            state.until = until
            return true
        }
    }

    /// Whether the leader may still act at `now`; once not, never again.
    func holds(at now: ContinuousClock.Instant) -> Bool {
        let (holds, seenNow) = state.withLock { state -> (Bool, Bool) in
            guard !state.over else { return (false, false) }
            guard now >= state.until else { return (true, false) }
            state.over = true
            return (false, true)
        }
        if seenNow { ended() }
        return holds
    }
}
