import Foundation
import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// A timeline entry of the `favorites` widget (a WidgetKit ``TimelineEntry``): what to show
/// from ``timestamp`` on.
public struct FavoritesEntry: TimelineEntry, Sendable, Hashable {
    /// What the entry shows.
    public enum Content: Sendable, Hashable {
        /// The redacted placeholder shown before the first timeline arrives.
        case placeholder
        /// There are no favorites.
        case empty
        /// The number of favorites only (the circular family).
        case count
        /// One favorite.
        case user(User)
    }

    /// When WidgetKit should start showing this entry (it may show it later, never earlier).
    public var timestamp: Timestamp
    /// What it shows.
    public var content: Content
    /// The number of favorites the phone had when the timeline was made: the stored users and
    /// the ``omitted`` ones.
    public var favoritesCount: Int
    /// Of ``favoritesCount``, the favorites the phone left out of its snapshot (it did not fit
    /// the relay's limit): the list goes on on the phone. 0 when the watch has them all.
    public var omitted: Int
    /// For ``Content/user(_:)``: the user's 1-based position among the favorites.
    public var position: Int?
    /// The snapshot revision the entry was made from; `nil` before any snapshot.
    public var revision: Int64?
    /// True when the configured user was deleted and this entry falls back to the first favorite.
    public var selectionFellBack: Bool

    /// An entry dated `date` showing `content`.
    public init(
        date: Timestamp, content: Content, favoritesCount: Int, omitted: Int = 0, position: Int? = nil,
        revision: Int64? = nil, selectionFellBack: Bool = false
    ) {
        self.timestamp = date
        self.content = content
        self.favoritesCount = favoritesCount
        self.omitted = omitted
        self.position = position
        self.revision = revision
        self.selectionFellBack = selectionFellBack
    }

    /// ``timestamp`` as WidgetKit's entry date.
    public var date: Date { timestamp.date }

    /// Whether the entry is rendered redacted (`.redacted(reason: .placeholder)`).
    public var isRedacted: Bool { content == .placeholder }

    /// The user shown, if any.
    public var user: User? {
        if case .user(let u) = content { return u }
        return nil
    }

    /// A one-word name of the content: `placeholder`, `empty`, `count` or `user`.
    public var contentKind: String {
        switch content {
        case .placeholder: "placeholder"
        case .empty: "empty"
        case .count: "count"
        case .user: "user"
        }
    }
}
