import RelayProtocol
import WidgetKit

/// When WidgetKit asks the provider for the next timeline: WidgetKit's ``TimelineReloadPolicy``
/// in the watch's timestamps (``timelinePolicy`` and ``init(_:)`` convert).
public enum ReloadPolicy: Sendable, Hashable, CustomStringConvertible {
    /// After the last entry's date passes.
    case atEnd
    /// At this date (earlier or later than the last entry).
    case after(Timestamp)
    /// Only when the app asks (`reloadTimelines(ofKind:)`).
    case never

    /// `atEnd`, `after` or `never`.
    public var name: String {
        switch self {
        case .atEnd: "atEnd"
        case .after: "after"
        case .never: "never"
        }
    }

    public var description: String {
        switch self {
        case .after(let d): "after(\(d.iso8601))"
        default: name
        }
    }
}

/// A favorites timeline: WidgetKit's `Timeline<FavoritesEntry>` in the watch's timestamps,
/// as the renderers and the scheduler's events read it (``init(_:)`` and ``timeline`` convert).
public struct WidgetTimeline: Sendable, Hashable {
    /// Entries in ascending date order; the first is dated at the reload time.
    public var entries: [FavoritesEntry]
    /// When to ask for the next timeline.
    public var policy: ReloadPolicy

    /// A timeline of `entries` with `policy`.
    public init(entries: [FavoritesEntry], policy: ReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }

    /// The date WidgetKit would ask for the next timeline by the policy alone, before the
    /// scheduler's minimum reload interval; `nil` for `.never` (or no entries with `.atEnd`).
    public var policyDate: Timestamp? {
        switch policy {
        case .atEnd: entries.last?.timestamp
        case .after(let d): d
        case .never: nil
        }
    }

    /// The index of the entry on screen at `now`: the last one whose date has passed; `nil`
    /// while none has (an entry never shows before its date).
    public func index(at now: Timestamp) -> Int? {
        entries.lastIndex { $0.timestamp <= now }
    }

    /// WidgetKit's timeline in the watch's timestamps.
    public init(_ timeline: Timeline<FavoritesEntry>) {
        self.init(entries: timeline.entries, policy: ReloadPolicy(timeline.policy))
    }

    /// The timeline as WidgetKit's `Timeline`.
    public var timeline: Timeline<FavoritesEntry> {
        Timeline(entries: entries, policy: policy.timelinePolicy)
    }
}
