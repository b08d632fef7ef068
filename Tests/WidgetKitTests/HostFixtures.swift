import Foundation
import Primitives
import WidgetKit

/// A shared store the app writes and the widget reads (an App Group stand-in).
final class CounterStore: Sendable {
    private let value = LockedState(0)
    var count: Int { value.withLock { $0 } }
    func set(_ n: Int) { value.withLock { $0 = n } }
}

struct CountEntry: TimelineEntry {
    let date: Date
    let count: Int
}

/// A counter widget on the default family whose app stores `count` and asks for a reload at
/// `hours` (and `minutes`), in an app event labelled `label`.
func counterHost(storing count: Int, atHours hours: Double, minutes: Double = 0, _ label: String = "app event")
    -> WidgetHost<CountEntry>
{
    let store = CounterStore()
    let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
    host.at(hours: hours, minutes: minutes, label) {
        store.set(count)
        WidgetCenter.shared.reloadTimelines(ofKind: "counter")
    }
    return host
}

/// Reads the store: one entry, `.never` (only an app reload shows new data).
struct CountProvider: TimelineProvider {
    let store: CounterStore
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {
        completion(CountEntry(date: Date(), count: store.count))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        completion(Timeline(entries: [CountEntry(date: Date(), count: store.count)], policy: .never))
    }
}

/// Never calls its timeline completion handler.
struct SilentProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {}
}

/// Calls its completion handler twice.
struct TwiceProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        let t = Timeline(entries: [CountEntry(date: Date(), count: 1)], policy: .never)
        completion(t)
        completion(t)
    }
}

/// Answers from its cache at once, then again when "the network" answers on another queue
/// (a second call of the same handler): `secondCall` resumes after it.
struct CacheThenNetworkProvider: TimelineProvider {
    let secondCall: AsyncStream<Void>.Continuation
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<CountEntry>) -> Void) {
        completion(Timeline(entries: [CountEntry(date: Date(), count: 1)], policy: .never))
        let done = secondCall
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
            completion(Timeline(entries: [CountEntry(date: Date(), count: 2)], policy: .never))
            done.yield()
        }
    }
}

/// Answers 50 ms later, on another queue: one entry of count 1, `.never`.
struct LateProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<CountEntry>) -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
            completion(Timeline(entries: [CountEntry(date: Date(), count: 1)], policy: .never))
        }
    }
}

/// Entries an hour and two hours ahead (counts 1 and 2), `.never`.
struct AheadProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        let now = Date()
        completion(Timeline(entries: [1, 2].map { CountEntry(date: now.addingTimeInterval(Double($0) * 3600), count: $0) }, policy: .never))
    }
}

/// A minute between entries: too close.
struct CrowdedProvider: TimelineProvider {
    func placeholder(in context: Context) -> CountEntry { CountEntry(date: Date(), count: -1) }
    func getSnapshot(in context: Context, completion: @escaping (CountEntry) -> Void) {}
    func getTimeline(in context: Context, completion: @escaping (Timeline<CountEntry>) -> Void) {
        let now = Date()
        completion(Timeline(entries: (0..<3).map { CountEntry(date: now.addingTimeInterval(Double($0) * 60), count: $0) }, policy: .never))
    }
}

/// Families a completion handler saw.
final class LockedCount: Sendable {
    private let value = LockedState<[WidgetFamily]>([])
    var families: [WidgetFamily] { value.withLock { $0 } }
    func set(_ f: [WidgetFamily]) { value.withLock { $0 = f } }
}

/// A one-shot gate between tasks: ``wait()`` returns once ``open()`` was called, before or after.
final class AsyncGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedState(State())

    func open() {
        let waiters = state.withLock { s in
            s.isOpen = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { s in
                if !s.isOpen { s.waiters.append(waiter) }
                return s.isOpen
            }
            if isOpen { waiter.resume() }
        }
    }
}
