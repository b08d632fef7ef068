import AppIntents
import Foundation
import Primitives
import Testing
import WidgetKit

/// What the host tells of providers that misbehave, what it asks them, and the app's ticks.
extension WidgetDocumentedRulesTests {
    @Test func aHandlerCalledAgainAfterItsAnswerWasUsedIsReportedAtItsReload() async throws {
        let (again, callAgain) = AsyncStream.makeStream(of: Void.self)
        let (calledAgain, calledAgainDone) = AsyncStream.makeStream(of: Void.self)
        let provider = TwiceRulesProvider(again: again, done: calledAgainDone)
        let host = WidgetHost(kind: Self.kind, provider: provider)
        host.place(.accessoryRectangular)
        host.at(hours: 9, "lets the provider answer again") {
            callAgain.yield()
            for await _ in calledAgain { break }
        }
        let day = await host.run()
        let first = try #require(day.reloads.first)
        #expect(day.providerFailures.map(\.kind) == [.completedMoreThanOnce(extraCalls: 1)])
        #expect(day.providerFailures.first?.at == first.at)
        // The second answer is ignored.
        #expect(day.timelineEntries().allSatisfy { $0.entry.call == 0 })
        #expect(throws: WidgetExpectationFailure.self) { try day.expectProviderAlwaysCompleted() }
    }

    @Test func anAsyncSnapshotThatNeverReturnsThrows() async {
        let host = WidgetHost(kind: Self.kind, provider: HangingIntentProvider(), rules: WidgetReloadRules(providerTimeout: 0.1))
        await #expect(throws: WidgetSnapshotError.neverCompleted(family: .accessoryCorner, timeout: 0.1)) {
            _ = try await host.snapshot(.accessoryCorner, configuration: RulesIntent())
        }
    }

    @Test func theProviderIsAskedAboutEachWidgetsFamilyAndSize() async {
        let provider = DocumentedRulesProvider(always: .entries(0, policy: .never))
        let host = WidgetHost(kind: Self.kind, provider: provider)
        for family in WidgetFamily.accessoryFamilies { host.place(family) }
        _ = await host.run()
        let contexts = provider.timelineContexts.withLock { $0 }
        #expect(Set(contexts.map(\.family)) == Set(WidgetFamily.accessoryFamilies))
        #expect(contexts.allSatisfy { $0.displaySize == $0.family.defaultDisplaySize && !$0.isPreview })
    }

    @Test func everyTicksFromTheStartUntilBeforeADayLater() async {
        let ticks = LockedState<[Int]>([])
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        host.every(3 * Self.hour) { tick in ticks.withLock { $0.append(tick) } }
        let day = await host.run()
        #expect(ticks.withLock { $0 } == Array(0...7))
        #expect(day.appEvents.map(\.at) == (0...7).map { host.date(hours: Double($0) * 3) })
    }

    @Test func anExplicitRequestIsNotHeldBackByTheFiveMinuteMinimum() async throws {
        let host = Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never)))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 9))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 9, minutes: 1))
        let day = await host.run()
        let at = Self.requested(day).map(\.at)
        #expect(at.count == 2)
        #expect(at.last.map { $0 < host.date(hours: 9, minutes: 1, seconds: 1) } == true)
        #expect(day.budgetLeft(.accessoryRectangular, at: host.date(hours: 9, minutes: 30)) == 68)
        #expect(day.budgetLeft(.accessoryRectangular, at: host.date(hours: 8)) == 70)
    }

    @Test func theStripMarksEachProviderThatNeverAnswered() async {
        let silent = await Self.host(DocumentedRulesProvider { _ in nil }, rules: WidgetReloadRules(providerTimeout: 0.05))
            .run(for: Self.hour)
        let healthy = await Self.host(DocumentedRulesProvider(always: .entries(0, policy: .never))).run(for: Self.hour)
        #expect(silent.providerFailures.count == 4)
        #expect(silent.svgStrip().count(of: "!") == healthy.svgStrip().count(of: "!") + 4)
    }
}

/// A provider that answers at once, then, once `again` yields, calls the same handler again
/// with another timeline (a cached answer, then the network's), and yields `done`.
final class TwiceRulesProvider: TimelineProvider, Sendable {
    let again: AsyncStream<Void>
    let done: AsyncStream<Void>.Continuation
    let calls = LockedState(0)

    init(again: AsyncStream<Void>, done: AsyncStream<Void>.Continuation) {
        self.again = again
        self.done = done
    }

    func placeholder(in context: Context) -> RuleEntry {
        RuleEntry(date: Date(), call: -1, index: 0, value: 0)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (RuleEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<RuleEntry>) -> Void) {
        let call = calls.withLock { calls in
            calls += 1
            return calls - 1
        }
        completion(Timeline(entries: [RuleEntry(date: Date(), call: call, index: 0, value: 0)], policy: .never))
        Task { [again, done] in
            for await _ in again { break }
            completion(Timeline(entries: [RuleEntry(date: Date(), call: 99, index: 0, value: 0)], policy: .never))
            done.yield()
        }
    }
}

/// An intent-configured provider whose snapshot never returns (it waits an hour, or until
/// cancelled).
struct HangingIntentProvider: AppIntentTimelineProvider, Sendable {
    func placeholder(in context: Context) -> RuleEntry {
        RuleEntry(date: Date(), call: -1, index: 0, value: 0)
    }

    func snapshot(for configuration: RulesIntent, in context: Context) async -> RuleEntry {
        try? await Task.sleep(for: .seconds(3_600))
        return placeholder(in: context)
    }

    func timeline(for configuration: RulesIntent, in context: Context) async -> Timeline<RuleEntry> {
        Timeline(entries: [placeholder(in: context)], policy: .never)
    }
}
