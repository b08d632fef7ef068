import AppIntents
import Foundation

/// One widget instance a host runs: its id, family and configuration.
public struct HostedWidget: Sendable, CustomStringConvertible {
    /// Unique in the host: `<kind>.<family>`, or what ``WidgetHost/place(_:id:configuration:budget:)`` was given.
    public let id: String
    /// The widget kind (what `reloadTimelines(ofKind:)` names).
    public let kind: String
    /// The family.
    public let family: WidgetFamily
    /// The configuration intent, for intent-configured providers.
    public let configuration: (any WidgetConfigurationIntent)?
    /// The instance's daily budget.
    public let budget: Int

    public var description: String { id }
}

/// An entry on a widget's screen from ``from`` on (until the widget's next ``ShownEntry``).
public struct ShownEntry<Entry: TimelineEntry & Sendable>: Sendable {
    /// The widget instance's id.
    public let widgetID: String
    /// Its family.
    public let family: WidgetFamily
    /// When it came on screen (the entry's date, or later).
    public let from: Date
    /// The entry.
    public let entry: Entry
    /// What it shows, in words (the host's `describe`).
    public let text: String
    /// The timeline's generation: 0 for the placeholder.
    public let generation: Int
    /// True for the redacted placeholder shown before the first timeline.
    public var isPlaceholder: Bool { generation == 0 }
}

/// A timeline reload: when, why, and what it cost.
public struct HostReload: Sendable, Hashable, CustomStringConvertible {
    /// The widget instance's id.
    public let widgetID: String
    /// Its family.
    public let family: WidgetFamily
    /// When the provider was asked.
    public let at: Date
    /// Every distinct reason coalesced into this reload, in request order.
    public let reasons: [ReloadReason]
    /// How many requests this one reload served.
    public let requestCount: Int
    /// When the batch's first request was made.
    public let requestedAt: Date
    /// Whether it was charged to the budget (false when exempt: first timeline, foreground, no budget).
    public let charged: Bool
    /// The budget left after it.
    public let budgetLeft: Int
    /// The new generation.
    public let generation: Int
    /// How many entries the timeline had.
    public let entryCount: Int
    /// Its policy.
    public let policy: TimelineReloadPolicy
    /// What is wrong with the timeline (entries under five minutes apart, out of order, none).
    public let warnings: [TimelineWarning]

    public var description: String {
        let cost = charged ? "charged, \(budgetLeft) left" : "free"
        return "\(WidgetTime.clock(at)) \(widgetID) reload #\(generation) (\(reasons.map(\.rawValue).joined(separator: "+")), \(cost))"
    }
}

/// A reload the budget refused: the widget kept its old timeline and was stale from ``at``.
public struct HostRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The widget instance's id.
    public let widgetID: String
    /// Its family.
    public let family: WidgetFamily
    /// When it was refused.
    public let at: Date
    /// The pending requests' reasons.
    public let reasons: [ReloadReason]
    /// How many requests are pending.
    public let requestCount: Int
    /// When the budget frees a slot (the host retries then); `nil` if never.
    public let retryAt: Date?
    /// The widget's daily budget.
    public let budgetLimit: Int

    public var description: String {
        let retry = retryAt.map { "retry \(WidgetTime.iso8601($0))" } ?? "never retried"
        return "\(WidgetTime.clock(at)) \(widgetID) reload refused: budget of \(budgetLimit) spent, widget stale, \(retry)"
    }
}

/// A provider that did not call its completion handler (or return) in time, or called it more than once.
public struct ProviderFailure: Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// No answer within the timeout: the widget kept its old timeline.
        case neverCompleted(waited: TimeInterval)
        /// The handler was called `extraCalls` more times after the first (ignored).
        case completedMoreThanOnce(extraCalls: Int)
    }

    /// The widget instance's id.
    public let widgetID: String
    /// Its family.
    public let family: WidgetFamily
    /// The reload's virtual time.
    public let at: Date
    /// What went wrong.
    public let kind: Kind

    public var description: String {
        switch kind {
        case .neverCompleted(let waited):
            "\(WidgetTime.clock(at)) \(widgetID): getTimeline never called its completion handler (waited \(waited) s)"
        case .completedMoreThanOnce(let n):
            "\(WidgetTime.clock(at)) \(widgetID): getTimeline called its completion handler \(n + 1) times"
        }
    }
}

/// An app event the host ran, with the `WidgetCenter` calls the app made in it.
public struct AppEventRecord: Sendable, Hashable {
    /// When it ran.
    public let at: Date
    /// Its label (`data changed`, `foreground`, …).
    public let label: String
    /// Each `reloadTimelines(ofKind:)` kind, `nil` for `reloadAllTimelines()`, in call order.
    public let reloadCalls: [String?]
    /// Kinds the app asked to reload that no placed widget has (a misspelt kind string).
    public let unknownKinds: [String]
    /// True for calls made after their event's action had returned (a `Task` it did not
    /// await): recorded at the moment the host noticed them, labelled
    /// ``WidgetHost/unscopedLabel``.
    public var isUnscoped = false
}
