import AppIntents
import Foundation
import Primitives
import Testing
import WidgetKit

/// The app's side of the documented rules: where `WidgetCenter` calls count from, and what a
/// test reads from the day (`expectShown`, `expectNoRefusedReloads`, the log, the strip).
extension WidgetDocumentedRulesTests {
    /// A host whose provider shows the app's stored value, placed as README's example places it.
    static func storeHost() -> (DocumentedRulesProvider, WidgetHost<RuleEntry>) {
        let provider = DocumentedRulesProvider(always: .entries(0, policy: .never))
        let host = WidgetHost(kind: kind, provider: provider)
        host.place(.accessoryRectangular)
        host.place(.accessoryCircular, budget: 40)
        return (provider, host)
    }

    /// The app event labelled `label`.
    static func event(_ label: String, in day: WidgetDay<RuleEntry>) -> AppEventRecord? {
        day.appEvents.first { $0.label == label }
    }

    // MARK: - README's example

    @Test func theReadmeExampleShowsNewDataWithinAMinute() async throws {
        let (provider, host) = Self.storeHost()
        host.at(hours: 9, "new data") {
            provider.stored.withLock { $0 = 42 }
            WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
        }
        host.foreground(at: host.date(hours: 12))
        let day = await host.run()
        #expect(day.widgets.map(\.id) == ["rules.accessoryRectangular", "rules.accessoryCircular"])
        #expect(day.widget(.accessoryCircular)?.budget == 40)
        let shown = try day.expectShown(.accessoryRectangular, within: 60, of: host.date(hours: 9)) { $0.value == 42 }
        #expect(shown.from >= host.date(hours: 9))
        try day.expectShown(.accessoryCircular, within: 60, of: host.date(hours: 9)) { $0.value == 42 }
        try day.expectNoRefusedReloads()
        #expect(day.log.count == day.reloads.count + day.refusals.count + day.providerFailures.count)
        #expect(day.svgStrip().contains("<svg"))
    }

    // MARK: - The day's expectations

