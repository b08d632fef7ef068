import Primitives
import Testing
import TestSupport

@testable import PhoneApp

/// The retries after a change signal whose check found nothing: the commit that a WAL write
/// announced becomes visible later, with no signal of its own (see `SettledChecks`).
@Suite struct SettledChecksTests {
    /// A check that finds nothing its first `misses` times, then finds the change.
    final class Check: Sendable {
        private let state: LockedState<(calls: Int, misses: Int)>
        init(misses: Int) { state = LockedState((0, misses)) }
        var calls: Int { state.withLock { $0.calls } }

        @Sendable func run() async -> Bool {
            state.withLock { s in
                s.calls += 1
                return s.calls > s.misses
            }
        }
    }

    private static let short: [Duration] = Array(repeating: .milliseconds(1), count: 5)

    @Test func aCommitSeenAfterItsSignalIsFoundByTheRetriesAlone() async throws {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let check = Check(misses: 3)  // the signal's own check and two retries see nothing
        let follow = Task { await SettledChecks.follow(changes, delays: Self.short, check: check.run) }
        signal.yield()  // one signal, none after it
        try await eventually(10, "the fourth check, by the retries") { check.calls >= 4 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(check.calls == 4)  // found: no retry after that
        signal.finish()
        await follow.value
    }

    @Test func aCheckThatFindsTheChangeStartsNoRetries() async throws {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let check = Check(misses: 0)
        let follow = Task { await SettledChecks.follow(changes, delays: Self.short, check: check.run) }
        signal.yield()
        try await eventually(10, "the signal's check") { check.calls >= 1 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(check.calls == 1)
        signal.finish()
        await follow.value
    }

    @Test func theRetriesStopWhenTheirDelaysRunOut() async throws {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let check = Check(misses: .max)  // nothing changed at all (the phone's own write)
        let follow = Task { await SettledChecks.follow(changes, delays: Self.short, check: check.run) }
        signal.yield()
        try await eventually(10, "the five retries") { check.calls >= 6 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(check.calls == 6)  // the signal's check and one per delay
        signal.finish()
        await follow.value
    }

    @Test func theEndOfTheSignalsStopsRetriesInFlight() async throws {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self)
        let check = Check(misses: .max)
        let long: [Duration] = [.seconds(3600)]
        let follow = Task { await SettledChecks.follow(changes, delays: long, check: check.run) }
        signal.yield()
        try await eventually(10, "the signal's check") { check.calls >= 1 }
        signal.finish()
        try await withTimeout(10 * timeoutScale, "follow to return with a retry an hour away") { await follow.value }
        #expect(check.calls == 1)
    }
}
