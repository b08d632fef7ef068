import BudgetBurnWidget
import Foundation
import Testing
import WidgetKit

/// A reload per data tick: the phone sends the step count every 10 minutes, all day, while the
/// watch app is in the background (WatchConnectivity wakes are not exempt from the budget).
@Suite struct BudgetBurnWidgetTests {
    /// Three days of the steps complication with `app` receiving a count every 10 minutes.
    func days(
        _ app: some StepsReceiver, store: StepsStore, rules: WidgetReloadRules = WidgetReloadRules()
    ) async -> (WidgetDay<StepsEntry>, WidgetHost<StepsEntry>) {
        let host = WidgetHost(
            kind: StepsProvider.kind, provider: StepsProvider(store: store), rules: rules, describe: { "\($0.steps)" })
        host.place(.accessoryCircular)
        var app = app
        let start = host.start
        host.every(600, until: host.date(hours: 72), "steps") { tick in
            app.receive(100 * (tick + 1), at: start.addingTimeInterval(Double(tick) * 600))
        }
        return (await host.run(for: 3 * 86_400), host)
    }

    @Test func reloadingEveryTickFreezesTheWidgetBeforeNoonOnDayOne() async throws {
        let store = StepsStore()
        let (day, host) = await days(ReloadEveryTickApp(store: store), store: store)
        try StripFiles.write(day, "budget-burn")
        // Midnight's tick joins the widget's first timeline, which is free; then 70 charged
        // reloads, one per tick from 00:10: the 72nd tick, at 11:50, is refused.
        let frozen = try #require(day.firstRefusal)
        #expect(frozen.at == host.date(hours: 11, minutes: 50, seconds: 0.1))
        #expect(WidgetStripStamp.day(of: frozen.at, from: host.start) == 1)
        #expect(day.reloads.first?.reasons == [.widgetAdded, .reloadTimelines])
        #expect(day.reloads.first?.charged == false)
        #expect(day.showing(.accessoryCircular, at: host.date(hours: 18))?.entry.steps == 7100)
        #expect(day.isStale(.accessoryCircular, at: host.date(hours: 18)))
        // From day 2 on, a slot frees 24 h after each charged reload (00:10 to 11:40), so
        // midnight's tick is refused too: the widget is frozen from 11:50 to 00:10 each night.
        let stale = day.staleIntervals(id: "Steps.accessoryCircular")
        #expect(stale.count == 3)
        #expect(stale.map { host.date(seconds: 0).distance(to: $0.from) / 3600 }.map { Int($0 * 60) } == [710, 2150, 3590])
        // Day 1: ticks 11:50–23:50 (73); days 2 and 3: those and midnight's (74).
        for (d, refused) in [(1, 73), (2, 74), (3, 74)] {
            let error = #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads(onDay: d) }
            #expect(error?.description.contains("\(refused) reload(s) refused") == true, "day \(d): \(error?.description ?? "")")
        }
    }

    @Test func underTheDebuggersNoBudgetItNeverFreezes() async throws {
        let store = StepsStore()
        let (day, _) = await days(ReloadEveryTickApp(store: store), store: store, rules: WidgetReloadRules(noBudget: true))
        try day.expectNoRefusedReloads()
        #expect(day.reloads.count == 3 * 144)
    }

    @Test func reloadingAtMostEveryHalfHourStaysWithinTheBudget() async throws {
        let store = StepsStore()
        let (day, host) = await days(ThrottledReloadApp(store: store), store: store)
        try StripFiles.write(day, "budget-burn-throttled")
        for d in 1...3 { try day.expectNoRefusedReloads(onDay: d) }
        try day.expectShown(.accessoryCircular, within: 1800, of: host.date(hours: 60)) { $0.steps >= 36_100 }
        #expect((day.budgetLeft(.accessoryCircular, at: host.date(hours: 71)) ?? 0) >= 70 - 48)
    }
}

/// Which simulated day (1-based) a date falls on.
enum WidgetStripStamp {
    static func day(of date: Date, from start: Date) -> Int { Int(date.timeIntervalSince(start) / 86_400) + 1 }
}
