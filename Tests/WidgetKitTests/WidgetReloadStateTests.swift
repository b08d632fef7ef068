import Foundation
import Testing

@testable import WidgetKit

/// WidgetKit's rules on one widget, with no provider: each test drives the state machine
/// the way a host does (decide, install the answer, advance).
@Suite struct WidgetReloadStateTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)
    static func at(minutes m: Double) -> Date { grid(t0, m * 60) }
    static func at(hours h: Double) -> Date { grid(t0, h * 3600) }
    /// `date + seconds` on the millisecond grid the rules keep time on.
    static func grid(_ date: Date, _ seconds: TimeInterval) -> Date { WidgetTime.add(date, seconds) }

    let rules = WidgetReloadRules()

    /// A widget whose first (free) timeline of `entries` quarter-hour entries is installed at `t0`.
    func placed(limit: Int = 70, entries: Int = 1, policy: TimelineReloadPolicy = .never) -> WidgetReloadState {
        var w = WidgetReloadState(budget: ReloadBudget(limit: limit))
        w.request(ReloadRequest(reason: .widgetAdded, requestedAt: Self.t0))
        guard case .reload(_, let charged) = w.decide(now: Self.t0, rules: rules, appForeground: false) else {
            Issue.record("the first timeline was not loaded")
            return w
        }
        #expect(!charged)
        w.install(entryDates: (0..<entries).map { Self.at(minutes: Double($0) * 15) }, policy: policy, now: Self.t0, rules: rules)
        _ = w.advance(now: Self.t0)
        return w
    }

    /// Requests and flushes one reload at `now`; returns the decision.
    func reload(_ w: inout WidgetReloadState, at now: Date, foreground: Bool = false) -> ReloadDecision {
        w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: now))
        let decision = w.decide(now: now, rules: rules, appForeground: foreground)
        if case .reload = decision {
            w.install(entryDates: [now], policy: .never, now: now, rules: rules)
            _ = w.advance(now: now)
        }
        return decision
    }

    @Test func requestsBeforeAFlushBecomeOneReload() {
        var w = placed()
        let t = Self.at(minutes: 1)
        w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: t, dataDate: t))
        w.request(ReloadRequest(reason: .manual, requestedAt: Self.grid(t, 0.02)))
        w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: Self.grid(t, 0.04)))
        #expect(w.nextWakeUp(now: Self.grid(t, 0.04), rules: rules, appForeground: false) == Self.grid(t, 0.1))
        let decision = w.decide(now: Self.grid(t, 0.1), rules: rules, appForeground: false)
        guard case .reload(let batch, let charged) = decision else {
            Issue.record("expected one reload, got \(decision)")
            return
        }
        #expect(batch.requestCount == 3)
        #expect(batch.reasons == [.reloadTimelines, .manual])
        #expect(batch.dataDate == t)
        #expect(charged)
        #expect(w.budget.remaining(at: t) == 69)
        #expect(w.decide(now: Self.grid(t, 0.2), rules: rules, appForeground: false) == .none)
    }

    @Test(arguments: [40, 70])
    func theBudgetIsPerWidgetAndRollsOver24Hours(limit: Int) {
        var w = placed(limit: limit)
        var other = placed(limit: limit)
        for i in 0..<limit {
            let decision = reload(&w, at: Self.at(minutes: Double(i + 1)))
            #expect(decision != .none)
            if case .refused = decision { Issue.record("reload \(i + 1) of \(limit) refused") }
        }
        let over = reload(&w, at: Self.at(minutes: Double(limit + 1)))
        guard case .refused(_, let retryAt) = over else {
            Issue.record("reload \(limit + 1) of \(limit) was not refused: \(over)")
            return
        }
        #expect(retryAt == Self.grid(Self.at(minutes: 1), 86_400))
        // The other instance of the same widget has its own budget.
        if case .refused = reload(&other, at: Self.at(minutes: 2)) { Issue.record("another widget's budget was charged") }
        // A day after the first charged reload, its slot frees and the pending batch loads.
        let retry = Self.grid(Self.at(minutes: 1), 86_400)
        #expect(w.nextWakeUp(now: Self.at(hours: 2), rules: rules, appForeground: false) == retry)
        guard case .reload = w.decide(now: retry, rules: rules, appForeground: false) else {
            Issue.record("the pending reload did not load when the window freed a slot")
            return
        }
    }

    @Test func reloadsAreFreeWhileTheAppIsInTheForegroundOrBudgetsAreOff() {
        var w = placed(limit: 1)
        for i in 1...5 {
            guard case .reload(_, charged: false) = reload(&w, at: Self.at(minutes: Double(i)), foreground: true) else {
                Issue.record("foreground reload \(i) was charged or refused")
                return
            }
        }
        #expect(w.budget.remaining(at: Self.at(minutes: 6)) == 1)
        var debug = placed(limit: 0)
        debug.request(ReloadRequest(reason: .manual, requestedAt: Self.at(minutes: 1)))
        let off = WidgetReloadRules(noBudget: true)
        guard case .reload(_, let charged) = debug.decide(now: Self.at(minutes: 1), rules: off, appForeground: false)
        else {
            Issue.record("no-budget reload refused")
            return
        }
        #expect(!charged)
    }

    @Test func entriesCloserThanFiveMinutesAreFlagged() {
        var w = placed()
        w.request(ReloadRequest(reason: .manual, requestedAt: Self.at(minutes: 1)))
        _ = w.decide(now: Self.at(minutes: 1), rules: rules, appForeground: false)
        let dates = [Self.at(minutes: 1), Self.at(minutes: 2), Self.at(minutes: 7), Self.at(minutes: 6)]
        let warnings = w.install(entryDates: dates, policy: .atEnd, now: Self.at(minutes: 1), rules: rules)
        #expect(warnings == [.entriesTooClose(index: 1, gap: 60), .entriesOutOfOrder(index: 3)])
        #expect(warnings.first?.description == "entry 1 only 60 s after entry 0")
        let fine = w.install(
            entryDates: [Self.at(minutes: 1), Self.at(minutes: 6)], policy: .atEnd, now: Self.at(minutes: 1), rules: rules)
        #expect(fine.isEmpty)
    }

    @Test func aRefusedReloadLeavesTheWidgetStaleAndSaysSoOnce() {
        var w = placed(limit: 1, entries: 2)
        _ = reload(&w, at: Self.at(minutes: 1))
        let generation = w.generation
        let refused = reload(&w, at: Self.at(minutes: 2))
        guard case .refused(let batch, let retryAt) = refused else {
            Issue.record("expected a refusal, got \(refused)")
            return
        }
        #expect(batch.reason == .reloadTimelines)
        #expect(retryAt == Self.grid(Self.at(minutes: 1), 86_400))
        #expect(w.isStale)
        #expect(w.generation == generation)
        // Said once: a flush with no new request reports nothing more.
        #expect(w.decide(now: Self.at(minutes: 3), rules: rules, appForeground: false) == .none)
        // Coming to the foreground loads it (free).
        #expect(w.nextWakeUp(now: Self.at(minutes: 4), rules: rules, appForeground: true) == Self.at(minutes: 4))
        guard case .reload(let b, charged: false) = w.decide(now: Self.at(minutes: 4), rules: rules, appForeground: true)
        else {
            Issue.record("the foreground did not load the stale widget")
            return
        }
        #expect(b.requestCount == 1)
        #expect(!w.isStale)
    }

    @Test func atEndAndAfterAskForTheNextTimelineAtTheirTime() {
        var w = placed(entries: 4, policy: .atEnd)
        #expect(w.policyReloadDate(rules: rules) == Self.at(minutes: 45))
        #expect(w.decide(now: Self.at(minutes: 44), rules: rules, appForeground: false) == .none)
        guard case .reload(let batch, charged: true) = w.decide(now: Self.at(minutes: 45), rules: rules, appForeground: false)
        else {
            Issue.record(".atEnd did not reload at the last entry's date")
            return
        }
        #expect(batch.reason == .policyAtEnd)
        #expect(batch.firstRequestedAt == Self.at(minutes: 45))
        w.install(entryDates: [Self.at(minutes: 45)], policy: .after(Self.at(minutes: 47)), now: Self.at(minutes: 45), rules: rules)
        // `.after` two minutes on is held to the five-minute minimum between reloads.
        #expect(w.policyReloadDate(rules: rules) == Self.at(minutes: 50))
        #expect(w.decide(now: Self.at(minutes: 49), rules: rules, appForeground: false) == .none)
        guard case .reload(let after, _) = w.decide(now: Self.at(minutes: 50), rules: rules, appForeground: false) else {
            Issue.record(".after did not reload at its date")
            return
        }
        #expect(after.reason == .policyAfterDate)
        w.install(entryDates: [Self.at(minutes: 50)], policy: .never, now: Self.at(minutes: 50), rules: rules)
        // Its entry is due and not on screen yet: the flush at hand shows it; then nothing is planned.
        #expect(w.nextWakeUp(now: Self.at(minutes: 50), rules: rules, appForeground: false) == Self.at(minutes: 50))
        #expect(w.advance(now: Self.at(minutes: 50)) == 0)
        #expect(w.nextWakeUp(now: Self.at(minutes: 50), rules: rules, appForeground: false) == nil)
    }

    @Test func eachEntryComesOnScreenAtItsDateAndALateFlushShowsOnlyTheDueOne() {
        var w = placed(entries: 4)
        #expect(w.displayedIndex == 0)
        #expect(w.nextWakeUp(now: Self.t0, rules: rules, appForeground: false) == Self.at(minutes: 15))
        #expect(w.advance(now: Self.at(minutes: 14)) == nil)
        #expect(w.advance(now: Self.at(minutes: 33)) == 2)
        #expect(w.advance(now: Self.at(minutes: 34)) == nil)
    }

    @Test func anAbandonedReloadKeepsTheTimelineAndAsksAgainAfterTheMinimumInterval() {
        var w = placed(entries: 2, policy: .atEnd)
        guard case .reload = w.decide(now: Self.at(minutes: 15), rules: rules, appForeground: false) else {
            Issue.record("no policy reload")
            return
        }
        w.abandonReload(now: Self.at(minutes: 15))
        #expect(w.advance(now: Self.at(minutes: 15)) == 1)
        #expect(w.generation == 1)
        #expect(w.entryDates.count == 2)
        // One provider that did not answer in time does not stop the widget for the day: the
        // policy asks again, no sooner than the minimum interval.
        #expect(w.nextWakeUp(now: Self.at(minutes: 15), rules: rules, appForeground: false) == Self.at(minutes: 20))
        guard case .reload(let again, _) = w.decide(now: Self.at(minutes: 20), rules: rules, appForeground: false) else {
            Issue.record("the policy did not ask again")
            return
        }
        #expect(again.reason == .policyAtEnd)
    }

    /// Entries show at their date, never before: a timeline whose entries all lie ahead keeps
    /// what was on screen until the first one's date.
    @Test func aTimelineAheadOfNowShowsItsFirstEntryAtItsDate() {
        var w = placed(entries: 1, policy: .never)
        #expect(w.displayedIndex == 0)
        w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: Self.at(minutes: 10)))
        guard case .reload = w.decide(now: Self.at(minutes: 10), rules: rules, appForeground: false) else {
            Issue.record("no reload")
            return
        }
        w.install(entryDates: [Self.at(minutes: 60), Self.at(minutes: 120)], policy: .atEnd, now: Self.at(minutes: 10), rules: rules)
        #expect(w.advance(now: Self.at(minutes: 10)) == nil)
        #expect(w.nextWakeUp(now: Self.at(minutes: 10), rules: rules, appForeground: false) == Self.at(minutes: 60))
        // At that time the host flushes (the wake-up is due), which shows it.
        #expect(w.nextWakeUp(now: Self.at(minutes: 60), rules: rules, appForeground: false) == Self.at(minutes: 60))
        #expect(w.advance(now: Self.at(minutes: 60)) == 0)
    }

    /// Entries out of order are reported and shown in date order; `.atEnd` asks after the latest.
    @Test func entriesOutOfOrderAreShownInDateOrder() {
        var w = placed(entries: 1, policy: .never)
        w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: Self.at(minutes: 10)))
        _ = w.decide(now: Self.at(minutes: 10), rules: rules, appForeground: false)
        let dates = [Self.at(minutes: 10), Self.at(minutes: 130), Self.at(minutes: 70)]
        let warnings = w.install(entryDates: dates, policy: .atEnd, now: Self.at(minutes: 10), rules: rules)
        #expect(warnings.contains(.entriesOutOfOrder(index: 2)))
        #expect(WidgetReloadState.chronologicalOrder(dates) == [0, 2, 1])
        #expect(w.entryDates == [Self.at(minutes: 10), Self.at(minutes: 70), Self.at(minutes: 130)])
        #expect(w.policyReloadDate(rules: rules) == Self.at(minutes: 130))
    }

    /// A timeline with no entries keeps what is on screen; with `.atEnd` it asks again after the
    /// minimum interval, the first timeline of the day as much as a later one.
    @Test(arguments: [true, false])
    func anEmptyAtEndTimelineAsksAgainAfterTheMinimumInterval(first: Bool) {
        var w = WidgetReloadState(budget: ReloadBudget(limit: 70))
        w.request(ReloadRequest(reason: .widgetAdded, requestedAt: Self.t0))
        _ = w.decide(now: Self.t0, rules: rules, appForeground: false)
        w.install(entryDates: first ? [] : [Self.t0], policy: first ? .atEnd : .never, now: Self.t0, rules: rules)
        if !first {
            w.request(ReloadRequest(reason: .reloadTimelines, requestedAt: Self.at(minutes: 30)))
            _ = w.decide(now: Self.at(minutes: 30), rules: rules, appForeground: false)
            w.install(entryDates: [], policy: .atEnd, now: Self.at(minutes: 30), rules: rules)
        }
        let installedAt = first ? Self.t0 : Self.at(minutes: 30)
        #expect(w.policyReloadDate(rules: rules) == Self.grid(installedAt, rules.minimumReloadInterval))
    }
}
