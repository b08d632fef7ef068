import Foundation
import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// The `favorites` widget's provider on WidgetKit's API: an ``AppIntentTimelineProvider``
/// whose intent is the ``SelectedUserIntent``, reading the favorites the watch stored (never
/// the network), as GitExplorer's watchOS extension would.
///
/// The timelines are ``FavoritesTimelineProvider``'s (rotation, spacing, cap, policy); this
/// type answers WidgetKit's questions with them. Its methods are synchronous, which satisfies
/// the protocol's `async` requirements: ``WidgetScheduler`` calls them in its flush, and
/// ``WidgetHost`` awaits them like any provider's.
public struct FavoritesWidgetProvider: AppIntentTimelineProvider, Sendable {
    /// The entry type.
    public typealias Entry = FavoritesEntry
    /// The configuration intent.
    public typealias Intent = SelectedUserIntent

    /// How timelines are made: spacing, cap, policy.
    public var timelines: FavoritesTimelineProvider
    /// Reads the stored favorites (the watch's own store: App Groups do not cross devices).
    public var favorites: @Sendable () -> FavoritesSnapshot?
    /// The reload time: `Date()` on a watch, an injected instant in the scheduler.
    public var now: @Sendable () -> Date

    /// A provider making `timelines` from what `favorites` reads, at `now`.
    public init(
        _ timelines: FavoritesTimelineProvider = FavoritesTimelineProvider(),
        favorites: @escaping @Sendable () -> FavoritesSnapshot?, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.timelines = timelines
        self.favorites = favorites
        self.now = now
    }

    private func context(_ context: TimelineProviderContext, _ configuration: SelectedUserIntent)
        -> FavoritesTimelineProvider.Context
    {
        let snapshot = favorites()
        return FavoritesTimelineProvider.Context(
            now: Timestamp(now()), family: context.family.favoritesLayout, favorites: snapshot?.users ?? [],
            omitted: snapshot?.omitted ?? 0, revision: snapshot?.revision, configuration: configuration, isPreview: context.isPreview)
    }

    /// The redacted placeholder.
    public func placeholder(in context: TimelineProviderContext) -> FavoritesEntry {
        timelines.placeholder(in: self.context(context, SelectedUserIntent()))
    }

    /// The current entry (sample data in the gallery when there are no favorites).
    public func snapshot(for configuration: SelectedUserIntent, in context: TimelineProviderContext) -> FavoritesEntry {
        timelines.snapshot(in: self.context(context, configuration))
    }

    /// The timeline from now on over the stored favorites.
    public func timeline(for configuration: SelectedUserIntent, in context: TimelineProviderContext)
        -> Timeline<FavoritesEntry>
    {
        timelines.timeline(in: self.context(context, configuration)).timeline
    }

    /// watchOS: rotate through all favorites, or show one of them.
    public func recommendations() -> [AppIntentRecommendation<SelectedUserIntent>] {
        [AppIntentRecommendation(intent: SelectedUserIntent(), description: "All favorites")]
            + (favorites()?.users ?? []).map {
                AppIntentRecommendation(intent: SelectedUserIntent(login: $0.login), description: $0.login)
            }
    }
}
