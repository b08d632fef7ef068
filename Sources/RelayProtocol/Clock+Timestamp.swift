import Primitives

extension Clock {
    /// The current instant.
    public func now() -> Timestamp {
        Timestamp(millisecondsSinceEpoch: milliseconds())
    }

    /// `instant`, read on clock `other` (the relay's, which stamped a frame's `sentAt`), placed
    /// on this clock: as long before this clock's now as it is before `other`'s now (never
    /// after now). On a manual clock (the simulator's watch process) it is the real time since
    /// `instant` before the manual now, so a latency measured from it counts the real transit,
    /// then the manual clock's time.
    public func placing(_ instant: Timestamp, readOn other: Clock) -> Timestamp {
        let elapsed = max(0, other.milliseconds() - instant.millisecondsSinceEpoch)
        return Timestamp(millisecondsSinceEpoch: milliseconds() - elapsed)
    }

    /// Waits until the clock reads at least `until`; false if the waiting task was cancelled first.
    public func sleep(_ until: Timestamp) async -> Bool {
        await sleepUntilMilliseconds(until.millisecondsSinceEpoch)
    }

    /// A clock whose instants come from `now` (sleeping in real time for the difference).
    public init(now: @escaping @Sendable () -> Timestamp) {
        self.init(milliseconds: { now().millisecondsSinceEpoch })
    }
}
