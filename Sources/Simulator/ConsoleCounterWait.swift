import Primitives
import RelayConsole

/// Waits for the relay's counters in the console's `state` events, as they are when the wait
/// begins or become within its time.
///
/// The first state an event stream gets is the console's last push, taken up to
/// ``ConsoleEvents/pushInterval`` before it (the relay pushes at most that often): before the
/// step that came just before the wait changed the relay, say, so an `expectRelay` of the count
/// from before that step passed. A matching state taken before the wait began is kept only once
/// no newer one came by the time the relay's next push was due (``settle`` after it): then it
/// is the relay's latest.
enum ConsoleCounterWait {
    /// How long after the relay's next push was due a newer state may still come (its service
    /// loop's turn, on a loaded machine).
    static let settle: Duration = .milliseconds(250)

    private enum Input: Sendable {
        case state(ConsoleJSON.State)
        /// A timer: the wait's end, or a kept state's settling.
        case tick
        case ended
    }

    /// The counters of the first state that satisfies `accept` (one taken at `since`, in the
    /// relay's milliseconds since 1970, or before it, once settled), or nil once `seconds` passed
    /// or the stream ended; and the last counters seen.
    static func run(
        _ states: AsyncStream<ConsoleJSON.State>, within seconds: Double, since: Int64,
        _ accept: @escaping @Sendable (RelayCounters) -> Bool
    ) async -> (matched: RelayCounters?, last: RelayCounters?) {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        return await withTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                for await state in states { sink.yield(.state(state)) }
                sink.yield(.ended)
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                sink.yield(.tick)
            }
            var last: RelayCounters?
            /// A matching state taken before the wait began, and when it counts as the latest.
            var kept: (counters: RelayCounters, settled: ContinuousClock.Instant)?
            for await input in inputs {
                switch input {
                case .state(let state):
                    last = state.counters
                    kept = nil
                    guard accept(state.counters) else { break }
                    if state.now > since { return (state.counters, last) }
                    let due = max(0, state.now + ConsoleEvents.pushInterval - since)
                    let settled = ContinuousClock.now + .milliseconds(due) + settle
                    kept = (state.counters, settled)
                    group.addTask {
                        try? await Task.sleep(until: settled, clock: .continuous)
                        sink.yield(.tick)
                    }
                case .tick:
                    if let kept, ContinuousClock.now >= kept.settled { return (kept.counters, last) }
                case .ended:
                    return (kept?.counters, last)
                }
                if kept == nil && ContinuousClock.now >= deadline { return (nil, last) }
            }
            return (nil, last)
        }
    }
}
