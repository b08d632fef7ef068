// A second, independent suite for the WidgetKit module, written from Apple's documentation alone:
// each test quotes the Apple statement it checks (developer.apple.com/documentation/widgetkit/…,
// and the article "Keeping a widget up to date"). Where the module differs and its README says so,
// the test checks the README's behaviour and says "documented difference"; where it differs and the
// README does not, the module was fixed (no test here is a known issue).
//
// Time is the host's virtual clock: the scripted providers below date their entries from
// `WidgetHost.clock` (`providerClock: .virtual`), so no assertion depends on the wall clock. The
// developer-written widget (AppleDocsDeveloperWidget.swift) reads `Date()` as on a device; its
// dates are compared to the minute. The only real-time waits are the provider time-outs of the
// completion-handler test that never answers (0.3 s). Plain `import WidgetKit` (no `@testable`): the
// host and its virtual clock are public.
//
// Run: swift build --build-tests && swift test --skip-build --filter WidgetKitAppleDocumentedTests
import Foundation
import Synchronization
import Testing
import WidgetKit

// MARK: - Scripted provider on the virtual clock

/// An entry with a label.
struct DocEntry: TimelineEntry, Sendable, Equatable {
    let date: Date
    let label: String
}

/// The host's virtual clock, for providers created before their host.
final class DocClock: Sendable {
    private let clock = Mutex<VirtualClock?>(nil)
    func attach(_ c: VirtualClock) { clock.withLock { $0 = c } }
    var now: Date { clock.withLock { $0?.now } ?? Date() }
}

/// Every call a provider got: which method, at what virtual time, in which context.
final class DocCalls: Sendable {
    struct Call: Sendable {
        let method: String
        let at: Date
        let context: TimelineProviderContext
    }

    private let calls = Mutex<[Call]>([])

    /// Records a call; returns how many calls of `method` came before it.
    @discardableResult
    func add(_ method: String, at: Date, _ context: TimelineProviderContext) -> Int {
        calls.withLock { c in
            defer { c.append(Call(method: method, at: at, context: context)) }
            return c.count { $0.method == method }
        }
    }

    func of(_ method: String) -> [Call] { calls.withLock { $0.filter { $0.method == method } } }
}

/// A provider whose `getTimeline` answers from `script(n, now, context)` (n: the call's number from
/// 0); a `nil` timeline never calls the completion handler. `getSnapshot` answers "sample" in the
/// gallery (`isPreview`) and "snapshot" elsewhere, once, or `snapshotCalls` times.
struct ScriptedProvider: TimelineProvider {
    let clock: DocClock
    let calls: DocCalls
    var snapshotCalls = 1
    let script: @Sendable (_ n: Int, _ now: Date, _ context: TimelineProviderContext) -> Timeline<DocEntry>?

    func placeholder(in context: Context) -> DocEntry {
        calls.add("placeholder", at: clock.now, context)
        return DocEntry(date: clock.now, label: "placeholder")
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (DocEntry) -> Void) {
        calls.add("getSnapshot", at: clock.now, context)
        for i in 0..<snapshotCalls {
            completion(DocEntry(date: clock.now, label: (context.isPreview ? "sample" : "snapshot") + (i > 0 ? "\(i)" : "")))
        }
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<DocEntry>) -> Void) {
        let n = calls.add("getTimeline", at: clock.now, context)
        if let timeline = script(n, clock.now, context) { completion(timeline) }
    }
}

/// A host of widget kind "doc" running `script` on the virtual clock.
private func docHost(
    rules: WidgetReloadRules = WidgetReloadRules(), snapshotCalls: Int = 1,
    script: @escaping @Sendable (_ n: Int, _ now: Date, _ context: TimelineProviderContext) -> Timeline<DocEntry>?
) -> (WidgetHost<DocEntry>, DocCalls) {
    let clock = DocClock()
    let calls = DocCalls()
    let provider = ScriptedProvider(clock: clock, calls: calls, snapshotCalls: snapshotCalls, script: script)
    let host = WidgetHost(kind: "doc", provider: provider, rules: rules, providerClock: .virtual, describe: { $0.label })
    clock.attach(host.clock)
    return (host, calls)
}

/// Entries `minutes` after `now`, labelled `prefix` + their minute ("a0", "a20", …).
private func entries(_ now: Date, _ prefix: String, minutes: [Double]) -> [DocEntry] {
    minutes.map { DocEntry(date: now.addingTimeInterval($0 * 60), label: "\(prefix)\(Int($0))") }
}

/// Seconds after the host's start.
private func at<E>(_ date: Date, _ host: WidgetHost<E>) -> TimeInterval {
    (date.timeIntervalSince(host.start) * 1000).rounded() / 1000
}

/// Minutes after the host's start, rounded to the minute (for wall-clock providers).
private func minute<E>(_ date: Date, _ host: WidgetHost<E>) -> Int {
    Int((date.timeIntervalSince(host.start) / 60).rounded())
}

