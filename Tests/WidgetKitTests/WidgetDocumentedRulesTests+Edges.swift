import Foundation
import Primitives
import Testing
import WidgetKit

/// The documented rules at their edges: a stale widget's pending reload, a slow provider's dates,
/// a silent provider under `.never`, an empty first timeline, the default placement, an app that
/// starts in the foreground, and a budget slot freeing.
extension WidgetDocumentedRulesTests {
    @Test func aRequestToAStaleWidgetJoinsThePendingReloadAndIsRefusedAgain() async throws {
        let host = Self.host(
            DocumentedRulesProvider(always: .entries(0, policy: .never)), rules: WidgetReloadRules(dailyBudget: 1))
        for h in [9.0, 10, 11] { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: h)) }
        let day = await host.run(for: 2 * 86_400)
        #expect(day.refusals.map(\.requestCount) == [1, 2])
        let served = try #require(day.reloads.last)
        #expect(served.requestCount == 2)
        #expect(served.requestedAt == host.date(hours: 10))
        let charged = try #require(day.reloads.first { $0.charged })
        #expect(Self.sameInstant(served.at, charged.at.addingTimeInterval(86_400)))
    }

    /// A day of a provider that takes 0.7 s, and its entries' times after its one reload.
    static func slowDay(readsDateFirst: Bool) async throws -> (SlowRulesProvider, [TimeInterval]) {
        let provider = SlowRulesProvider(delay: 0.7, readsDateFirst: readsDateFirst)
        let host = WidgetHost(kind: kind, provider: provider, rules: WidgetReloadRules(providerTimeout: 10))
        host.place(.accessoryRectangular)
        let day = await host.run()
        #expect(day.providerFailures.isEmpty)
        let reload = try #require(day.reloads.first).at
        return (provider, day.timelineEntries().map { $0.from.timeIntervalSince(reload) })
    }

    @Test func aSlowProviderThatReadsItsNowWhenItAnswersHasItsEntriesAtTheirOffsets() async throws {
        // WidgetKit shows an entry at its date; the timeline arrives when the provider answers,
        // which is the reload's virtual now: "now + 15 min" read then is 15 minutes after it.
        let (_, from) = try await Self.slowDay(readsDateFirst: false)
        #expect(from == [0, 900])
    }

    @Test func aSlowProviderThatReadsItsNowFirstHasItsLaterEntriesAsFarAfterItsAnswer() async throws {
        let (provider, from) = try await Self.slowDay(readsDateFirst: true)
        // `Date()` read while the call ran is the reload's now; the entry a quarter of an hour
        // after it is as far after the answer as on the wall clock, to the second.
        let readBeforeAnswer = try #require(provider.readBeforeAnswer.withLock { $0 })
        #expect(from.first == 0)
        #expect(from.count == 2)
        #expect(abs(from[1] - (900 - readBeforeAnswer)) <= 0.55)
        #expect(from[1] == from[1].rounded())
    }

    @Test func aReloadThatNeverAnswersUnderNeverWaitsForTheNextRequest() async throws {
        let provider = DocumentedRulesProvider { call in call == 1 ? nil : .entries(0, policy: .never) }
        let host = Self.host(provider, rules: WidgetReloadRules(providerTimeout: 0.1))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 9))
        host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: 12))
        let day = await host.run()
        #expect(day.providerFailures.count == 1)
        #expect(provider.timelineContexts.withLock { $0.count } == 3)
        #expect(day.reloads.count == 2)
        #expect(day.reloads.last.map { $0.at >= host.date(hours: 12) } == true)
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 11))?.entry.call == 0)
    }

    @Test func anEmptyFirstTimelineKeepsThePlaceholderAndAsksAgainAfterFiveMinutes() async throws {
        let provider = DocumentedRulesProvider { call in
            call == 0 ? .entries(policy: .atEnd) : .entries(0, policy: .never)
        }
        let day = await Self.host(provider).run()
        #expect(day.reloads.count == 2)
        let first = try #require(day.reloads.first)
        #expect(first.warnings == [.noEntries])
        let next = try #require(day.reloads.last)
        #expect(next.at == first.at.addingTimeInterval(300))
        #expect(day.showing(.accessoryRectangular, at: next.at.addingTimeInterval(-1))?.isPlaceholder == true)
        #expect(day.showing(.accessoryRectangular, at: next.at)?.entry.call == 1)
    }

    @Test func aRunWithNoWidgetPlacedPlacesARectangularOne() async {
        let host = WidgetHost(kind: Self.kind, provider: DocumentedRulesProvider(always: .entries(0, policy: .never)))
        let day = await host.run()
        #expect(day.widgets.map(\.id) == ["rules.accessoryRectangular"])
        #expect(day.reloads.map(\.family) == [.accessoryRectangular])
    }

    @Test func anAppThatStartsInTheForegroundReloadsForFreeUntilItLeaves() async {
        let host = Self.host(
            DocumentedRulesProvider(always: .entries(0, policy: .never)), rules: WidgetReloadRules(dailyBudget: 1))
        host.startsInForeground = true
        for h in [1.0, 2, 3] { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: h)) }
        host.background(at: host.date(hours: 4))
        for h in [5.0, 6] { host.reloadTimelines(ofKind: Self.kind, at: host.date(hours: h)) }
        let day = await host.run()
        #expect(Self.requested(day).map(\.charged) == [false, false, false, true])
        #expect(day.refusals.count == 1)
    }

    @Test func aSpentReloadFreesItsSlotExactlyOneWindowLater() {
        let t = WidgetHost<RuleEntry>.defaultStart.addingTimeInterval(0.1)
        var budget = ReloadBudget(limit: 1)
        let spent = budget.spend(at: t)
        let spentAgain = budget.spend(at: t.addingTimeInterval(86_399.999))
        #expect(spent && !spentAgain)
        #expect(budget.remaining(at: t.addingTimeInterval(86_399.999)) == 0)
        #expect(budget.nextAvailable(at: t.addingTimeInterval(60)) == budget.spent.first?.addingTimeInterval(86_400))
        #expect(budget.remaining(at: t.addingTimeInterval(86_400)) == 1)
        let freed = budget.spend(at: t.addingTimeInterval(86_400))
        #expect(freed)
        #expect(ReloadBudget(limit: 0).nextAvailable(at: t) == nil)
    }
}

/// A provider whose work takes `delay` seconds of real time: it reads `Date()` as it is called
/// or when it is done, and dates its entries from that (now and a quarter of an hour later).
final class SlowRulesProvider: TimelineProvider, Sendable {
    let delay: TimeInterval
    let readsDateFirst: Bool
    /// How long before it answered the provider read `Date()` (its last call).
    let readBeforeAnswer = LockedState<TimeInterval?>(nil)

    init(delay: TimeInterval, readsDateFirst: Bool) {
        self.delay = delay
        self.readsDateFirst = readsDateFirst
    }

    func placeholder(in context: Context) -> RuleEntry {
        RuleEntry(date: Date(), call: -1, index: 0, value: 0)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (RuleEntry) -> Void) {
        completion(placeholder(in: context))
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<RuleEntry>) -> Void) {
        let early = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [readsDateFirst, readBeforeAnswer] in
            let now = readsDateFirst ? early : Date()
            let entries = [0.0, 900].enumerated().map { index, offset in
                RuleEntry(date: now.addingTimeInterval(offset), call: 0, index: index, value: 0)
            }
            readBeforeAnswer.withLock { $0 = Date().timeIntervalSince(now) }
            completion(Timeline(entries: entries, policy: .never))
        }
    }
}
