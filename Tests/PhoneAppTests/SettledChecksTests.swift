import Primitives
import Testing
import TestSupport

@testable import PhoneApp

/// The retries after a change signal: the commit that a WAL write announced becomes visible
/// later, with no signal of its own (see `SettledChecks`). The timers are the test's: it sees each
/// one armed (on the loop's task, between checks) and fires it, so every count is exact and no
/// assertion waits for a time to pass.
@Suite struct SettledChecksTests {
    /// A check that answers from a script, then `otherwise`.
    final class Check: Sendable {
        private let state: LockedState<(calls: Int, answers: [Bool])>
        private let otherwise: Bool
        init(_ answers: [Bool], otherwise: Bool = false) {
            state = LockedState((0, answers))
            self.otherwise = otherwise
        }
        var calls: Int { state.withLock { $0.calls } }

        @Sendable func run() async -> Bool {
            state.withLock { s in
                defer { s.calls += 1 }
                return s.calls < s.answers.count ? s.answers[s.calls] : otherwise
            }
        }
    }

    /// Timers that fire only when the test says so.
    final class ManualTimers: Sendable {
        final class Timer: RetryTimer {
            let delay: Duration
            let fire: @Sendable () -> Void
            private let cancelledState = LockedState(false)
            init(delay: Duration, fire: @escaping @Sendable () -> Void) {
                self.delay = delay
                self.fire = fire
            }
            var isCancelled: Bool { cancelledState.withLock { $0 } }
            func cancel() { cancelledState.withLock { $0 = true } }
        }

        private let armed = LockedState<[Timer]>([])

        var arm: SettledChecks.Arm {
            { [armed] delay, fire in
                let timer = Timer(delay: delay, fire: fire)
                armed.withLock { $0.append(timer) }
                return timer
            }
        }

        /// The delays of every timer armed so far, in order.
        var delays: [Duration] { armed.withLock { $0.map(\.delay) } }
        var count: Int { armed.withLock { $0.count } }
        var last: Timer? { armed.withLock { $0.last } }

        /// Fires the newest timer, which must still be armed.
        func fireLast() {
            guard let timer = last else {
                Issue.record("no timer armed")
                return
            }
            #expect(!timer.isCancelled, "the newest timer was cancelled")
            timer.fire()
        }
    }

    private static let delays: [Duration] = [.milliseconds(1), .milliseconds(2), .milliseconds(3)]

    /// Starts `follow` on the test's timers, sends one signal and waits for its check and the
    /// first retry timer; returns the task and the signal.
    private func start(_ check: Check, _ timers: ManualTimers) async throws -> (Task<Void, Never>, AsyncStream<Void>.Continuation) {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let follow = Task { await SettledChecks.follow(changes, delays: Self.delays, arm: timers.arm, check: check.run) }
        signal.yield()
        try await settle(check, timers, calls: 1, armed: 1)
        return (follow, signal)
    }

    /// Fires the newest timer, then waits as ``settle(_:_:calls:armed:)``.
    private func fire(_ check: Check, _ timers: ManualTimers, calls: Int, armed: Int) async throws {
        timers.fireLast()
        try await settle(check, timers, calls: calls, armed: armed)
    }

    /// Waits until `calls` checks ran and `armed` timers were armed (the loop arms right after a check).
    private func settle(_ check: Check, _ timers: ManualTimers, calls: Int, armed: Int) async throws {
        try await eventually(10, "\(calls) checks and \(armed) timers") { check.calls == calls && timers.count == armed }
    }

    /// One signal, none after it. `[false, false, true]`: the signal's own check and one retry
    /// see nothing, the next retry finds the commit. `[true, false, true]`: the signal stood for
    /// two commits; its check finds the first, the second retry after that the other. Either
    /// way a check that finds a change starts the retries over.
    @Test(arguments: [[false, false, true], [true, false, true]])
    func theRetriesFindACommitNoSignalAnnouncedAndStartOverBehindIt(answers: [Bool]) async throws {
        let check = Check(answers)
        let timers = ManualTimers()
        let (follow, signal) = try await start(check, timers)
        try await fire(check, timers, calls: 2, armed: 2)
        try await fire(check, timers, calls: 3, armed: 3)
        #expect(timers.delays == [.milliseconds(1), .milliseconds(2), .milliseconds(1)])
        signal.finish()
        await follow.value
        #expect(check.calls == 3)
        #expect(timers.last?.isCancelled == true)
    }

    @Test func theRetriesStopWhenTheirDelaysRunOut() async throws {
        let check = Check([])  // nothing changed at all (the phone's own write)
        let timers = ManualTimers()
        let (follow, signal) = try await start(check, timers)
        for n in 2...4 {
            try await fire(check, timers, calls: n, armed: min(n, 3))
        }
        // The fourth check ran on the last delay and armed nothing; the loop ends with the signals.
        signal.finish()
        await follow.value
        #expect(check.calls == 4)
        #expect(timers.delays == Self.delays)
    }

    @Test func aSignalDuringARetryWaitStartsTheRetriesOver() async throws {
        let check = Check([])
        let timers = ManualTimers()
        let (follow, signal) = try await start(check, timers)
        try await fire(check, timers, calls: 2, armed: 2)
        let waiting = try #require(timers.last)
        signal.yield()  // while the 2 ms retry waits
        try await settle(check, timers, calls: 3, armed: 3)
        #expect(waiting.isCancelled)
        #expect(timers.delays == [.milliseconds(1), .milliseconds(2), .milliseconds(1)])
        signal.finish()
        await follow.value
    }

    @Test func aTickFromATimerCancelledTooLateIsIgnored() async throws {
        let check = Check([])
        let timers = ManualTimers()
        let (follow, signal) = try await start(check, timers)
        let stale = try #require(timers.last)
        signal.yield()  // cancels the first timer and arms another
        try await settle(check, timers, calls: 2, armed: 2)
        #expect(stale.isCancelled)
        stale.fire()  // its sleep had ended just before the cancel
        try await fire(check, timers, calls: 3, armed: 3)  // the timer armed after it
        // The stale tick ran no check and took no delay: the schedule went on from the 2 ms retry.
        #expect(timers.delays == [.milliseconds(1), .milliseconds(1), .milliseconds(2)])
        signal.finish()
        await follow.value
        #expect(check.calls == 3)
    }

    @Test func theEndOfTheSignalsStopsRetriesInFlight() async throws {
        let check = Check([])
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let long: [Duration] = [.seconds(3600)]
        // The real timer, an hour away: `follow` must not wait for it.
        let follow = Task { await SettledChecks.follow(changes, delays: long, check: check.run) }
        signal.yield()
        try await eventually(10, "the signal's check") { check.calls >= 1 }
        signal.finish()
        try await withTimeout(10 * timeoutScale, "follow to return with a retry an hour away") { await follow.value }
        #expect(check.calls == 1)
    }
}
