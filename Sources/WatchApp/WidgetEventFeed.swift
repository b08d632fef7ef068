import Primitives
import Synchronization

/// Delivers widget events to any number of observers through `AsyncStream`s, so a test or
/// scenario can await a refresh instead of polling.
///
/// The state machines return events; the live loop publishes them here. Each stream from
/// ``subscribe(bufferingNewest:)`` sees the events published after it subscribed.
public final class WidgetEventFeed: Sendable {
    private let subscribers = Subscribers()

    /// A feed with no subscribers.
    public init() {}

    /// A stream of the events published from now on; it ends when the feed is finished.
    /// At most `limit` unread events are kept (the oldest are dropped past it).
    public func subscribe(bufferingNewest limit: Int = 1024) -> AsyncStream<WidgetEvent> {
        let (stream, continuation) = AsyncStream<WidgetEvent>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let id = subscribers.add(continuation)
        continuation.onTermination = { [subscribers] _ in subscribers.remove(id) }
        return stream
    }

    /// Sends `events`, in order, to every subscriber.
    public func publish(_ events: [WidgetEvent]) {
        for continuation in subscribers.all() {
            for event in events { continuation.yield(event) }
        }
    }

    /// Ends every stream.
    public func finish() {
        for continuation in subscribers.removeAll() { continuation.finish() }
    }
}

/// The feed's continuations, guarded by a `LockedState` (a Mutex TSan can see).
private final class Subscribers: Sendable {
    private let state = LockedState<(next: Int, continuations: [Int: AsyncStream<WidgetEvent>.Continuation])>(
        (0, [:]))

    func add(_ continuation: AsyncStream<WidgetEvent>.Continuation) -> Int {
        state.withLock { s in
            s.next += 1
            s.continuations[s.next] = continuation
            return s.next
        }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.continuations.removeValue(forKey: id) }
    }

    /// The continuations in subscription order.
    func all() -> [AsyncStream<WidgetEvent>.Continuation] {
        state.withLock { s in s.continuations.keys.sorted().compactMap { s.continuations[$0] } }
    }

    func removeAll() -> [AsyncStream<WidgetEvent>.Continuation] {
        state.withLock { s in
            let all = s.continuations.keys.sorted().compactMap { s.continuations[$0] }
            s.continuations = [:]
            return all
        }
    }
}
