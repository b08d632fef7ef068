import RelayProtocol
import WidgetKit

/// Something the widget system did that a test or scenario can verify: a reload, a reload
/// refused for budget, or an entry coming on screen.
public enum WidgetEvent: Sendable, Hashable {
    /// A new timeline was loaded.
    case reloaded(WidgetReload)
    /// A reload was refused for budget: the widget keeps its old entries and is stale.
    case stale(StaleReport)
    /// An entry came on screen (at its date, or later if the scheduler woke late).
    case rendered(EntryRendered)

    /// The widget instance the event is about.
    public var widgetID: String {
        switch self {
        case .reloaded(let r): r.widgetID
        case .stale(let s): s.widgetID
        case .rendered(let e): e.widgetID
        }
    }

    /// When it happened.
    public var at: Timestamp {
        switch self {
        case .reloaded(let r): r.at
        case .stale(let s): s.at
        case .rendered(let e): e.at
        }
    }

    /// The reload, if this is one.
    public var reload: WidgetReload? {
        if case .reloaded(let r) = self { return r }
        return nil
    }

    /// The stale report, if this is one.
    public var staleReport: StaleReport? {
        if case .stale(let s) = self { return s }
        return nil
    }

    /// The rendered entry, if this is one.
    public var rendered: EntryRendered? {
        if case .rendered(let e) = self { return e }
        return nil
    }
}

/// A timeline reload: which widget, its new generation, why, and what it now holds.
public struct WidgetReload: Sendable, Hashable {
    /// The widget instance.
    public var widgetID: String
    /// Its kind.
    public var kind: WidgetKind
    /// Its family.
    public var family: WidgetFamily
    /// Counts the widget's timelines: 1 for the first.
    public var generation: Int
    /// The coalesced batch's first reason.
    public var reason: ReloadReason
    /// Every distinct reason coalesced into this reload, in request order.
    public var reasons: [ReloadReason]
    /// How many requests this one reload served.
    public var requestCount: Int
    /// When the batch's first request was made.
    public var requestedAt: Timestamp
    /// When the reload happened.
    public var at: Timestamp
    /// The new timeline's entries.
    public var entries: [FavoritesEntry]
    /// The new timeline's policy.
    public var policy: ReloadPolicy
    /// Milliseconds from the newest coalesced snapshot's `sentAt` to this reload; `nil`
    /// when no snapshot caused it.
    public var latencyMilliseconds: Int64?
    /// Whether the reload was charged to the budget (false when exempt).
    public var charged: Bool
    /// The budget left after this reload.
    public var budgetLeft: Int
}

/// A reload refused for budget: the widget keeps showing generation ``generation``.
public struct StaleReport: Sendable, Hashable {
    /// The widget instance.
    public var widgetID: String
    /// Its kind.
    public var kind: WidgetKind
    /// Its family.
    public var family: WidgetFamily
    /// The generation still on screen.
    public var generation: Int
    /// The pending batch's first reason.
    public var reason: ReloadReason
    /// Every distinct reason pending, in request order.
    public var reasons: [ReloadReason]
    /// How many requests are pending.
    public var requestCount: Int
    /// When the reload was refused.
    public var at: Timestamp
    /// When the budget frees a slot and the scheduler retries; `nil` if never (limit 0).
    public var retryAt: Timestamp?
    /// The widget's daily budget.
    public var budgetLimit: Int
}

/// An entry on screen: the widget's content from ``at`` on.
public struct EntryRendered: Sendable, Hashable {
    /// The widget instance.
    public var widgetID: String
    /// Its family.
    public var family: WidgetFamily
    /// The timeline's generation.
    public var generation: Int
    /// The entry's index in its timeline.
    public var index: Int
    /// The entry's own date.
    public var entryDate: Timestamp
    /// When it was rendered (at or after `entryDate`).
    public var at: Timestamp
    /// What the family shows for the entry.
    public var content: WidgetContent
}
