import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct ReloadBudgetTests {
    let favorites = Fx.snapshot(1, Fx.three)

    /// Requests and flushes `count` reloads, one a minute from minute `from`.
    func reload(_ s: inout WidgetScheduler, count: Int, from: Int64 = 1) -> [WidgetEvent] {
        var events: [WidgetEvent] = []
        for i in 0..<Int64(count) {
            let t = Fx.at(minutes: from + i)
            s.reloadTimelines(ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: t, now: t)
            events += s.flush(now: t, favorites: favorites).events
        }
        return events
    }

    @Test func theBudgetRollsOver24Hours() {
        var b = ReloadBudget(limit: 2)
        let r1 = b.spend(at: Fx.t0)
        #expect(r1)
        let r2 = b.spend(at: Fx.at(hours: 1))
        #expect(r2)
        let r3 = b.spend(at: Fx.at(hours: 2))
        #expect(!r3)
        #expect(b.remaining(at: Fx.at(hours: 2)) == 0)
        #expect(b.nextAvailable(at: Fx.at(hours: 2)) == Fx.at(hours: 24))
        #expect(b.remaining(at: Fx.at(hours: 24)) == 1)
        let r4 = b.spend(at: Fx.at(hours: 24))
        #expect(r4)
        #expect(b.used(at: Fx.at(hours: 25)) == 1)
        #expect(ReloadBudget(limit: 0).nextAvailable(at: Fx.t0) == nil)
    }

    @Test func anExhaustedBudgetLeavesTheWidgetStaleWithItsOldEntries() {
        var s = Fx.single(.smartStack(.accessoryRectangular), favorites: favorites)
        let events = reload(&s, count: 70)
        #expect(events.compactMap(\.reload).count == 70)
        #expect(events.compactMap(\.staleReport).isEmpty)
        let before = s.first
        #expect(before.generation == 71)

        let t = Fx.at(minutes: 100)
        s.reloadTimelines(ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: t, now: t)
        let pass = s.flush(now: t, favorites: Fx.snapshot(2, [Fx.gaearon]))
        #expect(pass.reloads.isEmpty)
        #expect(pass.staleReports.count == 1)
        let report = pass.staleReports[0]
        #expect(report.generation == 71)
        #expect(report.reason == .snapshotReceived)
        #expect(report.retryAt == Fx.at(minutes: 1).adding(milliseconds: 86_400_000))
        #expect(s.first.isStale)
        #expect(s.first.generation == before.generation)
        #expect(s.first.timeline == before.timeline)
        #expect(s.first.budget.remaining(at: t) == 0)
        // Flushing again without new requests reports nothing new; a new request is reported.
        let r5 = s.flush(now: Fx.at(minutes: 101), favorites: favorites)
        #expect(r5.staleReports.isEmpty)
        s.reloadTimelines(ofKind: .favorites, now: Fx.at(minutes: 102))
        #expect(s.nextWakeUp(now: Fx.at(minutes: 102)) == Fx.at(minutes: 102).adding(milliseconds: 100))
        let r6 = s.flush(now: Fx.at(minutes: 103), favorites: favorites)
        #expect(r6.staleReports.map(\.requestCount) == [2])
    }

    @Test func aStaleWidgetRecoversWhenTheWindowRolls() {
        var s = Fx.single(.smartStack(.accessoryRectangular), favorites: favorites)
        _ = reload(&s, count: 70)
        let t = Fx.at(minutes: 200)
        s.reloadTimelines(ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: t, now: t)
        _ = s.flush(now: t, favorites: favorites)
        #expect(s.first.isStale)
        let retry = Fx.at(minutes: 1).adding(milliseconds: 86_400_000)
        #expect(s.nextWakeUp(now: Fx.at(minutes: 201)) == retry)
        let r7 = s.flush(now: retry.adding(milliseconds: -1), favorites: favorites)
        #expect(r7.reloads.isEmpty)
        let pass = s.flush(now: retry, favorites: Fx.snapshot(2, [Fx.gaearon]))
        #expect(pass.reloads.map(\.reason) == [.snapshotReceived])
        #expect(pass.reloads.first?.latencyMilliseconds == TimeMath.between(t, retry))
        #expect(pass.reloads.first?.budgetLeft == 0)
        #expect(!s.first.isStale)
        #expect(s.first.content.lines.first == "gaearon")
    }

    @Test func reloadsAreFreeWhileTheAppIsInTheForeground() {
        var state = WatchAppState(widgets: Fx.single(.smartStack(.accessoryRectangular)))
        state.receive(favorites, sentAt: Fx.t0, now: Fx.t0)
        for i in Int64(1)...70 {
            state.requestReload(now: Fx.at(minutes: i))
            _ = state.flush(now: Fx.at(minutes: i))
        }
        state.receive(Fx.snapshot(2, Fx.three), sentAt: Fx.at(minutes: 71), now: Fx.at(minutes: 71))
        let r8 = state.flush(now: Fx.at(minutes: 71))
        #expect(r8.staleReports.count == 1)
        #expect(state.widgets.first.isStale)
        state.setForeground(true, now: Fx.at(minutes: 80))
        #expect(state.nextWakeUp(now: Fx.at(minutes: 80)) == Fx.at(minutes: 80))
        let pass = state.flush(now: Fx.at(minutes: 80))
        #expect(pass.reloads.count == 1)
        #expect(pass.reloads[0].charged == false)
        #expect(pass.reloads[0].reasons == [.snapshotReceived, .foregroundRequest])
        #expect(pass.reloads[0].entries.first?.revision == 2)
        #expect(!state.widgets.first.isStale)
        state.requestReload(now: Fx.at(minutes: 81))
        let r9 = state.flush(now: Fx.at(minutes: 81))
        #expect(r9.reloads.first?.charged == false)
        #expect(state.widgets.first.budget.remaining(at: Fx.at(minutes: 81)) == 0)
        state.setForeground(false, now: Fx.at(minutes: 82))
        state.requestReload(now: Fx.at(minutes: 82))
        let r10 = state.flush(now: Fx.at(minutes: 82))
        #expect(r10.staleReports.count == 1)
    }

    @Test func theNoBudgetSwitchNeverChargesOrRefuses() {
        var s = Fx.single(rules: WidgetRules(noBudget: true), favorites: favorites)
        let events = reload(&s, count: 150)
        #expect(events.compactMap(\.reload).count == 150)
        #expect(events.compactMap(\.reload).allSatisfy { !$0.charged })
        #expect(events.compactMap(\.staleReport).isEmpty)
        s.setNoBudget(false)
        let r11 = reload(&s, count: 1, from: 200)
        #expect(r11.compactMap(\.reload).first?.charged == true)
    }

    @Test(arguments: [
        (WidgetDescriptor.face(.accessoryCorner), 75), (WidgetDescriptor.smartStack(.accessoryRectangular), 70),
    ])
    func aFaceComplicationGets75AndASmartStackWidget70(descriptor: WidgetDescriptor, limit: Int) {
        var s = Fx.single(descriptor, favorites: favorites)
        #expect(s.first.budget.limit == limit)
        let events = reload(&s, count: limit + 1)
        #expect(events.compactMap(\.reload).count == limit)
        #expect(events.compactMap(\.staleReport).count == 1)
        #expect(events.compactMap(\.staleReport).first?.budgetLimit == limit)
    }

    @Test func budgetsAreConfigurableAndPerInstance() {
        let rules = WidgetRules(smartStackBudget: 2, watchFaceBudget: 3)
        var s = WidgetScheduler(
            widgets: [
                .smartStack(.accessoryRectangular), .face(.accessoryInline),
                WidgetDescriptor(id: "custom", family: .accessoryCorner, placement: .watchFace, budgetLimit: 1),
            ], rules: rules, now: Fx.t0)
        _ = s.flush(now: Fx.t0, favorites: favorites)
        #expect(s.widgets.map(\.budget.limit) == [2, 3, 1])
        let stale = reload(&s, count: 3).compactMap(\.staleReport).map(\.widgetID)
        #expect(stale == ["custom", "stack.rectangular", "custom"])
        #expect(s.widgets.map(\.isStale) == [true, false, true])
    }
}
