import Primitives
import Synchronization

/// Everything a scenario's watch did during a run, across its restarts (and, for a child
/// process, across its SIGKILLs), with a cursor for `wait` steps and a mark for
/// `expectReloads` steps.
///
/// `wait` looks for the next matching events after the cursor and moves the cursor past
/// them; `mark` remembers where the log is so that reloads can be counted "since the mark".
/// Appends are synchronous (a `Mutex`), so a child's reader thread records the event lines
/// before it hands over the response that follows them.
final class WatchEventLog: Sendable {
    private struct State {
        var events: [WatchObservation] = []
        var cursor = 0
        var markIndex = 0
        /// Events a successful wait moved past without taking them (before its matches).
        var skipped: [Int] = []
        /// Events the last mark moved past that no wait had taken.
        var markedPast: [Int] = []
        var nextWaiter = 0
        /// Who waits for the next append.
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedState(State())

    /// Records one event.
    func append(_ event: WatchObservation) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.events.append(event)
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Returns once more than `count` events are recorded, or at `deadline`: an awaited
    /// event with one timer, not a poll.
    func changed(after count: Int, until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.appended(after: count) }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns once more than `count` events are recorded (or the task is cancelled).
    private func appended(after count: Int) async {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.events.count > count || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// How many events were recorded.
    var count: Int { state.withLock { $0.events.count } }

    /// Moves the cursor and the mark to the end of the log.
    func markNow() {
        state.withLock {
            $0.markedPast = Array($0.cursor..<$0.events.count)
            $0.cursor = $0.events.count
            $0.markIndex = $0.events.count
            $0.skipped = []
        }
    }

    /// The events since the last mark.
    func sinceMark() -> [WatchObservation] {
        state.withLock { Array($0.events[min($0.markIndex, $0.events.count)...]) }
    }

    /// What ``waitFor(_:timeout:_:)`` found, the latest events it saw, and the matching events
    /// an earlier wait or the last mark moved past.
    typealias WaitOutcome = (found: [WatchObservation], seen: [WatchObservation], passed: [WatchObservation], marked: [WatchObservation])

    /// Waits until `count` events after the cursor match `pick`; moves the cursor past the
    /// last one and returns them, or returns what it found by the deadline (fewer) with the
    /// latest events seen, and the matching events an earlier wait moved past without taking
    /// them (the usual cause: two waits in the other order than the events came) or the last
    /// mark did (`marked`: a mark placed after the step that caused them, e.g. after a start).
    func waitFor(
        _ count: Int, timeout: Double, _ pick: @Sendable (WatchObservation) -> Bool
    ) async -> WaitOutcome {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let (result, recorded) = state.withLock {
                s -> (WaitOutcome?, Int) in
                var found: [WatchObservation] = []
                var taken: Set<Int> = []
                var end = s.cursor
                for i in s.cursor..<s.events.count where found.count < count && pick(s.events[i]) {
                    found.append(s.events[i])
                    taken.insert(i)
                    end = i + 1
                }
                if found.count >= count {
                    s.skipped += (s.cursor..<end).filter { !taken.contains($0) }
                    s.cursor = end
                    return ((found, [], [], []), s.events.count)
                }
                if ContinuousClock.now >= deadline {
                    let passed = Array(s.skipped.map { s.events[$0] }.filter(pick).suffix(3))
                    let marked = Array(s.markedPast.map { s.events[$0] }.filter(pick).suffix(3))
                    return ((found, Array(s.events[s.cursor...].suffix(8)), passed, marked), s.events.count)
                }
                return (nil, s.events.count)
            }
            if let result { return result }
            // Until an event is appended (not a poll: the count of events, not of matches).
            await changed(after: recorded, until: deadline)
        }
    }
}
