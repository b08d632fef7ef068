import Foundation
import Testing

@testable import WidgetKit

@Suite struct WidgetHostTests {
    @Test func aDayRunsWithEveryReloadItsReasonAndTheBudgetLeft() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        host.place(.accessoryRectangular)
        host.place(.accessoryCircular, budget: 40)
        host.at(hours: 9, "count 5") {
            store.set(5)
            WidgetCenter.shared.reloadTimelines(ofKind: "counter")
        }
        let day = await host.run()
        #expect(day.shown(.accessoryRectangular).map(\.entry.count) == [-1, 0, 5])
        #expect(day.shown(.accessoryRectangular).first?.isPlaceholder == true)
        let nine = host.date(hours: 9)
        let shown = try day.expectShown(.accessoryRectangular, within: 1, of: nine) { $0.count == 5 }
        #expect(shown.from == host.date(hours: 9, seconds: 0.1))
        #expect(day.reloads(.accessoryRectangular).map(\.reasons) == [[.widgetAdded], [.reloadTimelines]])
        #expect(day.reloads(.accessoryRectangular).map(\.charged) == [false, true])
        #expect(day.reloads(.accessoryRectangular).last?.budgetLeft == 69)
        #expect(day.reloads(.accessoryCircular).last?.budgetLeft == 39)
        #expect(day.appEvents.map(\.reloadCalls) == [["counter"]])
        try day.expectNoRefusedReloads()
        try day.expectProviderAlwaysCompleted()
        #expect(throws: WidgetExpectationFailure.self) {
            try day.expectShown(.accessoryRectangular, within: 3600, of: host.date(hours: 10)) { $0.count == 6 }
        }
    }

    /// A reload asked from a dispatch queue (a WatchConnectivity delegate's, `main.async`) or a
    /// thread carries no host: with one host running it is that host's, in the event still
    /// running. Other tests' hosts of the same kind ("counter") may run at the same time, and
    /// then whose call it is can't be told (it does nothing): try until no other one ran (for up
    /// to about 30 s: days with slow providers keep a host running for seconds).
    @Test func aReloadFromADispatchQueueReachesTheOnlyRunningHost() async throws {
        for _ in 0..<3_000 {
            let store = CounterStore()
            let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
            host.at(hours: 9, "data from the phone") {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().async {
                        store.set(5)
                        WidgetCenter.shared.reloadTimelines(ofKind: "counter")
                        done.resume()
                    }
                }
            }
            let day = await host.run()
            if day.appEvents.first?.reloadCalls == ["counter"] {
                #expect(day.appEvents.first?.isUnscoped == false)
                #expect(day.reloads.map(\.reasons) == [[.widgetAdded], [.reloadTimelines]])
                #expect(day.shown.last?.entry.count == 5)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("this host never ran alone")
    }

    @Test func aCallWithNoScopeGoesIntoTheOpenEventElseIsUnscoped() {
        let center = HostCenter(widgets: [])
        let scope = center.open()
        center.reloadTimelines(ofKind: "during")
        scope.close()
        center.reloadTimelines(ofKind: "after")
        #expect(center.drain() == ["during"])
        #expect(center.drainUnscoped() == ["after"])
    }

    @Test func withSeveralHostsRunningACallWithNoScopeHasNoHost() {
        let (a, b) = (HostCenter(widgets: []), HostCenter(widgets: []))
        RunningHosts.add(a)
        RunningHosts.add(b)
        #expect(RunningHosts.host() == nil)
        RunningHosts.remove(a)
        RunningHosts.remove(b)
    }

    /// A call naming a kind goes to the one running host of that kind, however many others run;
    /// a kind none or two of them host, and (with several running) a call naming none, have no host.
    @Test func withSeveralHostsRunningACallNamingAKindGoesToTheOneHostOfThatKind() {
        let (kindA, kindB) = ("only-a-" + UUID().uuidString, "only-b-" + UUID().uuidString)
        let a = HostCenter(widgets: [WidgetInfo(kind: kindA, family: .accessoryCircular)])
        let b = HostCenter(widgets: [WidgetInfo(kind: kindB, family: .accessoryCircular)])
        let b2 = HostCenter(widgets: [WidgetInfo(kind: kindB, family: .accessoryInline)])
        RunningHosts.add(a)
        RunningHosts.add(b)
        #expect(RunningHosts.host(kind: kindA) === a)
        #expect(RunningHosts.host(kind: kindB) === b)
        #expect(RunningHosts.host(kind: "nobody's") == nil)
        #expect(RunningHosts.host() == nil)
        RunningHosts.add(b2)
        #expect(RunningHosts.host(kind: kindB) == nil)
        #expect(RunningHosts.host(kind: kindA) === a)
        for center in [b, b2] { RunningHosts.remove(center) }
        // A host of another kind is never the call's, even running alone: another test's call
        // (or a misspelt kind) does not land in this host's day.
        #expect(RunningHosts.host(kind: kindB) == nil)
        #expect(RunningHosts.host(kind: kindA) === a)
        RunningHosts.remove(a)
    }

    /// A WatchConnectivity delegate's reload while another test's host runs: its kind tells whose
    /// it is, so it counts in this host's event (it did nothing, with a warning, before).
    @Test func aReloadFromADispatchQueueWhileAnotherHostRunsReachesTheHostOfItsKind() async throws {
        let kind = "mine-" + UUID().uuidString
        let otherRunning = AsyncGate()
        let release = AsyncGate()
        let other = WidgetHost(kind: "other-" + UUID().uuidString, provider: CountProvider(store: CounterStore()))
        other.at(hours: 1, "another test's event, held") {
            otherRunning.open()
            await release.wait()
        }
        async let otherDay = other.run()
        await otherRunning.wait()

        let store = CounterStore()
        let host = WidgetHost(kind: kind, provider: CountProvider(store: store))
        host.at(hours: 9, "data from the phone") {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    store.set(5)
                    WidgetCenter.shared.reloadTimelines(ofKind: kind)
                    done.resume()
                }
            }
        }
        let day = await host.run()
        release.open()
        _ = await otherDay
        #expect(day.appEvents.first?.reloadCalls == [kind])
        #expect(day.appEvents.first?.isUnscoped == false)
        #expect(day.reloads.map(\.reasons) == [[.widgetAdded], [.reloadTimelines]])
        #expect(day.shown.last?.entry.count == 5)
    }

    @Test func theTemplatesAtEndPolicyReloadsWhenItsLastEntryComes() async {
        let host = WidgetHost(kind: "emoji", provider: Provider())
        let day = await host.run()
        let expected = (0..<6).map { host.date(hours: Double($0) * 4, seconds: 0.1) }
        #expect(day.reloads.map(\.at) == expected)
        #expect(day.reloads.dropFirst().allSatisfy { $0.reasons == [.policyAtEnd] && $0.charged })
        #expect(day.reloads.last?.budgetLeft == 65)
        // The placeholder, then an entry an hour: each timeline's fifth entry (at 4 h) comes on
        // screen at its date and gives way to the next timeline's first, reloaded at that moment.
        #expect(day.shown.count == 30)
        #expect(day.shown[5].from == day.shown[6].from && day.shown[5].generation + 1 == day.shown[6].generation)
        #expect(day.shown[2].from == host.date(hours: 1, seconds: 0.1))
    }

    @Test func aProviderThatNeverCallsItsCompletionHandlerIsReported() async {
        var rules = WidgetReloadRules()
        rules.providerTimeout = 0.2
        let host = WidgetHost(kind: "silent", provider: SilentProvider(), rules: rules)
        host.reloadTimelines(ofKind: "silent", at: host.date(hours: 1))
        let day = await host.run()
        // The first timeline, then the app's request at 1 h; and since no timeline ever came,
        // the widget asks again by itself, 5 min after the first failure, then twice as long
        // each time (it kept its placeholder all day and never asked again).
        #expect(day.providerFailures.allSatisfy { $0.kind == .neverCompleted(waited: 0.2) })
        let minutes = day.providerFailures.map { ($0.at.timeIntervalSince(host.date(hours: 0)) / 60).rounded() }
        #expect(minutes == [0, 5, 15, 35, 60, 140, 300, 620, 980, 1340], "\(minutes)")
        #expect(day.shown.count == 1)
        #expect(day.shown[0].isPlaceholder)
        #expect(day.providerFailures[0].description.contains("never called its completion handler"))
        #expect(throws: WidgetExpectationFailure.self) { try day.expectProviderAlwaysCompleted() }
    }

    @Test func aProviderAnsweringOnAnotherThreadIsAwaitedAndItsAfterPolicyKept() async throws {
        let host = WidgetHost(kind: "scored", provider: BackgroundProvider())
        let day = await host.run()
        #expect(day.reloads.map(\.at) == (0..<24).map { host.date(hours: Double($0), seconds: 0.1) })
        #expect(day.reloads.dropFirst().allSatisfy { $0.reasons == [.policyAfterDate] })
        #expect(day.reloads.first?.policy == .after(host.date(hours: 1, seconds: 0.1)))
        #expect(day.shown.dropFirst().prefix(3).map(\.from) == [0, 15, 30].map { host.date(minutes: Double($0), seconds: 0.1) })
        #expect(day.shown.dropFirst().first?.entry.relevance?.score == 0)
        try day.expectProviderAlwaysCompleted()
    }

    @Test func aProviderThatCompletesTwiceIsReportedAndTheFirstAnswerCounts() async {
        let host = WidgetHost(kind: "twice", provider: TwiceProvider())
        let day = await host.run(for: 3600)
        #expect(day.providerFailures.map(\.kind) == [.completedMoreThanOnce(extraCalls: 1)])
        #expect(day.reloads.count == 1)
    }

    /// Wall-clock dates move onto the virtual clock to the second, from the answer (when the
    /// timeline arrives); one read while the call ran (`Date()`, in a call a loaded machine made
    /// slow) is the reload's now, never a second on.
    @Test func wallClockDatesMoveToTheSecondAndDuringTheCallIsNow() {
        let wall = Date(timeIntervalSince1970: 1_800_000_000)
        let answered = wall.addingTimeInterval(1.2)
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let clock = ProviderClock.wallClock
        #expect(clock.translate(wall.addingTimeInterval(0.9), calledAt: wall, answeredAt: answered, now: now) == now)
        #expect(clock.translate(wall.addingTimeInterval(0.4), calledAt: wall, answeredAt: wall, now: now) == now)
        #expect(clock.translate(answered.addingTimeInterval(900.3), calledAt: wall, answeredAt: answered, now: now) == now.addingTimeInterval(900))
        // Read as the call began, then 1.2 s of work: on screen 1.2 s sooner after the answer.
        #expect(clock.translate(wall.addingTimeInterval(900.3), calledAt: wall, answeredAt: answered, now: now) == now.addingTimeInterval(899))
        #expect(clock.translate(wall.addingTimeInterval(-5.2), calledAt: wall, answeredAt: wall, now: now) == now.addingTimeInterval(-5))
        #expect(ProviderClock.virtual.translate(wall, calledAt: wall, answeredAt: wall.addingTimeInterval(3), now: now) == wall)
    }

    /// An entry comes on screen at its date, never before: until then what was shown stays.
    @Test func entriesAheadOfTheReloadShowAtTheirDate() async {
        let host = WidgetHost(kind: "ahead", provider: AheadProvider())
        let day = await host.run(for: 3 * 3600)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 30))?.isPlaceholder == true)
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 1, seconds: 0.2))?.entry.count == 1)
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 2, seconds: 0.2))?.entry.count == 2)
    }

    /// The cache-then-network mistake: the second call comes after the host used the first
    /// answer, and is reported at the reload it belonged to when the day ends.
    @Test func aHandlerCalledAgainAfterItsAnswerWasUsedIsReported() async {
        let (second, secondCall) = AsyncStream.makeStream(of: Void.self)
        let host = WidgetHost(kind: "cache", provider: CacheThenNetworkProvider(secondCall: secondCall))
        host.at(hours: 1, "wait for the network") {
            var calls = second.makeAsyncIterator()
            _ = await calls.next()
        }
        let day = await host.run(for: 7200)
        #expect(day.providerFailures.map(\.kind) == [.completedMoreThanOnce(extraCalls: 1)])
        #expect(day.providerFailures.first?.at == day.reloads.first?.at)
        #expect(day.shown.last?.entry.count == 1, "the first answer counts")
    }

    /// "Reloads requested while the app is in the foreground don't count": decided when the app
    /// asks, not when the coalesced reload happens a moment later.
    @Test func aRequestMadeInTheForegroundIsFreeEvenIfTheAppLeavesBeforeTheReload() async {
        let host = counterHost(storing: 4, atHours: 1, minutes: 1, "count 4")
        host.foreground(at: host.date(hours: 1))
        host.background(at: host.date(hours: 1, minutes: 1, seconds: 0.05))
        let day = await host.run(for: 7200)
        let reload = day.reloads.last
        #expect(reload?.reasons == [.reloadTimelines, .foregroundRequest])
        #expect(reload?.requestCount == 1)
        #expect(reload?.charged == false)
        #expect(day.shown.last?.entry.count == 4)
    }

    @Test func aRefusedReloadLeavesTheWidgetStaleUntilTheForegroundLoadsItFree() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        host.place(.accessoryInline, budget: 2)
        for h in 1...4 {
            host.at(hours: Double(h), "count \(h)") {
                store.set(h)
                WidgetCenter.shared.reloadTimelines(ofKind: "counter")
            }
        }
        host.foreground(at: host.date(hours: 5))
        let day = await host.run()
        // Refused at 03:00 and again for the new request at 04:00 (each new batch is reported).
        #expect(day.refusals.map(\.at) == [host.date(hours: 3, seconds: 0.1), host.date(hours: 4, seconds: 0.1)])
        #expect(day.refusals.first?.retryAt == host.date(hours: 25, seconds: 0.1))
        #expect(day.isStale(.accessoryInline, at: host.date(hours: 4, minutes: 30)))
        #expect(day.showing(.accessoryInline, at: host.date(hours: 4, minutes: 30))?.entry.count == 2)
        #expect(!day.isStale(.accessoryInline, at: host.date(hours: 5)))
        #expect(day.showing(.accessoryInline, at: host.date(hours: 5))?.entry.count == 4)
        let last = day.reloads.last
        #expect(last?.charged == false)
        #expect(last?.requestCount == 2)
        #expect(day.staleIntervals(id: "counter.accessoryInline").count == 1)
        let error = #expect(throws: WidgetExpectationFailure.self) {
            try day.expectShown(.accessoryInline, within: 600, of: host.date(hours: 3)) { $0.count == 3 }
        }
        #expect(error?.description.contains("reload refused") == true)
        #expect(throws: WidgetExpectationFailure.self) { try day.expectNoRefusedReloads() }
    }

    @Test func entriesUnderFiveMinutesApartAreFlagged() async {
        let host = WidgetHost(kind: "crowded", provider: CrowdedProvider())
        let day = await host.run(for: 600)
        #expect(day.reloads.first?.warnings == [.entriesTooClose(index: 1, gap: 60), .entriesTooClose(index: 2, gap: 60)])
        #expect(throws: WidgetExpectationFailure.self) { try day.expectWellSpacedEntries() }
    }

    @Test func aReloadRequestJoiningTheFirstTimelineIsFree() async throws {
        let host = counterHost(storing: 3, atHours: 0, "launch")
        let day = await host.run(for: 3600)
        let first = try #require(day.reloads.first)
        #expect(day.reloads.count == 1)
        #expect(first.reasons == [.widgetAdded, .reloadTimelines])
        #expect(!first.charged)
        #expect(first.budgetLeft == 70)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 1))?.entry.count == 3)
    }

    @Test func aMisspeltKindReloadsNothingAndIsRecorded() async throws {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store))
        host.at(hours: 2, "store") {
            store.set(9)
            WidgetCenter.shared.reloadTimelines(ofKind: "Counter")
        }
        let day = await host.run()
        #expect(day.appEvents.first?.unknownKinds == ["Counter"])
        #expect(day.reloads.count == 1)
    }

    @Test func anIntentProviderGetsEachInstancesConfiguration() async throws {
        let fox = ConfigurationAppIntent()
        fox.favoriteEmoji = "🦊"
        let host = WidgetHost(kind: "emoji", provider: IntentProvider())
        host.place(.accessoryCorner, configuration: fox)
        host.place(.accessoryCircular)
        let seen = LockedCount()
        host.at(hours: 1, "list") {
            WidgetCenter.shared.getCurrentConfigurations { result in
                if case .success(let infos) = result { seen.set(infos.map(\.family)) }
            }
        }
        let day = await host.run(for: 7200)
        #expect(day.showing(.accessoryCorner, at: host.date(hours: 1))?.entry.configuration.favoriteEmoji == "🦊")
        #expect(day.showing(.accessoryCircular, at: host.date(hours: 1))?.entry.configuration.favoriteEmoji == "😃")
        #expect(seen.families == [.accessoryCorner, .accessoryCircular])
    }
}

