import RelayProtocol

/// When WidgetKit asks the provider for the next timeline (`TimelineReloadPolicy`).
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

/// A provider's answer: entries in date order and the policy for the next one (`Timeline`).
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
        case .atEnd: entries.last?.date
        case .after(let d): d
        case .never: nil
        }
    }

    /// The index of the entry on screen at `now`: the last one whose date has passed (the
    /// first entry if none has).
    public func index(at now: Timestamp) -> Int? {
        guard !entries.isEmpty else { return nil }
        return entries.lastIndex { $0.date <= now } ?? 0
    }
}
