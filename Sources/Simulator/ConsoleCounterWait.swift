import Primitives
import RelayConsole

/// Waits for the relay's counters in the console's `state` events, as they are when the wait
/// begins or become within its time.
///
/// The first state an event stream gets is the console's last push, taken up to
/// ``ConsoleEvents/pushInterval`` before it (the relay pushes at most that often): before the
/// step that came just before the wait changed the relay, say, so an `expectRelay` of the count
/// from before that step passed. A state taken before the wait began is the relay's latest only
/// once no newer one came by the time the relay's next push was due (``settle`` after it).
///
/// The wait's time does not end it before it has seen the relay as it was when it began (a
/// state taken after, or an earlier one settled): a zero timeout checks the counters as they
/// are, once, instead of failing before the first state came.
enum ConsoleCounterWait {
    /// How long after the relay's next push was due a newer state may still come (its service
    /// loop's turn, on a loaded machine).
    static let settle: Duration = .milliseconds(250)
    /// The longest a wait looks for the relay's current state past its own time (a console that
    /// sends none: then it fails, having seen nothing).
    static let firstLook: Duration = .seconds(5)

    private enum Input: Sendable {
        case state(ConsoleJSON.State)
        /// A timer: the wait's end, or a state's settling.
        case tick
        case ended
    }

    /// The counters of the first state that satisfies `accept` (one taken after `since`, in the
    /// relay's milliseconds since 1970, or one taken before it, once settled), or nil once
    /// `seconds` passed and the current state was seen, or the stream ended; and the last
    /// counters seen.
    static func run(
        _ states: AsyncStream<ConsoleJSON.State>, within seconds: Double, since: Int64,
        _ accept: @escaping @Sendable (RelayCounters) -> Bool
    ) async -> (matched: RelayCounters?, last: RelayCounters?) {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        let began = ContinuousClock.now
        let deadline = began + .milliseconds(Int(seconds * 1000))
        let lastLook = max(deadline, began + firstLook)
        return await withTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                for await state in states { sink.yield(.state(state)) }
                sink.yield(.ended)
            }
            for due in Set([deadline, lastLook]) {
                group.addTask {
                    try? await Task.sleep(until: due, clock: .continuous)
                    sink.yield(.tick)
                }
            }
            var last: RelayCounters?
            /// Whether a state showed the relay as it was when the wait began, or later.
            var current = false
            /// A state taken before the wait began, and when it counts as the relay's latest.
            var early: (counters: RelayCounters, settled: ContinuousClock.Instant)?
            for await input in inputs {
                switch input {
                case .state(let state):
                    last = state.counters
                    early = nil
                    if state.now > since {
                        current = true
                        if accept(state.counters) { return (state.counters, last) }
                        break
                    }
                    let due = max(0, state.now + ConsoleEvents.pushInterval - since)
                    let settled = ContinuousClock.now + .milliseconds(due) + settle
                    early = (state.counters, settled)
                    group.addTask {
                        try? await Task.sleep(until: settled, clock: .continuous)
                        sink.yield(.tick)
                    }
                case .tick:
                    if let settledEarly = early, ContinuousClock.now >= settledEarly.settled {
                        current = true
                        early = nil
                        if accept(settledEarly.counters) { return (settledEarly.counters, last) }
                    }
                case .ended:
                    return (early.flatMap { accept($0.counters) ? $0.counters : nil }, last)
                }
                let now = ContinuousClock.now
                if (current && now >= deadline) || now >= lastLook { return (nil, last) }
            }
            return (nil, last)
        }
    }
}