// MARK: - The suite

@Suite struct WidgetKitAppleDocumentedTests {
    /// The first timeline is asked for a moment after the start (the host coalesces for 0.1 s).
    static let first: TimeInterval = 0.1

    // MARK: TimelineReloadPolicy

    /// TimelineReloadPolicy.atEnd: "A policy that specifies that WidgetKit requests a new timeline
    /// after the last date in a timeline passes."
    @Test func atEndRequestsTheNextTimelineWhenTheLastEntrysDatePasses() async {
        let (host, calls) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [0, 20, 40]), policy: .atEnd)
        }
        let day = await host.run(for: 2 * 3600)
        let t0 = Self.first
        #expect(day.reloads.map { at($0.at, host) } == [t0, t0 + 2400, t0 + 4800])
        #expect(day.reloads.dropFirst().allSatisfy { $0.reasons == [.policyAtEnd] })
        // Never before the last date: each timeline was asked for once its last date had come.
        let asked = calls.of("getTimeline").map { at($0.at, host) }
        #expect(asked == [t0, t0 + 2400, t0 + 4800])
    }

    /// TimelineReloadPolicy.atEnd asks "after the last date in a timeline passes", and
    /// Timeline.init(entries:policy:): "Add entries for future dates and times when you want
    /// WidgetKit to update the widget's view … the update might occur later": the last entry is an
    /// update like the others — the widget shows it at its date, then asks for the next timeline.
    @Test func theLastEntryOfAnAtEndTimelineComesOnScreenBeforeTheNextTimeline() async throws {
        let (host, _) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [0, 20, 40]), policy: .atEnd)
        }
        let day = await host.run(for: 3600)
        let labels = day.shown.map(\.text)
        #expect(labels.starts(with: ["placeholder", "t0-0", "t0-20"]))
        #expect(labels.contains("t1-0"), "the second timeline came")
        #expect(labels.contains("t0-40"), "shown: \(labels)")
        // …and the next timeline's first entry follows it, at the reload.
        let last = day.shown.first { $0.text == "t0-40" }
        let next = day.shown.first { $0.text == "t1-0" }
        let (lastShown, nextShown) = (try #require(last), try #require(next))
        #expect(lastShown.from <= nextShown.from)
        #expect(try #require(labels.firstIndex(of: "t0-40")) < #require(labels.firstIndex(of: "t1-0")))
    }

    /// TimelineReloadPolicy.after(_:): "A policy that specifies a future date for WidgetKit to request
    /// a new timeline." Timeline: "you can use after(_:) to indicate a different date either earlier
    /// or later than the default date. Specify an earlier date if you know there's a point in time
    /// before the end of your timeline entries …"
    @Test func afterEarlierThanTheLastEntryAsksAtItsDateAndTheNewTimelineReplacesTheRest() async {
        let (host, _) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [0, 60, 120]), policy: .after(now.addingTimeInterval(30 * 60)))
        }
        let day = await host.run(for: 3600)
        let t0 = Self.first
        #expect(day.reloads.map { at($0.at, host) } == [t0, t0 + 1800, t0 + 3600].filter { $0 <= 3600 })
        #expect(day.reloads.dropFirst().allSatisfy { $0.reasons == [.policyAfterDate] })
        // The first timeline's 60-minute entry never shows: the timeline asked for at 30 min replaced it.
        #expect(!day.shown.map(\.text).contains("t0-60"))
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 45))?.text == "t1-0")
    }

    /// Timeline: "… or later than the default date": the last entry stays on screen until the
    /// `.after` date, and TimelineReloadPolicy is "the earliest date WidgetKit requests a new timeline".
    @Test func afterLaterThanTheLastEntryKeepsTheLastEntryUntilItsDate() async {
        let (host, calls) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [0, 10]), policy: .after(now.addingTimeInterval(2 * 3600)))
        }
        let day = await host.run(for: 3 * 3600)
        let t0 = Self.first
        #expect(calls.of("getTimeline").map { at($0.at, host) } == [t0, t0 + 7200])
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 11))?.text == "t0-10")
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 119))?.text == "t0-10")
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 121))?.text == "t1-0")
    }

    /// TimelineReloadPolicy.never: "A policy that specifies that the app prompts WidgetKit when a new
    /// timeline is available." WidgetCenter.reloadTimelines(ofKind:): "Reloads the timelines for all
    /// widgets of a particular kind."
    @Test func neverAsksAgainOnlyWhenTheAppReloads() async {
        let (host, calls) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [0, 60, 120]), policy: .never)
        }
        host.at(hours: 5, "new data") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        let day = await host.run()
        #expect(calls.of("getTimeline").count == 2)
        #expect(day.reloads.map(\.reasons) == [[.widgetAdded], [.reloadTimelines]])
        // The `.never` timeline's entries still come at their dates.
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 61))?.text == "t0-60")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 4))?.text == "t0-120")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 5, minutes: 1))?.text == "t1-0")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 23))?.text == "t1-120")
    }

    /// Keeping a widget up to date: "WidgetKit imposes a minimum amount of time before it reloads a
    /// widget." A timeline whose dates have all passed does not make WidgetKit ask again at once,
    /// over and over.
    @Test func atEndWithEveryEntryInThePastWaitsTheMinimumBeforeAskingAgain() async {
        let (host, calls) = docHost { n, now, _ in
            Timeline(entries: entries(now, "t\(n)-", minutes: [-30, -10]), policy: .atEnd)
        }
        _ = await host.run(for: 3600)
        let asked = calls.of("getTimeline").map { at($0.at, host) }
        let gaps = zip(asked.dropFirst(), asked).map { $0 - $1 }
        #expect(asked.count > 1, "it does ask again")
        #expect(gaps.allSatisfy { $0 >= 299.999 }, "the README's five-minute minimum (to a millisecond of date arithmetic); gaps \(gaps)")
        #expect(asked.count <= 13, "at most one reload every 5 minutes: \(asked.count)")
    }

    /// TimelineReloadPolicy.after(_:): "A policy that specifies a future date for WidgetKit to request
    /// a new timeline"; with a date already past, Keeping a widget up to date: "WidgetKit imposes a
    /// minimum amount of time before it reloads a widget" — it asks again, but not at once.
    @Test func afterWithADateAlreadyPastAsksAgainAfterTheMinimumNotAtOnce() async {
        let (host, calls) = docHost { n, now, _ in
            Timeline(entries: [DocEntry(date: now, label: "#\(n)")], policy: .after(now.addingTimeInterval(-600)))
        }
        _ = await host.run(for: 3600)
        let asked = calls.of("getTimeline").map { at($0.at, host) }
        let gaps = zip(asked.dropFirst(), asked).map { $0 - $1 }
        #expect(asked.count > 1)
        #expect(gaps.allSatisfy { $0 >= 299.999 }, "the README's five-minute minimum (to a millisecond of date arithmetic); gaps \(gaps)")
        #expect(asked.count <= 13)
    }

    // MARK: Entries at their dates

    /// Timeline.init(entries:policy:): "Add entries for future dates and times when you want WidgetKit
    /// to update the widget's view. Note that the widget's view might not be updated precisely at a
    /// timeline entry's date and time; the update might occur later." Never earlier.
    @Test func eachEntryComesOnScreenAtItsDateNeverEarlier() async {
        let offsets: [Double] = [0, 7, 19, 31, 58]
        let (host, _) = docHost { _, now, _ in Timeline(entries: entries(now, "e", minutes: offsets), policy: .never) }
        let day = await host.run(for: 3600)
        let shown = day.shown.filter { !$0.isPlaceholder }
        #expect(shown.map(\.text) == offsets.map { "e\(Int($0))" })
        for s in shown {
            #expect(s.from >= s.entry.date, "\(s.text) came on screen before its date")
            #expect(s.from.timeIntervalSince(s.entry.date) < 1, "\(s.text) came \(s.from.timeIntervalSince(s.entry.date)) s late")
        }
    }

    /// Timeline.init(entries:policy:): "Set the date and time of the first entry in a timeline to the
    /// current date and time." Entries dated in the past have all passed: the one current now is the
    /// latest of them, and a later entry still waits for its date.
    @Test func entriesDatedInThePastShowTheLatestThatHasPassed() async {
        let (host, _) = docHost { n, now, _ in
            n == 0
                ? Timeline(entries: [DocEntry(date: now, label: "first")], policy: .never)
                : Timeline(entries: entries(now, "e", minutes: [-120, -60, 60]), policy: .never)
        }
        host.at(hours: 3, "reload") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        let day = await host.run(for: 6 * 3600)
        #expect(day.shown.map(\.text) == ["placeholder", "first", "e-60", "e60"])
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 3, minutes: 1))?.text == "e-60")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 3, minutes: 59))?.text == "e-60")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 4, minutes: 1))?.text == "e60")
    }

    /// TimelineProvider.placeholder(in:): "When WidgetKit displays your widget for the first time, it
    /// renders the widget's view as a placeholder … WidgetKit calls placeholder(in:) to request an
    /// entry representing the widget's placeholder configuration."
    @Test func aNewWidgetShowsItsPlaceholderUntilTheFirstTimeline() async {
        let (host, calls) = docHost { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "data")], policy: .never) }
        host.place(.accessoryCorner)
        host.place(.accessoryInline)
        let day = await host.run(for: 600)
        #expect(Set(calls.of("placeholder").map(\.context.family)) == [.accessoryCorner, .accessoryInline])
        for family in [WidgetFamily.accessoryCorner, .accessoryInline] {
            #expect(day.shown(family).first?.isPlaceholder == true)
            #expect(day.shown(family).first?.text == "placeholder")
            #expect(day.shown(family).last?.text == "data")
        }
    }

    // MARK: Empty timelines

    /// Timeline: "The timeline contains an array of timeline entry objects and a refresh policy" — an
    /// empty array gives the widget nothing new to show, so it keeps what it showed. Documented
    /// difference (README): "an empty `.atEnd` timeline asks again after the five-minute minimum"
    /// (Apple documents no date for `.atEnd` without a last date).
    @Test func anEmptyTimelineKeepsWhatTheWidgetShowed() async {
        let (host, calls) = docHost { n, now, _ in
            switch n {
            case 0: Timeline(entries: [DocEntry(date: now, label: "kept")], policy: .never)
            case 1: Timeline(entries: [], policy: .never)
            case 2: Timeline(entries: [], policy: .atEnd)
            default: Timeline(entries: [DocEntry(date: now, label: "after empty")], policy: .never)
            }
        }
        host.at(hours: 1, "reload 1") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        host.at(hours: 2, "reload 2") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        let day = await host.run(for: 3 * 3600)
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 1, minutes: 30))?.text == "kept")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 2, minutes: 1))?.text == "kept")
        // The empty `.atEnd` timeline (asked at 2 h) asks again after five minutes.
        let asked = calls.of("getTimeline").map { at($0.at, host) }
        #expect(asked == [Self.first, 3600 + Self.first, 7200 + Self.first, 7500 + Self.first])
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 2, minutes: 6))?.text == "after empty")
    }

    // MARK: WidgetCenter

    /// WidgetCenter.reloadTimelines(ofKind:): "Reloads the timelines for all widgets of a particular
    /// kind." Keeping a widget up to date: "WidgetKit maintains a different budget for each active
    /// widget the user adds."
    @Test func reloadTimelinesOfKindReloadsEveryWidgetOfThatKindEachFromItsOwnBudget() async {
        let (host, calls) = docHost { n, now, context in
            Timeline(entries: [DocEntry(date: now, label: "\(context.family)#\(n)")], policy: .never)
        }
        host.place(.accessoryRectangular)
        host.place(.accessoryRectangular, id: "second rectangular")
        host.place(.accessoryCircular, budget: 40)
        host.at(hours: 2, "another kind") { WidgetCenter.shared.reloadTimelines(ofKind: "weather") }
        host.at(hours: 3, "this kind") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        let day = await host.run(for: 4 * 3600)
        #expect(calls.of("getTimeline").count == 6)
        let atThree = day.reloads.filter { $0.at > host.date(hours: 2, minutes: 30) }
        #expect(Set(atThree.map(\.widgetID)) == ["doc.accessoryRectangular", "second rectangular", "doc.accessoryCircular"])
        #expect(atThree.allSatisfy { $0.reasons == [.reloadTimelines] && $0.charged })
        #expect(atThree.map(\.budgetLeft).sorted() == [39, 69, 69])
        #expect(day.reloads.filter { $0.at > host.date(hours: 1) && $0.at < host.date(hours: 2, minutes: 30) }.isEmpty)
    }

    /// WidgetCenter.reloadAllTimelines(): "Reloads the timelines for all configured widgets belonging
    /// to the containing app."
    @Test func reloadAllTimelinesReloadsEveryConfiguredWidget() async {
        let (host, _) = docHost { n, now, _ in Timeline(entries: [DocEntry(date: now, label: "#\(n)")], policy: .never) }
        for family in WidgetFamily.accessoryFamilies { host.place(family) }
        host.at(hours: 1, "sign out") { WidgetCenter.shared.reloadAllTimelines() }
        let day = await host.run(for: 2 * 3600)
        let reloaded = day.reloads.filter { $0.reasons == [.reloadAllTimelines] }
        #expect(Set(reloaded.map(\.family)) == Set(WidgetFamily.accessoryFamilies))
        #expect(reloaded.count == 4)
    }

    /// Keeping a widget up to date: "WidgetKit may coalesce reloads across multiple widgets, affecting
    /// the exact time a particular widget is reloaded." Reload requests made together become one
    /// reload, charged once.
    @Test func requestsMadeTogetherBecomeOneReload() async {
        let (host, calls) = docHost { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "x")], policy: .never) }
        host.at(hours: 1, "five saves") {
            for _ in 0..<5 { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
            WidgetCenter.shared.reloadAllTimelines()
        }
        let day = await host.run(for: 2 * 3600)
        #expect(calls.of("getTimeline").count == 2)
        let reload = day.reloads.last
        #expect(reload?.requestCount == 6)
        #expect(reload?.budgetLeft == 69)
    }

    /// getCurrentConfigurations(_:): "Retrieves information about user-configured widgets" — WidgetInfo
    /// "kind … matches the parameter you use when creating the widget's StaticConfiguration"; "family …
    /// matches one of the options specified in the supportedFamilies". Also `currentConfigurations()`.
    @Test func currentConfigurationsListTheConfiguredWidgets() async {
        let (host, _) = docHost { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "x")], policy: .never) }
        host.place(.accessoryCircular)
        host.place(.accessoryCorner)
        let log = PlacedWidgetsLog()
        let listed = Mutex<[String]>([])
        host.at(hours: 1, "settings screen") { log.refresh() }
        host.at(hours: 2, "async") { @Sendable in
            let infos = (try? await WidgetCenter.shared.currentConfigurations()) ?? []
            listed.withLock { $0 = infos.map { "\($0.kind) \($0.family)" } }
        }
        _ = await host.run(for: 3 * 3600)
        #expect(log.all == ["doc accessoryCircular", "doc accessoryCorner"])
        #expect(listed.withLock { $0 } == ["doc accessoryCircular", "doc accessoryCorner"])
    }

    /// getCurrentConfigurations(_:): the handler is "called when the widget information is
    /// available", `@Sendable`: on WidgetKit's queue, after the call returned, never inside it.
    /// The app event lasts until the handler returned, so the reload it asks for is the event's.
    @Test func theConfigurationsHandlerRunsAfterTheCallReturnedAndItsReloadIsTheEvents() async {
        let (host, _) = docHost { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "x")], policy: .never) }
        host.place(.accessoryCircular)
        let order = Mutex<[String]>([])
        host.at(hours: 1, "settings screen") {
            let returned = DispatchSemaphore(value: 0)
            WidgetCenter.shared.getCurrentConfigurations { result in
                // A handler run inside the call would wait here in vain (5 s), then come first.
                _ = returned.wait(timeout: .now() + 5)
                order.withLock { $0.append("handler \((try? result.get())?.count ?? -1)") }
                WidgetCenter.shared.reloadTimelines(ofKind: "doc")
            }
            order.withLock { $0.append("returned") }
            returned.signal()
        }
        let day = await host.run(for: 2 * 3600)
        #expect(order.withLock { $0 } == ["returned", "handler 1"])
        #expect(day.appEvents.map(\.label) == ["settings screen"])
        #expect(day.appEvents.map(\.reloadCalls) == [["doc"]])
    }

    // MARK: The budget

    /// Keeping a widget up to date: "For a widget the user frequently views, a daily budget typically
    /// includes from 40 to 70 refreshes." A timeline that asks again every five minutes would reload
    /// 288 times a day; the budget stops it, and the widget keeps its last timeline.
    @Test func aWidgetGetsAtMostItsDailyBudgetOfReloads() async throws {
        let (host, _) = docHost { n, now, _ in
            Timeline(entries: [DocEntry(date: now, label: "#\(n)")], policy: .after(now.addingTimeInterval(5 * 60)))
        }
        let day = await host.run()
        let charged = day.reloads.filter(\.charged)
        #expect((40...70).contains(charged.count), "\(charged.count) charged reloads in 24 h")
        #expect(charged.count == host.rules.dailyBudget)
        let refusal = try #require(day.firstRefusal)
        #expect(refusal.at == charged.last.map { $0.at.addingTimeInterval(300) })
        #expect(day.isStale(.accessoryRectangular, at: host.date(hours: 12)))
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 12))?.text == "#\(charged.count)")
    }

    /// Keeping a widget up to date: "Widget budgets apply to a 24-hour period. WidgetKit tunes the
    /// 24-hour window to the user's daily usage pattern, which means the daily budget doesn't
    /// necessarily reset at exactly midnight." In no 24 hours are more reloads charged than the budget,
    /// and reloads resume once the window has moved on.
    @Test func theBudgetIsARollingTwentyFourHours() async {
        var rules = WidgetReloadRules()
        rules.dailyBudget = 40
        let (host, _) = docHost(rules: rules) { n, now, _ in
            Timeline(entries: [DocEntry(date: now, label: "#\(n)")], policy: .after(now.addingTimeInterval(15 * 60)))
        }
        let day = await host.run(for: 3 * 86_400)
        let charged = day.reloads.filter(\.charged).map(\.at)
        let mostInADay = charged.indices.map { i in charged[i...].prefix { $0.timeIntervalSince(charged[i]) < 86_400 }.count }.max()
        #expect(mostInADay == 40)
        #expect(charged.count > 80, "reloads went on after the first day: \(charged.count)")
        #expect(!day.refusals.isEmpty)
    }

    /// Keeping a widget up to date: "In the following cases WidgetKit doesn't count the reload against
    /// the widget's budget: The widget's containing app is in the foreground." — whatever asked for the
    /// reload, the timeline's own policy included.
    @Test func reloadsWhileTheAppIsInTheForegroundAreNotCounted() async {
        let (host, _) = docHost { n, now, _ in
            Timeline(entries: [DocEntry(date: now, label: "#\(n)")], policy: .after(now.addingTimeInterval(20 * 60)))
        }
        host.foreground(at: host.date(hours: 2))
        host.at(hours: 2, minutes: 30, "save in the app") { WidgetCenter.shared.reloadTimelines(ofKind: "doc") }
        host.background(at: host.date(hours: 3, minutes: 10))
        let day = await host.run(for: 4 * 3600)
        let inForeground = day.reloads.filter { $0.at > host.date(hours: 2) && $0.at < host.date(hours: 3, minutes: 10) }
        #expect(inForeground.count >= 3)
        #expect(inForeground.allSatisfy { !$0.charged }, "\(day.log)")
        #expect(inForeground.contains { $0.reasons.contains(.policyAfterDate) })
        let before = day.reloads.filter { $0.at <= host.date(hours: 2) }
        #expect(inForeground.allSatisfy { $0.budgetLeft == before.last?.budgetLeft })
        #expect(day.reloads.filter { $0.at > host.date(hours: 3, minutes: 10) }.allSatisfy { $0.charged })
    }

    // MARK: Families and context

    /// TimelineProviderContext: "When requesting timelines for a widget, WidgetKit passes the
    /// TimelineProvider a context object that includes details about how the widget appears. These
    /// details include: The WidgetFamily …; The size, in points, of the widget; … Whether the widget
    /// appears as a preview in the widget gallery." A placed widget is not in the gallery.
    @Test func eachPlacedFamilyGetsItsOwnContextAndTimeline() async {
        let (host, calls) = docHost { _, now, context in
            Timeline(entries: [DocEntry(date: now, label: "\(context.family)")], policy: .never)
        }
        for family in WidgetFamily.accessoryFamilies { host.place(family) }
        let day = await host.run(for: 600)
        let contexts = calls.of("getTimeline").map(\.context)
        #expect(contexts.map(\.family).sorted { $0.rawValue < $1.rawValue } == WidgetFamily.accessoryFamilies.sorted { $0.rawValue < $1.rawValue })
        #expect(contexts.allSatisfy { !$0.isPreview })
        #expect(contexts.allSatisfy { $0.displaySize.width > 0 && $0.displaySize.height > 0 })
        for family in WidgetFamily.accessoryFamilies {
            #expect(day.shown(family).last?.text == "\(family)")
        }
    }

    /// WidgetFamily (watchOS 9): the four accessory families a watch face shows, by Apple's names;
    /// WidgetFamily.accessoryCorner: "A widget-based complication in the corner of a watch face in
    /// watchOS." WidgetInfo.family "The size of the widget".
    @Test func theWatchFamiliesAreApples() {
        let names = WidgetFamily.allCases.map(\.description)
        for name in ["accessoryCircular", "accessoryRectangular", "accessoryInline", "accessoryCorner"] {
            #expect(names.contains(name))
        }
        #expect(Set(WidgetFamily.allCases).count == WidgetFamily.allCases.count)
    }

    /// getSnapshot(in:completion:): "WidgetKit calls getSnapshot(in:completion:) when the widget
    /// appears in transient situations. If context.isPreview is true, the widget appears in the widget
    /// gallery. In that case, call the completion handler as quickly as possible, perhaps supplying
    /// sample data …"
    @Test func theGalleryAsksForASnapshotWithIsPreview() async throws {
        let (host, calls) = docHost { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "x")], policy: .never) }
        #expect(try await host.snapshot(.accessoryRectangular).label == "sample")
        #expect(try await host.snapshot(.accessoryCircular, isPreview: false).label == "snapshot")
        let snapshots = calls.of("getSnapshot")
        #expect(snapshots.map(\.context.isPreview) == [true, false])
        #expect(snapshots.map(\.context.family) == [.accessoryRectangular, .accessoryCircular])
        #expect(calls.of("getTimeline").isEmpty, "a snapshot is not a timeline reload")
    }

    // MARK: Completion handlers

    /// getSnapshot(in:completion:) "completion: The completion handler to call after you create the
    /// snapshot entry" — one entry. A handler called again does not change what was shown.
    @Test func aSnapshotHandlerCalledTwiceGivesTheFirstEntry() async throws {
        let (host, _) = docHost(snapshotCalls: 2) { _, now, _ in Timeline(entries: [DocEntry(date: now, label: "x")], policy: .never) }
        #expect(try await host.snapshot(.accessoryInline).label == "sample")
    }

    /// getTimeline(in:completion:) "completion: The completion handler to call after you create the
    /// timeline." Apple documents no time limit and no retry; the README documents the host's: a
    /// provider that never calls it is reported, "its policy asks again later, as WidgetKit retries".
    /// Meanwhile nothing replaces the timeline the widget has: its entries keep coming at their dates.
    @Test func aReloadWhoseHandlerIsNeverCalledLeavesTheCurrentTimelineRunning() async {
        var rules = WidgetReloadRules()
        rules.providerTimeout = 0.3
        let (host, calls) = docHost(rules: rules) { n, now, _ in
            n == 1
                ? nil
                : Timeline(entries: entries(now, "t\(n)-", minutes: [0, 30, 60, 90]), policy: .after(now.addingTimeInterval(20 * 60)))
        }
        let day = await host.run(for: 2 * 3600)
        #expect(day.providerFailures.count == 1)
        #expect(day.providerFailures.first.map { at($0.at, host) } == Self.first + 1200)
        // The first timeline's 30- and 60-minute entries still came, though its reload at 20 min failed.
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 21))?.text == "t0-0")
        let asked = calls.of("getTimeline").map { at($0.at, host) }
        #expect(asked.count >= 3, "it asked again after the failure")
        #expect(asked[2] > asked[1])
        #expect(day.shown.map(\.text).contains("t2-0"))
    }

    /// getTimeline(in:completion:): one timeline per call. A second call of the handler is not a
    /// second timeline (README: "the first answer counts", reported).
    @Test func aTimelineHandlerCalledTwiceInstallsTheFirstTimelineOnly() async {
        let host = WidgetHost(kind: "twice", provider: TwiceWithDifferentTimelines(), describe: { $0.label })
        let day = await host.run(for: 600)
        #expect(day.reloads.count == 1)
        #expect(day.shown.map(\.text) == ["placeholder", "first"])
        #expect(day.providerFailures.map(\.kind) == [.completedMoreThanOnce(extraCalls: 1)])
    }

    // MARK: TimelineEntry and TimelineEntryRelevance

    /// TimelineEntry: "A type that specifies the date to display a widget, and, optionally, indicates
    /// the current relevance of the widget's content." — `relevance` is optional: nil unless the entry
    /// declares one. TimelineEntryRelevance.init(score:duration:) "duration: TimeInterval = 0.0".
    @Test func relevanceIsOptionalAndItsDurationDefaultsToZero() {
        let plain = DocEntry(date: Date(), label: "x")
        #expect(plain.relevance == nil)
        let relevance = TimelineEntryRelevance(score: 7)
        #expect(relevance.score == 7 && relevance.duration == 0)
        let entry = UpNextEntry(date: Date(), title: "t", minutesLeft: 1, relevance: TimelineEntryRelevance(score: 2, duration: 900))
        #expect(entry.relevance?.duration == 900)
    }

    /// TimelineEntryRelevance.score: `var score: Float`; .duration: `var duration: TimeInterval`
    /// (Apple's declarations): an app may change a relevance it made. Here both are `let`, so
    /// `relevance.duration = 900` does not compile (AppleDocsDeveloperWidget.swift, finding 1).
    @Test func relevanceScoreAndDurationAreSettableAsApplesVars() {
        var relevance = TimelineEntryRelevance(score: 10)
        relevance.duration = 15 * 60
        relevance.score += 1
        #expect(relevance == TimelineEntryRelevance(score: 11, duration: 900))
    }

    /// WidgetCenter.UserInfoKey: "An object that defines keys for accessing information in a user
    /// info dictionary" (`kind`, `family`, `activityID`, each a `static let … : String`); and
    /// `invalidateRelevance(ofKind:)`, which the host records for the day's kind.
    @Test func userInfoKeysAndRelevanceInvalidationAreThere() async {
        let keys: [String] = [WidgetCenter.UserInfoKey.kind, WidgetCenter.UserInfoKey.family, WidgetCenter.UserInfoKey.activityID]
        #expect(Set(keys).count == 3)
        let userInfo: [AnyHashable: Any] = [WidgetCenter.UserInfoKey.kind: UpNextWidget.kind]
        #expect(userInfo[WidgetCenter.UserInfoKey.kind] as? String == UpNextWidget.kind)
        let (host, _) = docHost { n, now, _ in Timeline(entries: entries(now, "t\(n)-", minutes: [0]), policy: .never) }
        host.at(host.date(hours: 1), "relevance changed") {
            WidgetCenter.shared.invalidateRelevance(ofKind: host.kind)
            WidgetCenter.shared.invalidateRelevance(ofKind: "another kind")
        }
        let day = await host.run(for: 2 * 3600)
        #expect(day.relevanceInvalidated == 1)
        #expect(day.reloads.count == 1, "invalidating relevance is not a reload")
    }

    /// TimelineReloadPolicy "Conforms To: Equatable": `.atEnd`, `.never` and `.after(date)` compare.
    @Test func policiesCompareAsApplesEquatableStruct() {
        let d = Date(timeIntervalSince1970: 1_800_000_000)
        let upNext = Timeline(entries: [UpNextEntry(date: d, title: "t", minutesLeft: 0)], policy: .after(d))
        #expect(upNext.policy == .after(d))
        #expect(upNext.policy != .after(d.addingTimeInterval(1)))
        #expect(TimelineReloadPolicy.atEnd != .never)
        #expect(policyName(upNext) == "after")
        #expect(policyName(Timeline(entries: [DocEntry](), policy: .atEnd)) == "atEnd")
        #expect(policyName(Timeline(entries: [DocEntry](), policy: .never)) == "never")
    }

    // MARK: The developer-written widget

    /// The provider of AppleDocsDeveloperWidget.swift, unchanged, through a day: Apple's "Tell the
    /// system to reload all timelines when data changes; for example, when your app receives new data",
    /// a countdown timeline of entries 15 minutes apart, `.never` after the last event, `.after(+1 h)`
    /// with none; a reload request and a due policy at the same moment coalesce ("WidgetKit may
    /// coalesce reloads"); the gallery snapshot is sample data (`context.isPreview`).
    @Test func theDeveloperWidgetRunsADay() async throws {
        let store = UpNextStore()
        let host = WidgetHost(
            kind: UpNextWidget.kind, provider: UpNextProvider(store: store), describe: { "\($0.title) \($0.minutesLeft)" })
        host.place(.accessoryRectangular)
        host.place(.accessoryCircular)
        // The app's dates come from the wall clock, as the provider's do (an hour from "now").
        host.at(hours: 1, "event received") { store.add("Standup", at: Date().addingTimeInterval(3600)) }
        let log = PlacedWidgetsLog()
        host.at(hours: 6, "settings") { log.refresh() }
        host.at(hours: 8, "sign out") { store.removeAll() }
        let day = await host.run(for: 10 * 3600)

        let rect = day.reloads(.accessoryRectangular)
        // 0: no events, `.after(+1 h)`; 1 h: the save and that policy, one reload; then `.never`
        // until the app's reloadAllTimelines at 8 h; no events again, `.after(+1 h)`: 9 h.
        #expect(rect.map { minute($0.at, host) } == [0, 60, 480, 540], "\(day.log)")
        #expect(Set(rect[1].reasons) == [.reloadTimelines, .policyAfterDate] && rect[1].requestCount == 2)
        #expect(rect[1].policy == .never)
        #expect(rect[2].reasons == [.reloadAllTimelines])
        #expect(rect[3].reasons == [.policyAfterDate])
        #expect(rect.allSatisfy { $0.warnings.isEmpty }, "entries at least 5 minutes apart")
        #expect(day.reloads.filter(\.charged).count == 6)

        // The countdown: 60, 45, 30, 15 minutes before Standup, then Standup itself, at their dates.
        let standup = day.shown(.accessoryRectangular).filter { $0.entry.title == "Standup" && !$0.isPlaceholder }
        #expect(standup.map { minute($0.from, host) } == [60, 75, 90, 105, 120], "\(standup.map(\.text))")
        #expect(standup.last?.entry.minutesLeft == 0)
        #expect(day.showing(.accessoryCircular, at: host.date(hours: 1, minutes: 1))?.entry.title == "Sta")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 7))?.entry.title == "Standup")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 8, minutes: 1))?.entry.title == "No events")
        #expect(log.all == ["UpNextWidget accessoryRectangular", "UpNextWidget accessoryCircular"])
        try day.expectProviderAlwaysCompleted()
        try day.expectNoRefusedReloads()

        #expect(try await host.snapshot(.accessoryRectangular).title == "Design review")
        #expect(try await host.snapshot(.accessoryRectangular, isPreview: false).title == "No events")
    }

    /// Timeline.init(entries:policy:): "Set the date and time of the first entry in a timeline to the
    /// current date and time" — on a device, `Date()` in getTimeline is the time of the reload.
    /// Documented difference (README: "providers read `Date()` as usual, and the host moves the dates
    /// they return onto its virtual clock"): `Date()` is the wall clock, which a simulated day does not
    /// move, so a provider that compares `Date()` with the app's stored dates never sees them pass.
    /// Here a reload two virtual hours after Standup still counts down to it (on a device: "No events"
    /// or the next one). The README does not spell this consequence out.
    @Test func aProviderComparingDateWithStoredDatesSeesNoVirtualTimePass() async {
        let store = UpNextStore()
        let host = WidgetHost(kind: UpNextWidget.kind, provider: UpNextProvider(store: store))
        host.at(hours: 1, "event received") { store.add("Standup", at: Date().addingTimeInterval(3600)) }
        host.at(hours: 4, "reload after Standup") { WidgetCenter.shared.reloadTimelines(ofKind: UpNextWidget.kind) }
        let day = await host.run(for: 5 * 3600)
        let afterwards = day.showing(.accessoryRectangular, at: host.date(hours: 4, minutes: 1))?.entry
        #expect(afterwards?.title == "Standup")
        #expect((afterwards?.minutesLeft ?? 0) > 50, "counts down to an event two virtual hours past")
    }
}

/// Calls its timeline handler twice, with different timelines.
struct TwiceWithDifferentTimelines: TimelineProvider {
    func placeholder(in context: Context) -> DocEntry { DocEntry(date: Date(), label: "placeholder") }
    func getSnapshot(in context: Context, completion: @escaping @Sendable (DocEntry) -> Void) {
        completion(DocEntry(date: Date(), label: "snapshot"))
    }
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<DocEntry>) -> Void) {
        completion(Timeline(entries: [DocEntry(date: Date(), label: "first")], policy: .never))
        completion(Timeline(entries: [DocEntry(date: Date(), label: "second")], policy: .never))
    }
}
