import Primitives

extension Clock {
    /// The current instant.
    public func now() -> Timestamp {
        Timestamp(millisecondsSinceEpoch: milliseconds())
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