@Suite struct WidgetStripTests {
    @Test func theStripHasARowPerFamilyAndMarksEveryRefusedReload() async {
        let store = CounterStore()
        let host = WidgetHost(kind: "counter", provider: CountProvider(store: store), describe: { "count \($0.count)" })
        host.place(.accessoryCircular, budget: 3)
        host.place(.accessoryRectangular)
        host.every(3600, "tick") { n in
            store.set(n)
            WidgetCenter.shared.reloadTimelines(ofKind: "counter")
        }
        let day = await host.run()
        let svg = day.svgStrip()
        #expect(svg.hasPrefix("<?xml"))
        #expect(svg.contains(#"id="row-counter.accessoryCircular""#))
        #expect(svg.contains(#"id="row-counter.accessoryRectangular""#))
        // Tick 0 joins the first timeline (free); ticks 1–3 spend the budget of 3.
        #expect(day.refusals.count == 20)
        #expect(svg.components(separatedBy: #"<g class="refused">"#).count - 1 == day.refusals.count)
        #expect(svg.contains("count 23"))
        #expect(svg.contains("first refused 04:00"))
        #expect(day.svgStrip() == svg)
    }
}

/// A host driven from the main actor, as a `main.swift` harness or a `@MainActor` test does.
@MainActor struct MainActorHostTests {
    @Test func aHostRunsFromTheMainActor() async {
        let host = counterHost(storing: 3, atHours: 1, "count 3")
        let day = await host.run(for: 7200)
        #expect(day.shown.last?.entry.count == 3)
    }
}
