import Foundation

/// An object that specifies a date for WidgetKit to update a widget's view: entries and the
/// policy for the next timeline (WidgetKit's `Timeline`).
public struct Timeline<EntryType: TimelineEntry> {
    /// The entries, which the host shows in date order.
    public let entries: [EntryType]
    /// When WidgetKit asks for the next timeline.
    public let policy: TimelineReloadPolicy

    /// A timeline of `entries` with `policy`.
    public init(entries: [EntryType], policy: TimelineReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }
}

extension Timeline: Sendable where EntryType: Sendable {}

/// The earliest date WidgetKit asks for a new timeline (WidgetKit's `TimelineReloadPolicy`).
///
/// Apple declares it as a struct with static members; so does this module, and the three
/// members read and compare as in Apple's API (`.atEnd`, `.after(date)`, `.never`).
public struct TimelineReloadPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The policy's form, for code that switches on it.
    public enum Kind: Sendable, Hashable {
        /// After the last entry's date passes.
        case atEnd
        /// At a date (earlier or later than the last entry).
        case after(Date)
        /// Only when the app calls `reloadTimelines(ofKind:)` or `reloadAllTimelines()`.
        case never
    }

    /// Which policy this is.
    public let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// Requests a new timeline after the last date in the timeline passes.
    public static let atEnd = TimelineReloadPolicy(.atEnd)
    /// Never requests a new timeline: the app prompts WidgetKit when one is available.
    public static let never = TimelineReloadPolicy(.never)
    /// Requests a new timeline after `date`.
    public static func after(_ date: Date) -> TimelineReloadPolicy { TimelineReloadPolicy(.after(date)) }

    /// The `.after` date, if this is `.after`.
    public var date: Date? {
        if case .after(let d) = kind { return d }
        return nil
    }

    /// `atEnd`, `after(<ISO-8601>)` or `never`.
    public var description: String {
        switch kind {
        case .atEnd: "atEnd"
        case .after(let d): "after(\(WidgetTime.iso8601(d)))"
        case .never: "never"
        }
    }
}
