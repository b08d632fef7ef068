import Primitives
import RelayProtocol

extension Clock {
    /// A clock that moves only when told: `manual.advance(by:)` (the widget tests, the
    /// simulator's watches and `watchrelay watch --manual-clock`).
    public static func manual(_ clock: ManualClock) -> Clock {
        Clock(milliseconds: { clock.now.millisecondsSinceEpoch }, sleepUntilMilliseconds: {
            await clock.sleep(until: Timestamp(millisecondsSinceEpoch: $0))
        })
    }
}

/// A clock for tests: starts at a fixed instant and moves by ``advance(by:)``.
public final class ManualClock: Sendable {
    private struct State {
        var now: Timestamp
        var nextSleeper = 0
        var sleepers: [Int: (until: Timestamp, wake: CheckedContinuation<Bool, Never>)] = [:]
    }

    private let state: LockedState<State>

    public init(_ start: Timestamp = Timestamp(millisecondsSinceEpoch: 1_796_000_000_000)) {
        state = LockedState(State(now: start))
    }

    /// The clock's instant.
    public var now: Timestamp { state.withLock { $0.now } }

    /// Moves the clock forward, waking every ``sleep(until:)`` that became due.
    public func advance(by duration: Duration) {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let due = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.now = s.now.adding(milliseconds: ms)
            let now = s.now
            let ids = s.sleepers.filter { $0.value.until <= now }.map(\.key)
            return ids.compactMap { s.sleepers.removeValue(forKey: $0)?.wake }
        }
        for wake in due { wake.resume(returning: true) }
    }

    /// Waits until the clock reads at least `until` (true), or the task is cancelled (false).
    public func sleep(until: Timestamp) async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextSleeper += 1
            return s.nextSleeper
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (wake: CheckedContinuation<Bool, Never>) in
                let resumeNow: Bool? = state.withLock { s in
                    if Task.isCancelled { return false }
                    if s.now >= until { return true }
                    s.sleepers[id] = (until, wake)
                    return nil
                }
                if let resumeNow { wake.resume(returning: resumeNow) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.wake.resume(returning: false)
        }
    }
}