    @Test func expectShownFailsWhenTheDataCameLaterAndCountsWhatIsOnScreenAtTheChange() async throws {
        let (provider, host) = Self.storeHost()
        host.at(hours: 9, "saved, no reload") { provider.stored.withLock { $0 = 42 } }
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 10))
        let day = await host.run()
        #expect(throws: WidgetExpectationFailure.self) {
            try day.expectShown(.accessoryRectangular, within: 60, of: host.date(hours: 9)) { $0.value == 42 }
        }
        let late = try day.expectShown(.accessoryRectangular, within: 3_660, of: host.date(hours: 9)) { $0.value == 42 }
        #expect(late.from >= host.date(hours: 10))
        // Already on screen at the change: that counts, with no time at all.
        let onScreen = try day.expectShown(.accessoryRectangular, within: 0, of: host.date(hours: 11)) {
            $0.value == 42
        }
        #expect(onScreen.from < host.date(hours: 11))
    }

    @Test func expectNoRefusedReloadsLooksOnlyWhereItIsAsked() async throws {
        let host = Self.host(
            DocumentedRulesProvider(always: .entries(0, policy: .never)), rules: WidgetReloadRules(dailyBudget: 1))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 9))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 10))
        let day = await host.run(for: 2 * 86_400)
        let refusal = try #require(day.refusals.first)
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads() }
        try day.expectNoRefusedReloads(to: refusal.at)
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads(from: refusal.at) }
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads(onDay: 1) }
        try day.expectNoRefusedReloads(onDay: 2)
    }

    @Test func theStripDrawsTheSameDayAsTheSameBytesAndMarksRefusals() async {
        func day(budget: Int) async -> WidgetDay<RuleEntry> {
            let host = Self.host(
                DocumentedRulesProvider(always: .entries(0, 1_800, policy: .atEnd)),
                rules: WidgetReloadRules(dailyBudget: budget))
            return await host.run()
        }
        let starved = await day(budget: 3)
        #expect(!starved.refusals.isEmpty)
        #expect(starved.providerFailures.isEmpty)
        let strip = starved.svgStrip()
        #expect(strip.contains("<svg") && strip.hasSuffix("</svg>\n"))
        #expect(await day(budget: 3).svgStrip() == strip)
        // Each refused reload is marked ×, beyond the legend's one.
        let healthy = await day(budget: 70).svgStrip()
        #expect(strip.count(of: "×") == healthy.count(of: "×") + starved.refusals.count)
    }

    // MARK: - Where WidgetCenter calls count from

    @Test func getCurrentConfigurationsCallsItsHandlerLaterAndItsReloadIsTheEvents() async throws {
        let (_, host) = Self.storeHost()
        let seen = LockedState<[String]?>(nil)
        let unsetRightAfter = LockedState<Bool?>(nil)
        host.at(hours: 9, "configurations") {
            WidgetCenter.shared.getCurrentConfigurations { result in
                seen.withLock { $0 = ((try? result.get()) ?? []).map(\.description) }
                WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
            }
            let unset = seen.withLock { $0 == nil }
            unsetRightAfter.withLock { $0 = unset }
        }
        let day = await host.run()
        #expect(unsetRightAfter.withLock { $0 } == true)
        #expect(seen.withLock { $0?.sorted() } == ["rules accessoryCircular", "rules accessoryRectangular"])
        #expect(Self.event("configurations", in: day)?.reloadCalls == [Self.kind])
        #expect(!day.appEvents.contains { $0.isUnscoped })
        #expect(Self.requested(day).map(\.requestedAt) == [host.date(hours: 9), host.date(hours: 9)])
    }

    @Test func callsFromDispatchQueuesAndAThreadWithOneHostRunningCountInTheRunningEvent() async throws {
        // Another suite's host may run beside this one: the call still finds this host by its
        // kind, which only this serialized suite's hosts have (two of them running would make it
        // do nothing: the next test's rule). Tried until it counts (for up to about 30 s),
        // checking each outcome.
        for _ in 1...3_000 {
            let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
            host.at(hours: 9, "delegate queue") {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue(label: "rules.delegate").async {
                        WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
                        done.resume()
                    }
                }
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.main.async {
                        WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
                        done.resume()
                    }
                }
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    Thread {
                        WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
                        done.resume()
                    }.start()
                }
            }
            let day = await host.run()
            #expect(!day.appEvents.contains { $0.isUnscoped })
            let event = try #require(Self.event("delegate queue", in: day))
            if event.reloadCalls.isEmpty {
                #expect(Self.requested(day).isEmpty)
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            #expect(event.reloadCalls == [Self.kind, Self.kind, Self.kind])
            #expect(Self.requested(day).map(\.requestedAt) == [host.date(hours: 9)])
            #expect(Self.requested(day).map(\.requestCount) == [3])
            return
        }
        Issue.record("this host never ran alone")
    }

    /// Two hosts of one kind: the kind does not tell whose the call is (README).
    @Test func aDispatchQueueCallWithSeveralHostsOfOneKindRunningDoesNothing() async throws {
        let (bRunning, bRunningGo) = AsyncStream.makeStream(of: Void.self)
        let (aCalled, aCalledGo) = AsyncStream.makeStream(of: Void.self)
        async let dayA = Self.day(label: "A") {
            for await _ in bRunning { break }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue(label: "rules.delegate").async {
                    WidgetCenter.shared.reloadTimelines(ofKind: Self.kind)
                    done.resume()
                }
            }
            aCalledGo.yield()
        }
        async let dayB = Self.day(label: "B") {
            bRunningGo.yield()
            for await _ in aCalled { break }
        }
        for day in await [dayA, dayB] {
            #expect(day.appEvents.allSatisfy { $0.reloadCalls.isEmpty })
            #expect(Self.requested(day).isEmpty)
        }
    }

    /// A day whose app event at 9 h, labelled `label`, runs `action`.
    static func day(label: String, _ action: @escaping @Sendable () async -> Void) async -> WidgetDay<RuleEntry> {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        host.at(hours: 9, label, action)
        return await host.run()
    }

    @Test func aDetachedTaskSeesNoHost() async throws {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        host.at(hours: 9, "detached") {
            await Task.detached { WidgetCenter.shared.reloadTimelines(ofKind: Self.kind) }.value
        }
        let day = await host.run()
        #expect(day.appEvents.allSatisfy { $0.reloadCalls.isEmpty })
        #expect(Self.requested(day).isEmpty)
    }

    @Test func invalidateRelevanceIsCountedForTheDaysKindAndDoesNothingElse() async {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        host.at(hours: 9, "relevance") {
            WidgetCenter.shared.invalidateRelevance(ofKind: Self.kind)
            WidgetCenter.shared.invalidateRelevance(ofKind: "another kind")
            WidgetCenter.shared.invalidateRelevance(ofKind: Self.kind)
            WidgetCenter.shared.invalidateConfigurationRecommendations()
        }
        let day = await host.run()
        #expect(day.relevanceInvalidated == 2)
        #expect(day.recommendationsInvalidated == 1)
        #expect(day.reloads.count == 1)
        #expect(Self.event("relevance", in: day)?.reloadCalls == [])
    }

    @Test func reloadAllTimelinesReloadsEveryWidgetAndAMisspeltKindNone() async throws {
        let (_, host) = Self.storeHost()
        host.at(hours: 9, "misspelt") { WidgetCenter.shared.reloadTimelines(ofKind: "ruels") }
        host.at(hours: 10, "all") { WidgetCenter.shared.reloadAllTimelines() }
        let day = await host.run()
        #expect(Self.event("misspelt", in: day)?.unknownKinds == ["ruels"])
        #expect(Self.event("all", in: day)?.reloadCalls == [nil])
        let all = day.reloads.filter { $0.reasons == [.reloadAllTimelines] }
        #expect(all.map(\.family) == [.accessoryRectangular, .accessoryCircular])
        #expect(day.reloads.count == 4)
    }

    // MARK: - An intent-configured provider

    @Test func anIntentProviderGetsItsConfigurationInTheSnapshotAndTheDay() async throws {
        let provider = IntentRulesProvider()
        let host = WidgetHost(kind: Self.kind, provider: provider)
        host.place(.accessoryRectangular, configuration: RulesIntent(login: "torvalds"))
        _ = try await host.snapshot(.accessoryRectangular, configuration: RulesIntent(login: "gaearon"))
        _ = await host.run()
        #expect(provider.calls.withLock { $0 } == ["snapshot gaearon preview", "timeline torvalds"])
    }
}

/// A configuration intent: which user the widget shows.
struct RulesIntent: WidgetConfigurationIntent {
    var login = "octocat"
}

/// The async, intent-configured form of a provider, recording each call.
struct IntentRulesProvider: AppIntentTimelineProvider, Sendable {
    let calls = LockedState<[String]>([])

    func placeholder(in context: Context) -> RuleEntry {
        RuleEntry(date: Date(), call: -1, index: 0, value: 0)
    }

    func snapshot(for configuration: RulesIntent, in context: Context) async -> RuleEntry {
        calls.withLock { $0.append("snapshot \(configuration.login)\(context.isPreview ? " preview" : "")") }
        return RuleEntry(date: Date(), call: -2, index: 0, value: 0)
    }

    func timeline(for configuration: RulesIntent, in context: Context) async -> Timeline<RuleEntry> {
        calls.withLock { $0.append("timeline \(configuration.login)\(context.isPreview ? " preview" : "")") }
        return Timeline(entries: [RuleEntry(date: Date(), call: 0, index: 0, value: 0)], policy: .never)
    }
}
