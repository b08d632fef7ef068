import Foundation
import WidgetKit

/// What the favorites complication shows: the first favorite and how many there are.
public struct FavoritesEntry: TimelineEntry, Sendable {
    public let date: Date
    /// The stored favorites when the timeline was made.
    public let logins: [String]

    /// What the face shows.
    public var summary: String {
        guard let first = logins.first else { return "No favorites" }
        return logins.count == 1 ? first : "\(first) +\(logins.count - 1)"
    }
}

/// GitExplorer's favorites widget, as its watchOS extension would write it: it reads the
/// shared store and returns one entry with `.never`. Nothing else changes what it shows, so
/// the app must call `WidgetCenter.shared.reloadTimelines(ofKind:)` after storing new data.
public struct FavoritesProvider: TimelineProvider {
    /// The widget's kind string.
    public static let kind = "GitExplorerFavorites"

    let store: FavoritesStore

    /// A provider reading `store`.
    public init(store: FavoritesStore) {
        self.store = store
    }

    public func placeholder(in context: Context) -> FavoritesEntry {
        FavoritesEntry(date: Date(), logins: ["octocat"])
    }

    public func getSnapshot(in context: Context, completion: @escaping (FavoritesEntry) -> ()) {
        completion(FavoritesEntry(date: Date(), logins: context.isPreview ? ["octocat"] : store.favorites))
    }

    public func getTimeline(in context: Context, completion: @escaping (Timeline<FavoritesEntry>) -> ()) {
        let entry = FavoritesEntry(date: Date(), logins: store.favorites)
        completion(Timeline(entries: [entry], policy: .never))
    }
}
