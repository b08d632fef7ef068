import Foundation
import StaleFavoritesWidget
import Testing
import WidgetKit

/// The seed app's bug ("the widget did not refresh after the favorites changed") and its fix,
/// on WidgetKit's rules: the phone sends a new favorites list at 09:00 and another at 18:30.
@Suite struct StaleFavoritesWidgetTests {
    /// A day of the favorites complication with `app` receiving the phone's lists.
    func day(_ makeApp: (FavoritesStore) -> any FavoritesReceiver) async -> (WidgetDay<FavoritesEntry>, WidgetHost<FavoritesEntry>) {
        let store = FavoritesStore()
        store.save(["octocat"])
        let app = makeApp(store)
        let host = WidgetHost(
            kind: FavoritesProvider.kind, provider: FavoritesProvider(store: store), describe: { $0.summary })
        host.place(.accessoryCorner)
        host.place(.accessoryRectangular)
        host.at(hours: 9, "phone: + torvalds") { app.receive(["octocat", "torvalds"]) }
        host.at(hours: 18, minutes: 30, "phone: - octocat") { app.receive(["torvalds"]) }
        return (await host.run(), host)
    }

    @Test func withoutReloadTimelinesTheWidgetStaysStaleAllDay() async throws {
        let (day, host) = await day { StoringWatchApp(store: $0) }
        try StripFiles.write(day, "stale-favorites-bug")
        let nine = host.date(hours: 9)
        let error = #expect(throws: WidgetExpectationFailure.self) {
            try day.expectShown(.accessoryRectangular, within: 60, of: nine, "torvalds") { $0.logins.contains("torvalds") }
        }
        #expect(error?.description.contains("did the app call reloadTimelines") == true)
        // Midnight's list, still on the face at the end of the day; only the first timeline loaded.
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 23, minutes: 59))?.entry.logins == ["octocat"])
        #expect(day.reloads.map(\.reasons) == [[.widgetAdded], [.widgetAdded]])
        #expect(day.appEvents.allSatisfy { $0.reloadCalls.isEmpty })
        // Not a budget problem: nothing was refused.
        try day.expectNoRefusedReloads()
    }

    @Test func storingThenReloadingShowsEachListWithinASecond() async throws {
        let (day, host) = await day { ReloadingWatchApp(store: $0) }
        try StripFiles.write(day, "stale-favorites-fixed")
        for family in [WidgetFamily.accessoryRectangular, .accessoryCorner] {
            try day.expectShown(family, within: 1, of: host.date(hours: 9), "torvalds") { $0.logins == ["octocat", "torvalds"] }
            try day.expectShown(family, within: 1, of: host.date(hours: 18, minutes: 30), "octocat gone") {
                $0.logins == ["torvalds"]
            }
        }
        #expect(day.reloads(.accessoryCorner).map(\.reasons) == [[.widgetAdded], [.reloadTimelines], [.reloadTimelines]])
        #expect(day.reloads(.accessoryCorner).last?.budgetLeft == 68)
        try day.expectNoRefusedReloads()
        try day.expectProviderAlwaysCompleted()
    }
}
