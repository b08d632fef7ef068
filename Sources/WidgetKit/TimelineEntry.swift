import Foundation

/// A type that specifies the date to display a widget, and, optionally, how relevant the
/// widget is then (WidgetKit's `TimelineEntry`).
///
/// The host shows an entry from its ``date`` on, never earlier, possibly later (WidgetKit:
/// "the update might occur later"). Entries need not be `Sendable` to compile; the host
/// (``WidgetHost``) asks for `Sendable` entries because a provider may answer on any thread.
public protocol TimelineEntry {
    /// The date for WidgetKit to render the widget.
    var date: Date { get }
    /// How relevant the widget's content is at ``date`` (Smart Stack rotation); `nil` by default.
    var relevance: TimelineEntryRelevance? { get }
}

extension TimelineEntry {
    /// No relevance: WidgetKit's default.
    public var relevance: TimelineEntryRelevance? { nil }
}

/// How relevant a timeline entry is, relative to the provider's other entries
/// (WidgetKit's `TimelineEntryRelevance`): the Smart Stack may rotate the widget to the top
/// when an entry's date arrives, for ``duration`` seconds.
public struct TimelineEntryRelevance: Sendable, Hashable, Codable {
    /// A score you choose, relative to the scores of the provider's other entries.
    public var score: Float
    /// How long the score applies from the entry's date; 0 means until the next entry.
    public var duration: TimeInterval

    /// A relevance of `score` for `duration` seconds (0: until the next entry).
    public init(score: Float, duration: TimeInterval = 0) {
        self.score = score
        self.duration = duration
    }
}
