import Foundation
import GitExplorerPayloads
import Primitives
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

/// The favorites widget as a WidgetKit provider: the same timelines the watch's scheduler
/// shows, and a day of it under ``WidgetHost``.
@Suite struct FavoritesWidgetProviderTests {
    /// The watch's stored snapshot, as the widget extension would read it.
    final class SnapshotStore: Sendable {
        private let value = LockedState<FavoritesSnapshot?>(nil)
        var snapshot: FavoritesSnapshot? { value.withLock { $0 } }
        func save(_ s: FavoritesSnapshot) { value.withLock { $0 = s } }
    }

    /// Through the protocol, as WidgetKit calls it.
    static func timeline<P: AppIntentTimelineProvider>(_ p: P, _ i: P.Intent, _ c: TimelineProviderContext) async
        -> Timeline<P.Entry>
    {
        await p.timeline(for: i, in: c)
    }

    static func snapshot<P: AppIntentTimelineProvider>(_ p: P, _ i: P.Intent, _ c: TimelineProviderContext) async
        -> P.Entry
    {
        await p.snapshot(for: i, in: c)
    }

    @Test func itAnswersWithTheSchedulersTimelinesThroughWidgetKitsTypes() async {
        let snapshot = Fx.snapshot(4, Fx.three)
        let provider = FavoritesWidgetProvider(favorites: { snapshot }, now: { Fx.t0.date })
        let context = TimelineProviderContext(family: .accessoryRectangular)
        let timeline = await Self.timeline(provider, SelectedUserIntent(), context)
        let expected = FavoritesTimelineProvider().timeline(
            in: .init(now: Fx.t0, family: .accessoryRectangular, favorites: Fx.three, revision: 4))
        #expect(WidgetTimeline(timeline) == expected)
        #expect(timeline.policy == .atEnd)
        #expect(timeline.entries.map(\.date) == expected.entries.map(\.timestamp.date))
        #expect(provider.placeholder(in: context).isRedacted)
        let snap = await Self.snapshot(provider, SelectedUserIntent(login: "gaearon"), context)
        #expect(snap.user?.login == "gaearon")
        #expect(provider.recommendations().map(\.intent.login) == [nil, "octocat", "torvalds", "gaearon"])
    }

    @Test func aDayOfTheFavoritesWidgetUnderTheHostShowsEachSnapshotWithinASecond() async throws {
        let store = SnapshotStore()
        store.save(Fx.snapshot(1, [Fx.octocat]))
        let host = WidgetHost(
            kind: WidgetKind.favorites.rawValue, provider: FavoritesWidgetProvider(favorites: { store.snapshot }),
            describe: { WidgetContent(family: .accessoryInline, entry: $0).lines.joined() })
        host.place(.accessoryCircular)
        host.place(.accessoryRectangular, configuration: SelectedUserIntent(login: "torvalds"))
        host.at(hours: 9, "snapshot 2 stored") {
            store.save(Fx.snapshot(2, Fx.three))
            WidgetCenter.shared.reloadTimelines(ofKind: WidgetKind.favorites.rawValue)
        }
        let day = await host.run()
        let nine = host.date(hours: 9)
        // Before: torvalds is not a favorite, so the configured widget falls back to the first.
        #expect(day.showing(.accessoryRectangular, at: nine)?.entry.selectionFellBack == true)
        try day.expectShown(.accessoryCircular, within: 1, of: nine, "3 favorites") { $0.favoritesCount == 3 }
        try day.expectShown(.accessoryRectangular, within: 1, of: nine, "torvalds") {
            $0.user?.login == "torvalds" && !$0.selectionFellBack
        }
        try day.expectNoRefusedReloads()
        try day.expectWellSpacedEntries()
        try day.expectProviderAlwaysCompleted()
    }
}
