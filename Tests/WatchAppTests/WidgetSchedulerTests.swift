import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct WidgetSchedulerTests {
    let favorites = Fx.snapshot(1, Fx.three)

    @Test func aPlacedWidgetShowsThePlaceholderUntilItsFirstFreeReload() {
        var s = WidgetScheduler(widgets: [.smartStack(.accessoryRectangular)], now: Fx.t0)
        #expect(s.first.content.isRedacted)
        #expect(s.first.generation == 0)
        #expect(s.nextWakeUp(now: Fx.t0) == Fx.t0.adding(milliseconds: 100))
        let pass = s.flush(now: Fx.t0, favorites: favorites)
        #expect(pass.reloads.map(\.reason) == [.widgetAdded])
        #expect(pass.reloads.first?.charged == false)
        #expect(pass.reloads.first?.generation == 1)
        #expect(pass.rendered.map(\.index) == [0])
        #expect(s.first.budget.remaining(at: Fx.t0) == 70)
        #expect(s.first.content.lines.first == "octocat")
    }

    @Test func threeRapidRequestsBecomeOneReload() {
        var s = Fx.single(favorites: favorites)
        let t = Fx.at(minutes: 1)
        s.reloadTimelines(ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: t, now: t)
        s.reloadTimelines(ofKind: .favorites, reason: .manual, now: t.adding(milliseconds: 20))
        s.reloadTimelines(
            ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: t, now: t.adding(milliseconds: 40))
        #expect(s.first.pending?.requestCount == 3)
        #expect(s.nextWakeUp(now: t.adding(milliseconds: 40)) == t.adding(milliseconds: 100))
        let pass = s.flush(now: t.adding(milliseconds: 100), favorites: favorites)
        #expect(pass.reloads.count == 1)
        let reload = pass.reloads[0]
        #expect(reload.generation == 2)
        #expect(reload.requestCount == 3)
        #expect(reload.reasons == [.snapshotReceived, .manual])
        #expect(reload.latencyMilliseconds == 100)
        #expect(reload.charged)
        #expect(reload.budgetLeft == 69)
        let r1 = s.flush(now: t.adding(milliseconds: 200), favorites: favorites)
        #expect(r1.reloads.isEmpty)
    }

    @Test func anEmptyTimelineKeepsTheEntriesOnScreenAndLaterPassesDoNotCrash() {
        let s = Fx.single(favorites: favorites)
        var w = s.first
        let before = w.timeline?.entries.count
        #expect((before ?? 0) > 1)
        let answer = w.install(
            Timeline(entries: [], policy: .never), now: Fx.at(minutes: 1), rules: WidgetRules().reloadRules)
        #expect(answer.entries.isEmpty)
        #expect(w.timeline?.entries.count == before)
        #expect(w.displayedEntry?.content == s.first.displayedEntry?.content)
        _ = w.flush(
            now: Fx.at(minutes: 100), favorites: favorites, provider: FavoritesTimelineProvider(), rules: WidgetRules(),
            appForeground: false)
        #expect(w.displayedIndex == (before ?? 0) - 1)
        #expect(w.displayedEntry != nil)
    }

    /// A timeline whose entries lie ahead, out of order: what was on screen stays until the
    /// earliest one's date, and they come in date order (the host's rules, WidgetKit's).
    @Test func aTimelineAheadKeepsTheEntryOnScreenAndShowsItsEntriesInDateOrder() {
        let s = Fx.single(favorites: favorites)
        var w = s.first
        let shown = w.displayedEntry
        #expect(shown != nil)
        let entries = w.timeline?.entries ?? []
        #expect(entries.count > 1)
        let late = FavoritesEntry(date: Fx.at(hours: 2), content: entries[0].content, favoritesCount: 7)
        let early = FavoritesEntry(date: Fx.at(hours: 1), content: entries[0].content, favoritesCount: 5)
        let answer = w.install(Timeline(entries: [late, early], policy: .never), now: Fx.at(minutes: 1), rules: WidgetRules().reloadRules)
        #expect(answer.entries.map(\.favoritesCount) == [5, 7])
        _ = w.flush(now: Fx.at(minutes: 2), favorites: favorites, provider: FavoritesTimelineProvider(), rules: WidgetRules(), appForeground: false)
        #expect(w.displayedEntry == shown)
        _ = w.flush(now: Fx.at(hours: 1), favorites: favorites, provider: FavoritesTimelineProvider(), rules: WidgetRules(), appForeground: false)
        #expect(w.displayedEntry?.favoritesCount == 5)
        _ = w.flush(now: Fx.at(hours: 2), favorites: favorites, provider: FavoritesTimelineProvider(), rules: WidgetRules(), appForeground: false)
        #expect(w.displayedEntry?.favoritesCount == 7)
    }

    @Test func requestsForAnotherKindAreIgnored() {
        var s = Fx.single(favorites: favorites)
        s.reloadTimelines(ofKind: WidgetKind(rawValue: "weather"), now: Fx.at(minutes: 1))
        #expect(s.first.pending == nil)
        s.reloadAllTimelines(now: Fx.at(minutes: 1))
        #expect(s.first.pending?.reason == .manual)
    }

    @Test func eachEntryIsRenderedAtItsDateAndAtEndAsksForTheNextTimeline() {
        var s = Fx.single(favorites: favorites)
        var now = Fx.t0
        var log: [String] = []
        while let next = s.nextWakeUp(now: now), next <= Fx.at(minutes: 100) {
            now = next
            for event in s.flush(now: now, favorites: favorites).events {
                switch event {
                case .rendered(let e): log.append("\(TimeMath.clock(now)) show \(e.content.lines[0])")
                case .reloaded(let r): log.append("\(TimeMath.clock(now)) reload \(r.reason) gen \(r.generation)")
                case .stale: log.append("stale")
                }
            }
        }
        // The last entry (09:45) comes on screen at its date, then the reload it is due with
        // replaces it with the next timeline's first.
        #expect(
            log == [
                "09:15 show torvalds", "09:30 show gaearon", "09:45 show octocat", "09:45 reload policyAtEnd gen 2",
                "09:45 show octocat", "10:00 show torvalds", "10:15 show gaearon", "10:30 show octocat",
                "10:30 reload policyAtEnd gen 3", "10:30 show octocat",
            ])
    }

    @Test func afterDateAsksForTheNextTimelineAtThatDate() {
        let provider = FavoritesTimelineProvider(policy: .after(.seconds(1200)))
        var s = Fx.single(provider: provider, favorites: favorites)
        #expect(s.first.timeline?.policy == .after(Fx.at(minutes: 20)))
        _ = s.flush(now: Fx.at(minutes: 16), favorites: favorites)
        #expect(s.nextWakeUp(now: Fx.at(minutes: 16)) == Fx.at(minutes: 20))
        let r2 = s.flush(now: Fx.at(minutes: 19), favorites: favorites)
        #expect(r2.reloads.isEmpty)
        let pass = s.flush(now: Fx.at(minutes: 20), favorites: favorites)
        #expect(pass.reloads.map(\.reason) == [.policyAfterDate])
        #expect(pass.reloads.first?.requestedAt == Fx.at(minutes: 20))
        #expect(s.first.timeline?.policy == .after(Fx.at(minutes: 40)))
    }

    @Test func aPolicyNeverFiresSoonerThanTheMinimumReloadInterval() {
        let provider = FavoritesTimelineProvider(policy: .after(.seconds(60)))
        var s = Fx.single(provider: provider, favorites: favorites)
        #expect(s.first.policyReloadDate(rules: s.rules) == Fx.at(minutes: 5))
        let r3 = s.flush(now: Fx.at(minutes: 4), favorites: favorites)
        #expect(r3.reloads.isEmpty)
        let r4 = s.flush(now: Fx.at(minutes: 5), favorites: favorites)
        #expect(r4.reloads.map(\.reason) == [.policyAfterDate])
    }

    @Test func neverWaitsForAnExplicitRequest() {
        var s = Fx.single(provider: FavoritesTimelineProvider(policy: .never), favorites: favorites)
        _ = s.flush(now: Fx.at(minutes: 45), favorites: favorites)
        #expect(s.first.displayedIndex == 3)
        #expect(s.nextWakeUp(now: Fx.at(minutes: 45)) == nil)
        let r5 = s.flush(now: Fx.at(hours: 30), favorites: favorites)
        #expect(r5.events.isEmpty)
        s.reloadTimelines(ofKind: .favorites, now: Fx.at(hours: 30))
        let r6 = s.flush(now: Fx.at(hours: 30), favorites: favorites)
        #expect(r6.reloads.map(\.reason) == [.manual])
    }

    @Test func aLateWakeUpRendersOnlyTheEntryNowDue() {
        var s = Fx.single(provider: FavoritesTimelineProvider(policy: .never), favorites: favorites)
        let pass = s.flush(now: Fx.at(minutes: 33), favorites: favorites)
        #expect(pass.rendered.map(\.index) == [2])
        #expect(pass.rendered.first?.entryDate == Fx.at(minutes: 30))
        #expect(pass.rendered.first?.at == Fx.at(minutes: 33))
    }

    @Test func aSnapshotIsStoredThenReloadsEveryWidgetWithItsLatency() {
        var state = WatchAppState.standard(now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        let sent = Fx.at(seconds: 60)
        let r7 = state.receive(Fx.snapshot(3, Fx.three), sentAt: sent, now: sent.adding(milliseconds: 250))
        #expect(r7)
        let pass = state.flush(now: sent.adding(milliseconds: 350))
        #expect(pass.reloads.count == 4)
        #expect(pass.reloads.allSatisfy { $0.reason == .snapshotReceived && $0.latencyMilliseconds == 350 })
        #expect(pass.reloads.allSatisfy { $0.entries.first?.revision == 3 })
        #expect(state.widgets.widget("face.circular")?.content.lines == ["3"])
        // An older revision is not stored and asks for nothing.
        let r8 = state.receive(Fx.snapshot(2, []), sentAt: sent, now: Fx.at(seconds: 70))
        #expect(!r8)
        #expect(state.widgets.widgets.allSatisfy { $0.pending == nil })
    }

    @Test func eventsReachSubscribersOfTheFeed() async {
        let feed = WidgetEventFeed()
        let stream = feed.subscribe()
        var s = WidgetScheduler(widgets: WidgetDescriptor.standard, now: Fx.t0)
        feed.publish(s.flush(now: Fx.t0, favorites: favorites).events)
        feed.finish()
        var received: [WidgetEvent] = []
        for await event in stream { received.append(event) }
        #expect(received.count == 8)
        #expect(received.compactMap(\.reload).map(\.widgetID) == WidgetDescriptor.standard.map(\.id))
    }
}
