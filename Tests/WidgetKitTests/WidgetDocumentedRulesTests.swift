import Foundation
import Testing
import WidgetKit

/// One test per rule README.md's "Test your own widget", the public API's doc comments and
/// the WidgetKit notes promise, written from those documents alone, with a provider of its own
/// (``DocumentedRulesProvider``). Serialized: one test at a time keeps this suite's hosts from
/// running beside each other (a dispatch queue's call finds its host by the suite's kind only
/// while no other host of that kind runs).
@Suite(.serialized)
struct WidgetDocumentedRulesTests {
    static let kind = "rules"
    static let hour: TimeInterval = 3_600

    /// A host for `provider` with `rules`, its widget placed in `accessoryRectangular`.
    static func host(
        _ provider: DocumentedRulesProvider, rules: WidgetReloadRules = WidgetReloadRules()
    ) -> WidgetHost<RuleEntry> {
        let host = WidgetHost(kind: kind, provider: provider, rules: rules)
        host.place(.accessoryRectangular)
        return host
    }

    /// The reloads the app asked for (not the first timeline, not a policy).
    static func requested(_ day: WidgetDay<RuleEntry>) -> [HostReload] {
        day.reloads.filter { $0.reasons.contains(.reloadTimelines) }
    }

    // MARK: - Coalescing

