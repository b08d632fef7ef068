import Foundation
import Primitives

/// Hands a completion handler's value to an awaiting host, once, with a real-time limit.
///
/// The provider may call the handler on any thread, before or after the host starts to
/// wait, or never: ``value(timeout:)`` returns the value, or `nil` once `timeout` seconds
/// pass without it. Later calls are counted (``extraCalls``) and otherwise ignored. The
/// timer task is cancelled as soon as the value arrives.
final class CompletionBox<Value: Sendable>: Sendable {
    private struct State: Sendable {
        /// `nil` while waiting; `.some(nil)` after the time limit; `.some(v)` once answered.
        var result: Value??
        var waiter: CheckedContinuation<Value?, Never>?
        var timer: Task<Void, Never>?
        var extraCalls = 0
        /// The wall clock when the handler was first called.
        var answeredAt: Date?
    }

    private let state = LockedState(State())

    /// The longest timeout a timer is armed for (about 31 years): a sleep much longer overflows
    /// the executor's nanoseconds.
    static var longestTimeout: TimeInterval { 1e9 }

    /// The completion handler: the first call wins.
    func complete(_ value: Value) {
        let now = Date()
        let (waiter, timer) = state.withLock { s -> (CheckedContinuation<Value?, Never>?, Task<Void, Never>?) in
            guard s.result == nil else {
                s.extraCalls += 1
                return (nil, nil)
            }
            s.result = .some(value)
            s.answeredAt = now
            defer { (s.waiter, s.timer) = (nil, nil) }
            return (s.waiter, s.timer)
        }
        timer?.cancel()
        waiter?.resume(returning: value)
    }

    /// How many times the handler was called after the first.
    var extraCalls: Int { state.withLock { $0.extraCalls } }

    /// When (wall clock) the handler was first called, if it was before the time limit.
    var answeredAt: Date? { state.withLock { $0.answeredAt } }

    /// Whether the handler has been called.
    var isAnswered: Bool { state.withLock { s in s.result.map { $0 != nil } ?? false } }

    private func expire() {
        let waiter = state.withLock { s -> CheckedContinuation<Value?, Never>? in
            guard s.result == nil else { return nil }
            s.result = .some(nil)
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The value, as soon as the handler is called; `nil` if it is not called within `timeout`
    /// seconds. A timeout of no finite length (`.infinity`, NaN, more than ``longestTimeout``)
    /// waits for the handler without a limit.
    func value(timeout: TimeInterval) async -> Value? {
        if let done = state.withLock({ $0.result }) { return done }
        return await withCheckedContinuation { (c: CheckedContinuation<Value?, Never>) in
            let timer: Task<Void, Never>? =
                timeout <= Self.longestTimeout
                ? Task { [self] in
                    try? await Task.sleep(for: .milliseconds(WidgetTime.ms(timeout)))
                    if !Task.isCancelled { expire() }
                } : nil
            let ready = state.withLock { s -> Value?? in
                if let r = s.result { return .some(r) }
                s.waiter = c
                s.timer = timer
                return nil
            }
            if let r = ready {
                timer?.cancel()
                c.resume(returning: r)
            }
        }
    }
}
