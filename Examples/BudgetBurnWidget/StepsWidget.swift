import Foundation
import Primitives
import WidgetKit

/// The step count the phone sends the watch, shared with the widget (an App Group stand-in).
public final class StepsStore: Sendable {
    private let value = LockedState(0)

    /// A store at 0 steps.
    public init() {}

    /// The stored step count.
    public var steps: Int { value.withLock { $0 } }

    /// Replaces the stored count.
    public func save(_ steps: Int) {
        value.withLock { $0 = steps }
    }
}

/// The complication: today's steps.
public struct StepsEntry: TimelineEntry, Sendable {
    public let date: Date
    public let steps: Int
}

/// Reads the store; one entry, `.never`: only the app's reloads change it.
public struct StepsProvider: TimelineProvider {
    /// The widget's kind string.
    public static let kind = "Steps"

    let store: StepsStore

    /// A provider reading `store`.
    public init(store: StepsStore) {
        self.store = store
    }

    public func placeholder(in context: Context) -> StepsEntry { StepsEntry(date: Date(), steps: 0) }

    public func getSnapshot(in context: Context, completion: @escaping (StepsEntry) -> ()) {
        completion(StepsEntry(date: Date(), steps: store.steps))
    }

    public func getTimeline(in context: Context, completion: @escaping (Timeline<StepsEntry>) -> ()) {
        completion(Timeline(entries: [StepsEntry(date: Date(), steps: store.steps)], policy: .never))
    }
}

/// The watch app: the phone sends a new step count every few minutes, in the background.
public protocol StepsReceiver {
    /// Handles a step count that arrived at `date`.
    mutating func receive(_ steps: Int, at date: Date)
}

/// Reloads the complication on every data tick: fine under Xcode (no budget), and for the
/// first hours on a watch; then the day's budget is spent and the complication freezes.
public struct ReloadEveryTickApp: StepsReceiver {
    let store: StepsStore

    /// An app writing to `store`.
    public init(store: StepsStore) {
        self.store = store
    }

    public mutating func receive(_ steps: Int, at date: Date) {
        store.save(steps)
        WidgetCenter.shared.reloadTimelines(ofKind: StepsProvider.kind)
    }
}

/// Reloads at most once per `interval` (default 30 minutes: 48 a day, under the budget),
/// always storing the newest count; the next allowed reload shows it.
public struct ThrottledReloadApp: StepsReceiver {
    let store: StepsStore
    let interval: TimeInterval
    private var lastReload: Date?

    /// An app writing to `store`, reloading at most every `interval` seconds.
    public init(store: StepsStore, interval: TimeInterval = 1800) {
        self.store = store
        self.interval = interval
    }

    public mutating func receive(_ steps: Int, at date: Date) {
        store.save(steps)
        if let last = lastReload, date.timeIntervalSince(last) < interval { return }
        lastReload = date
        WidgetCenter.shared.reloadTimelines(ofKind: StepsProvider.kind)
    }
}