    @Test func requestsWithinATenthOfASecondOfTheFirstCoalesceIntoOneReload() async {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        for seconds in [0, 0.05, 0.09] {
            host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 9, seconds: seconds))
        }
        let day = await host.run()
        let reloads = Self.requested(day)
        #expect(reloads.count == 1)
        #expect(reloads.first?.requestCount == 3)
        #expect(reloads.first?.requestedAt == host.date(hours: 9))
    }

    @Test func requestsFartherApartThanATenthOfASecondAreReloadsOfTheirOwn() async {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        for seconds in [0, 0.15] { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 10, seconds: seconds)) }
        // Within 0.1 s of the one before, but not of the first: a reload of its own.
        for seconds in [0, 0.06, 0.12] {
            host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 11, seconds: seconds))
        }
        let day = await host.run()
        let reloads = Self.requested(day)
        #expect(reloads.map(\.requestCount) == [1, 1, 2, 1])
        #expect(
            reloads.map(\.requestedAt) == [
                host.date(hours: 10), host.date(hours: 10, seconds: 0.15), host.date(hours: 11),
                host.date(hours: 11, seconds: 0.12),
            ])
    }

    // MARK: - The budget

    @Test func theSeventyFirstChargedReloadInADayIsRefusedAndComesBack24HoursAfterTheFirst() async throws {
        #expect(WidgetReloadRules().dailyBudget == 70)
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        for k in 0...70 { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 1, minutes: Double(k) * 10)) }
        let day = await host.run(for: 2 * 86_400)
        #expect(day.widget(.accessoryRectangular)?.budget == 70)
        let charged = day.reloads.filter(\.charged)
        let firstDay = charged.filter { $0.at < host.date(hours: 24) }
        #expect(firstDay.count == 70)
        #expect(firstDay.last?.budgetLeft == 0)
        #expect(day.refusals.count == 1)
        let refusal = try #require(day.refusals.first)
        let seventyFirst = host.date(hours: 1, minutes: 700)
        #expect(refusal.at >= seventyFirst && refusal.at < seventyFirst.addingTimeInterval(1))
        #expect(refusal.budgetLimit == 70)
        let firstSpent = try #require(firstDay.first).at
        let givenBack = firstSpent.addingTimeInterval(86_400)
        #expect(Self.sameInstant(refusal.retryAt, givenBack))
        // The refused request is served when that slot frees, and the widget is stale until then.
        let retry = try #require(charged.first { $0.at > refusal.at })
        #expect(Self.sameInstant(retry.at, givenBack))
        #expect(retry.reasons == [.reloadTimelines])
        #expect(day.isStale(.accessoryRectangular, at: retry.at.addingTimeInterval(-1)))
        #expect(!day.isStale(.accessoryRectangular, at: retry.at))
    }

    @Test func theDailyBudgetIsSetInTheRulesAndPerPlacedWidget() async {
        let provider = DocumentedRulesProvider(always: .entries(0, policy: .never))
        let host = WidgetHost(kind: Self.kind, provider: provider, rules: WidgetReloadRules(dailyBudget: 3))
        host.place(.accessoryRectangular)
        host.place(.accessoryCircular, budget: 5)
        for h in 1...7 { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: Double(h))) }
        let day = await host.run()
        #expect(day.widget(.accessoryRectangular)?.budget == 3)
        #expect(day.widget(.accessoryCircular)?.budget == 5)
        // Each instance spends its own budget: one refusal each, when its own budget ran out.
        #expect(day.reloads(.accessoryRectangular).filter(\.charged).count == 3)
        #expect(day.reloads(.accessoryCircular).filter(\.charged).count == 5)
        #expect(day.refusals(.accessoryRectangular).first?.requestCount == 1)
        #expect(day.refusals(.accessoryRectangular).first.map { $0.at >= host.date(hours: 4) } == true)
        #expect(day.refusals(.accessoryRectangular).first.map { $0.at < host.date(hours: 5) } == true)
        #expect(day.refusals(.accessoryCircular).first.map { $0.at >= host.date(hours: 6) } == true)
        #expect(day.refusals(.accessoryCircular).first.map { $0.at < host.date(hours: 7) } == true)
    }

    @Test func reloadsAskedForWhileTheAppIsInTheForegroundAreFree() async {
        let host = Self.host(
            DocumentedRulesProvider(always: .entries(0, policy: .never)), rules: WidgetReloadRules(dailyBudget: 1))
        host.foreground(at: host.date(hours: 12))
        for m in [0.0, 10, 20] { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 12, minutes: m)) }
        // Asked in the foreground, reloaded just after the app left it: still free.
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 12, minutes: 59, seconds: 59.95))
        host.background(at: host.date(hours: 13))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 14))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 15))
        let day = await host.run()
        let inForeground = Self.requested(day).filter { $0.requestedAt < host.date(hours: 13) }
        #expect(inForeground.count == 4)
        #expect(inForeground.allSatisfy { !$0.charged && $0.budgetLeft == 1 })
        #expect(inForeground.allSatisfy { $0.reasons.contains(.foregroundRequest) })
        // In the background the one reload of the budget is charged, the next refused.
        let inBackground = Self.requested(day).filter { $0.requestedAt >= host.date(hours: 13) }
        #expect(inBackground.map(\.charged) == [true])
        #expect(day.refusals.count == 1)
        #expect(day.refusals.first.map { $0.at >= host.date(hours: 15) } == true)
    }

    @Test func noBudgetChargesAndRefusesNothing() async throws {
        let host = Self.host(
            DocumentedRulesProvider(always: .entries(0, policy: .after(Self.hour))),
            rules: WidgetReloadRules(dailyBudget: 1, noBudget: true))
        for h in 1...5 { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: Double(h), minutes: 30)) }
        let day = await host.run()
        #expect(Self.requested(day).count == 5)
        #expect(day.reloads.filter { $0.reasons.contains(.policyAfterDate) }.count > 5)
        #expect(day.reloads.allSatisfy { !$0.charged })
        #expect(day.refusals.isEmpty)
        try day.expectNoRefusedReloads()
    }

    // MARK: - Policies

    @Test func aPolicyNeverAsksSoonerThanFiveMinutesAfterTheLastReload() async {
        let provider = DocumentedRulesProvider { call in
            call == 0 ? .entries(0, policy: .after(60)) : .entries(0, policy: .never)
        }
        let day = await Self.host(provider).run()
        #expect(day.reloads.count == 2)
        #expect(day.reloads.map(\.at).last == day.reloads.first?.at.addingTimeInterval(300))
    }

    // MARK: - Entries

    @Test func entriesOutOfOrderAreFlaggedAndShownInDateOrder() async throws {
        let day = await Self.host(DocumentedRulesProvider(always: .entries(1_200, 0, 600, policy: .never))).run()
        let reload = try #require(day.reloads.first)
        #expect(reload.warnings.contains(.entriesOutOfOrder(index: 1)))
        #expect(day.timelineEntries().map(\.entry.index) == [1, 2, 0])
        #expect(day.timelineEntries().map(\.from) == [0.0, 600, 1_200].map { reload.at.addingTimeInterval($0) })
        #expect(throws: WidgetExpectationFailure.self) { try day.expectWellSpacedEntries() }
    }

    @Test func anEmptyAtEndTimelineKeepsTheScreenAndAsksAgainAfterFiveMinutes() async throws {
        let provider = DocumentedRulesProvider { call in
            switch call {
            case 0: .entries(0, policy: .after(Self.hour))
            case 1: .entries(policy: .atEnd)
            default: .entries(0, policy: .never)
            }
        }
        let day = await Self.host(provider).run()
        #expect(day.reloads.count == 3)
        let empty = try #require(day.reloads.dropFirst().first)
        let next = try #require(day.reloads.last)
        #expect(empty.warnings == [.noEntries])
        #expect(empty.entryCount == 0)
        #expect(next.at == empty.at.addingTimeInterval(300))
        #expect(next.reasons == [.policyAtEnd])
        #expect(day.showing(.accessoryRectangular, at: next.at.addingTimeInterval(-1))?.entry.call == 0)
        #expect(day.showing(.accessoryRectangular, at: next.at)?.entry.call == 2)
    }

    @Test func entriesUnderFiveMinutesApartAreFlagged() async throws {
        let close = await Self.host(DocumentedRulesProvider(always: .entries(0, 299, 600, policy: .never))).run()
        let warnings = try #require(close.reloads.first).warnings
        #expect(warnings.count == 1)
        guard case .entriesTooClose(index: 1, let gap) = warnings.first else {
            Issue.record("expected entry 1 flagged, got \(warnings)")
            return
        }
        #expect(abs(gap - 299) < 0.01)
        #expect(throws: WidgetExpectationFailure.self) { try close.expectWellSpacedEntries() }

        let spaced = await Self.host(DocumentedRulesProvider(always: .entries(0, 300, 600, policy: .never))).run()
        #expect(spaced.reloads.first?.warnings == [])
        try spaced.expectWellSpacedEntries()
    }

    // MARK: - Providers that never answer

    @Test func theRetriesOfAFirstTimelineAreChargedToTheBudget() async throws {
        let host = Self.host(
            DocumentedRulesProvider { _ in nil }, rules: WidgetReloadRules(dailyBudget: 3, providerTimeout: 0.1))
        let day = await host.run()
        let first = try #require(day.providerFailures.first).at
        // The first ask is free (the widget was just placed); the three retries spend the budget.
        #expect(day.providerFailures.map { $0.at.timeIntervalSince(first).rounded() } == [0, 300, 900, 2_100])
        let refusal = try #require(day.refusals.first)
        #expect(refusal.at.timeIntervalSince(first).rounded() == 4_500)
        let retryAt = try #require(refusal.retryAt)
        #expect(retryAt.timeIntervalSince(first) == 300 + 86_400)
    }

    @Test func aTimelineThatNeverComesLeavesTheOldOneAndItsPolicyAsksAgain() async throws {
        let provider = DocumentedRulesProvider { call in
            switch call {
            case 0: .entries(0, policy: .after(Self.hour))
            case 1: nil
            default: .entries(0, policy: .never)
            }
        }
        let day = await Self.host(provider, rules: WidgetReloadRules(providerTimeout: 0.1)).run()
        let failure = try #require(day.providerFailures.first)
        #expect(day.providerFailures.count == 1)
        let first = try #require(day.reloads.first).at
        #expect(failure.at == first.addingTimeInterval(Self.hour))
        let retry = try #require(day.reloads.dropFirst().first)
        #expect(retry.at == failure.at.addingTimeInterval(300))
        #expect(day.showing(.accessoryRectangular, at: retry.at.addingTimeInterval(-1))?.entry.call == 0)
        #expect(day.showing(.accessoryRectangular, at: retry.at)?.entry.call == 2)
    }

    // MARK: - Snapshots

    @Test func aSnapshotAsksGetSnapshotWithIsPreviewAndADayAsksGetTimelineWithout() async throws {
        let provider = DocumentedRulesProvider(always: .entries(0, policy: .never))
        provider.stored.withLock { $0 = 7 }
        let host = Self.host(provider)
        let before = Date()
        let entry = try await host.snapshot(.accessoryCircular)
        #expect(entry.value == 7 && entry.call == -2)
        // As the provider made it: dated from the wall clock, not moved onto the virtual one.
        #expect(entry.date >= before.addingTimeInterval(-1))
        _ = try await host.snapshot(.accessoryInline, isPreview: false)
        #expect(provider.snapshotContexts.withLock { $0.map(\.isPreview) } == [true, false])
        #expect(provider.snapshotContexts.withLock { $0.map(\.family) } == [.accessoryCircular, .accessoryInline])

        let day = await host.run()
        #expect(day.reloads.count == 1)
        #expect(provider.timelineContexts.withLock { $0.map(\.isPreview) } == [false])
    }

    // MARK: - Provider dates

    @Test func datesFromTheWallClockMoveOntoTheVirtualClockToTheSecond() async throws {
        // Entry 2: the next full hour of the wall clock, as a provider might compute it.
        let provider = DocumentedRulesProvider(note: { now in
            let t = now.timeIntervalSince1970
            return (t / 3_600).rounded(.down) * 3_600 + 3_600 - t
        }) { _ in .entries(0, 1_234.567, policy: .never) }
        let day = await Self.host(provider).run()
        let reload = try #require(day.reloads.first).at
        let from = Dictionary(uniqueKeysWithValues: day.timelineEntries().map { ($0.entry.index, $0.from) })
        // A date read while the call ran is the reload's now.
        #expect(from[0] == reload)
        #expect(from[1].map { abs($0.timeIntervalSince(reload) - 1_234.567) < 1 } == true)
        let gap = try #require(provider.notes.withLock { $0[0] })
        #expect(from[2].map { abs($0.timeIntervalSince(reload) - gap) < 1 } == true)
    }

    @Test func aVirtualProviderClockTakesDatesAsGiven() async throws {
        let provider = DocumentedRulesProvider(always: .entries(0, 600, policy: .after(Self.hour)))
        let host = WidgetHost(kind: Self.kind, provider: provider, providerClock: .virtual)
        provider.clock.withLock { $0 = host.clock }
        host.place(.accessoryRectangular)
        let day = await host.run(for: 2 * Self.hour)
        let reload = try #require(day.reloads.first).at
        let entries = day.timelineEntries()
        #expect(entries.first?.entry.date == reload)
        #expect(entries.allSatisfy { $0.from == $0.entry.date })
        #expect(day.reloads.dropFirst().first?.at == reload.addingTimeInterval(Self.hour))
    }

    // MARK: - Several days

    @Test func runForSeveralDaysKeepsTheRollingBudget() async throws {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .after(2 * Self.hour))))
        let day = await host.run(for: 3 * 86_400)
        #expect(day.end == host.date(hours: 72))
        let reloads = day.reloads.filter { $0.at < day.end }
        #expect(reloads.count == 36)
        #expect(reloads.dropFirst().allSatisfy { $0.charged })
        // Twelve a day: the rolling window never holds more than twelve, so 58 are always left.
        #expect(reloads.dropFirst(13).allSatisfy { $0.budgetLeft == 58 })
        #expect(day.timelineEntries().contains { $0.from >= host.date(hours: 48) })
        try day.expectNoRefusedReloads()
        try day.expectNoRefusedReloads(onDay: 3)
    }

    /// Whether two dates are the same instant on the host's millisecond grid.
    static func sameInstant(_ a: Date?, _ b: Date) -> Bool {
        guard let a else { return false }
        return abs(a.timeIntervalSince(b)) < 0.001
    }
}
