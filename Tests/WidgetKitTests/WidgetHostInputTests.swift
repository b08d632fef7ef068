import Foundation
import Testing

@testable import WidgetKit

/// Bad set-up input is refused with an error value, never a crash; the expectations see the
/// whole run.
@Suite struct WidgetHostInputTests {
    @Test func placingAnIdTwiceIsRefusedAndPlacesOneWidget() async {
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: CounterStore()))
        #expect(host.place(.accessoryCircular) == nil)
        #expect(host.place(.accessoryCircular) == .alreadyPlaced(id: "counter.accessoryCircular"))
        #expect(host.place(.accessoryCircular, id: "second") == nil)
        #expect(host.setupErrors == [.alreadyPlaced(id: "counter.accessoryCircular")])
        let day = await host.run(for: 60)
        #expect(day.widgets.map(\.id) == ["counter.accessoryCircular", "second"])
    }

    @Test(arguments: [0, -1, 0.0001, .nan, .infinity, -.infinity] as [TimeInterval])
    func aBadIntervalSchedulesNothing(interval: TimeInterval) async {
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: CounterStore()))
        let error = host.every(interval, "tick") { _ in WidgetCenter.shared.reloadTimelines(ofKind: "counter") }
        #expect(error == .badInterval(interval) || (interval.isNaN && host.setupErrors.count == 1))
        let asyncError = host.every(interval, "async tick") { @Sendable _ in await Task.yield() }
        #expect(asyncError != nil)
        #expect(host.setupErrors.count == 2)
        #expect(host.setupErrors.first?.description.contains("at least 0.001") == true)
        let day = await host.run(for: 3600)
        #expect(day.appEvents.isEmpty)
        #expect(day.reloads.count == 1)
    }

    @Test func aRefusalAtTheRunsEndIsCaughtByExpectNoRefusedReloads() async throws {
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: CounterStore()))
        host.place(.accessoryCircular, budget: 1)
        host.reloadTimelines(ofKind: "counter", at: host.date(hours: 1))
        host.reloadTimelines(ofKind: "counter", at: host.date(hours: 1, minutes: 59, seconds: 59.9))
        let day = await host.run(for: 7200)
        #expect(day.refusals.map(\.at) == [day.end])
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads() }
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads(from: host.date(hours: 1)) }
        // An explicit `to` is excluded.
        try day.expectNoRefusedReloads(to: day.end)
    }

    @Test(arguments: [.infinity, .nan, 1e300] as [TimeInterval])
    func aProviderTimeoutOfNoFiniteLengthWaitsForTheAnswer(timeout: TimeInterval) async throws {
        // No limit, as while a provider is debugged: it crashed converting to milliseconds.
        let host = WidgetHost(
            kind: "counter", provider: LateProvider(), rules: WidgetReloadRules(providerTimeout: timeout))
        host.place(.accessoryCircular)
        let day = await host.run(for: 3600)
        try day.expectProviderAlwaysCompleted()
        #expect(day.reloads.count == 1)
        #expect(day.shown.last?.entry.count == 1)
    }

    @Test(arguments: ["debounce", "minimumReloadInterval", "budgetWindow", "minimumEntrySpacing"])
    func aRuleOfInfiniteSecondsMeansNeverInsteadOfCrashing(rule: String) async {
        var rules = WidgetReloadRules(dailyBudget: 1)
        switch rule {
        case "debounce": rules.debounce = .infinity
        case "minimumReloadInterval": rules.minimumReloadInterval = .infinity
        case "budgetWindow": rules.budgetWindow = .infinity
        default: rules.minimumEntrySpacing = .infinity
        }
        let host = counterHost(storing: 7, atHours: 1)
        host.rules = rules
        host.reloadTimelines(ofKind: "counter", at: host.date(hours: 2))
        let day = await host.run(for: 3 * 3600)
        if rule == "debounce" {
            #expect(day.reloads.isEmpty, "a request waits for ever")
        } else {
            // The first timeline is free, the 1 h reload spends the one reload, the 2 h one is refused.
            #expect(day.reloads.count == 2)
            #expect(day.refusals.count == 1)
        }
    }
}
