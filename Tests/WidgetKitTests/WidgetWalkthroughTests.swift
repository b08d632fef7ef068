// Three widgets written as an iOS/watchOS developer writes them, run under `WidgetHost` and
// checked against Apple's documented WidgetKit semantics (notes B.1–B.7).
import AppIntents
import Foundation
import Primitives
import Testing
import WidgetKit

// MARK: - 1. A static widget whose provider fetches asynchronously

/// The app's weather service: an actor, as a network client would be.
private actor WeatherService {
    private var calls = 0
    private let fails: Bool
    init(fails: Bool = false) { self.fails = fails }

    struct Unavailable: Error {}

    func forecast() async throws -> [Int] {
        calls += 1
        try await Task.sleep(for: .milliseconds(20))
        if fails { throw Unavailable() }
        return [10 + calls, 20 + calls, 30 + calls, 40 + calls]
    }
}

private struct WeatherEntry: TimelineEntry {
    let date: Date
    let temperature: Int
    let family: WidgetFamily
}

/// What the provider was asked, for the test to read.
private final class ContextLog: Sendable {
    private let contexts = LockedState<[TimelineProviderContext]>([])
    func add(_ c: TimelineProviderContext) { contexts.withLock { $0.append(c) } }
    var all: [TimelineProviderContext] { contexts.withLock { $0 } }
}

/// Four entries 15 minutes apart from a fetch, then `.after(one hour)`; a failed fetch shows
/// a placeholder value and asks again in 5 minutes.
private struct WeatherProvider: TimelineProvider {
    let service: WeatherService
    let log: ContextLog

    func placeholder(in context: Context) -> WeatherEntry {
        WeatherEntry(date: Date(), temperature: 0, family: context.family)
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (WeatherEntry) -> Void) {
        log.add(context)
        if context.isPreview {
            completion(WeatherEntry(date: Date(), temperature: 21, family: context.family))
            return
        }
        Task {
            let t = (try? await service.forecast().first) ?? 0
            completion(WeatherEntry(date: Date(), temperature: t, family: context.family))
        }
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<WeatherEntry>) -> Void) {
        log.add(context)
        Task {
            let now = Date()
            do {
                let temps = try await service.forecast()
                let entries = temps.enumerated().map { i, t in
                    WeatherEntry(
                        date: Calendar.current.date(byAdding: .minute, value: 15 * i, to: now)!, temperature: t,
                        family: context.family)
                }
                let next = Calendar.current.date(byAdding: .hour, value: 1, to: now)!
                completion(Timeline(entries: entries, policy: .after(next)))
            } catch {
                let retry = Calendar.current.date(byAdding: .minute, value: 5, to: now)!
                completion(
                    Timeline(
                        entries: [WeatherEntry(date: now, temperature: -99, family: context.family)],
                        policy: .after(retry)))
            }
        }
    }
}

// MARK: - 2. An App Intent–configured widget

private struct CityIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource { "City" }
    static var description: IntentDescription { "The city to show." }

    @Parameter(title: "City", default: "Seoul")
    var city: String
}

private struct CityEntry: TimelineEntry {
    let date: Date
    let city: String
}

private struct CityProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> CityEntry { CityEntry(date: Date(), city: "—") }

    func snapshot(for configuration: CityIntent, in context: Context) async -> CityEntry {
        CityEntry(date: Date(), city: configuration.city)
    }

    func timeline(for configuration: CityIntent, in context: Context) async -> Timeline<CityEntry> {
        let now = Date()
        let entries = (0..<3).map { CityEntry(date: now.addingTimeInterval(Double($0) * 600), city: configuration.city) }
        return Timeline(entries: entries, policy: .atEnd)
    }

    func recommendations() -> [AppIntentRecommendation<CityIntent>] {
        [AppIntentRecommendation(intent: CityIntent(), description: "Seoul")]
    }
}

/// Hangs far past the host's timeout (cancellation ends the sleep).
private struct HangingCityProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> CityEntry { CityEntry(date: Date(), city: "—") }
    func snapshot(for configuration: CityIntent, in context: Context) async -> CityEntry {
        try? await Task.sleep(for: .seconds(30))
        return CityEntry(date: Date(), city: configuration.city)
    }
    func timeline(for configuration: CityIntent, in context: Context) async -> Timeline<CityEntry> {
        try? await Task.sleep(for: .seconds(30))
        return Timeline(entries: [CityEntry(date: Date(), city: configuration.city)], policy: .never)
    }
}

// MARK: - 3. GitExplorer: the app saves favorites, then reloads the widget

private final class FavoritesStore: Sendable {
    private let logins = LockedState<[String]>([])
    var all: [String] { logins.withLock { $0 } }
    func save(_ new: [String]) { logins.withLock { $0 = new } }
}

private struct FavoritesEntry: TimelineEntry {
    let date: Date
    let logins: [String]
}

private struct FavoritesProvider: TimelineProvider {
    let store: FavoritesStore
    let policy: TimelineReloadPolicy
    func placeholder(in context: Context) -> FavoritesEntry { FavoritesEntry(date: Date(), logins: ["octocat"]) }
    func getSnapshot(in context: Context, completion: @escaping (FavoritesEntry) -> Void) {
        completion(FavoritesEntry(date: Date(), logins: store.all))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<FavoritesEntry>) -> Void) {
        completion(Timeline(entries: [FavoritesEntry(date: Date(), logins: store.all)], policy: policy))
    }
}

/// The watch app's data path: persist, then ask WidgetKit to reload.
private final class FavoritesModel: Sendable {
    let store: FavoritesStore
    init(store: FavoritesStore) { self.store = store }
    func didReceive(_ logins: [String]) {
        store.save(logins)
        WidgetCenter.shared.reloadTimelines(ofKind: "favorites")
    }

    /// The app with `saved` favorites, and its widget (a `.never` provider on the same store)
    /// under a host with WidgetKit's rules, or a daily budget of `budget`.
    static func hosted(saved: [String] = [], budget: Int? = nil) -> (FavoritesModel, WidgetHost<FavoritesEntry>) {
        let store = FavoritesStore()
        if !saved.isEmpty { store.save(saved) }
        let rules = budget.map { WidgetReloadRules(dailyBudget: $0) } ?? WidgetReloadRules()
        let host = WidgetHost(kind: "favorites", provider: FavoritesProvider(store: store, policy: .never), rules: rules)
        return (FavoritesModel(store: store), host)
    }
}

// MARK: - Tests

/// Seconds after the host's start, to the minute. Requests wait WidgetKit's 0.1 s coalescing
/// window, and a provider dates its entries from `Date()` after its own `await`s, which the host
/// counts into the day: on a loaded machine (a CI run of the whole suite) entries came 4 s late.
/// So dates are compared to the minute, and what is on screen a minute after a change.
private func seconds<E>(_ dates: [Date], _ host: WidgetHost<E>) -> [Int] {
    dates.map { Int(($0.timeIntervalSince(host.start) / 60).rounded()) * 60 }
}

@Suite struct WidgetWalkthroughTests {
    // 1. Static widget, async fetch, `.after`.

    @Test func eachEntryIsCurrentFromItsDateUntilTheNextAndAfterReloadsAtItsDate() async throws {
        let log = ContextLog()
        let host = WidgetHost(kind: "weather", provider: WeatherProvider(service: WeatherService(), log: log))
        host.place(.accessoryRectangular)
        let day = await host.run(for: 2 * 3600 + 300)
        try day.expectProviderAlwaysCompleted()
        try day.expectWellSpacedEntries()
        // First timeline (fetch #1): 11, 21, 31, 41 at 0, 15, 30, 45 min.
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 1))?.entry.temperature == 11)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 14))?.entry.temperature == 11)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 16))?.entry.temperature == 21)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 59))?.entry.temperature == 41)
        #expect(seconds(day.shown(.accessoryRectangular).prefix(5).map(\.from), host) == [0, 0, 900, 1800, 2700])
        // `.after(+1 h)`: the second fetch at one hour, not at the last entry (45 min).
        let reloads = day.reloads(.accessoryRectangular)
        #expect(seconds(reloads.map(\.at), host) == [0, 3600, 7200], "\(day.log)")
        #expect(reloads.dropFirst().allSatisfy { $0.reasons == [.policyAfterDate] && $0.charged })
        #expect(!reloads[0].charged, "the first timeline is free")
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 1, minutes: 1))?.entry.temperature == 12)
        #expect(reloads[1].budgetLeft == 69)
        #expect(reloads[2].budgetLeft == 68)
    }

    @Test func theProviderIsAskedForEachPlacedFamilyWithoutPreview() async throws {
        let log = ContextLog()
        let host = WidgetHost(kind: "weather", provider: WeatherProvider(service: WeatherService(), log: log))
        host.place(.accessoryCircular)
        host.place(.accessoryInline)
        let day = await host.run(for: 60)
        #expect(Set(log.all.map(\.family)) == [.accessoryCircular, .accessoryInline])
        #expect(log.all.allSatisfy { !$0.isPreview })
        #expect(log.all.first { $0.family == .accessoryInline }?.displaySize == WidgetFamily.accessoryInline.defaultDisplaySize)
        #expect(day.showing(.accessoryCircular, at: host.date(minutes: 1))?.entry.family == .accessoryCircular)
        #expect(day.showing(.accessoryInline, at: host.date(minutes: 1))?.entry.family == .accessoryInline)
    }

    @Test func theGallerySnapshotIsAPreviewAndTheFaceSnapshotIsNot() async throws {
        let log = ContextLog()
        let host = WidgetHost(kind: "weather", provider: WeatherProvider(service: WeatherService(), log: log))
        #expect(try await host.snapshot(.accessoryCorner).temperature == 21)
        #expect(try await host.snapshot(.accessoryCorner, isPreview: false).temperature == 11)
        #expect(log.all.map(\.isPreview) == [true, false])
    }

    @Test func aFailedFetchShowsTheFallbackAndRetriesAtItsAfterDate() async throws {
        let host = WidgetHost(
            kind: "weather", provider: WeatherProvider(service: WeatherService(fails: true), log: ContextLog()))
        let day = await host.run(for: 17 * 60)
        #expect(seconds(day.reloads.map(\.at), host) == [0, 300, 600, 900])
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 1))?.entry.temperature == -99)
    }

    // `.atEnd` and `.never`.

    @Test func atEndReloadsWhenTheLastEntrysDatePasses() async throws {
        let host = WidgetHost(kind: "city", provider: CityProvider())
        host.place(.accessoryRectangular)
        let day = await host.run(for: 3600 + 300)
        // Entries at 0, 10, 20 min; `.atEnd` → reloads at 20, 40, 60 min.
        #expect(seconds(day.reloads.map(\.at), host) == [0, 1200, 2400, 3600], "\(day.log)")
        #expect(day.reloads.dropFirst().allSatisfy { $0.reasons == [.policyAtEnd] })
    }

    @Test func neverReloadsOnlyWhenTheAppAsks() async throws {
        let (model, host) = FavoritesModel.hosted(saved: ["a"])
        host.place(.accessoryRectangular)
        host.at(hours: 9, "snapshot received") { model.didReceive(["a", "b"]) }
        // A change the app forgets to announce: the widget stays as it was (the seed's bug).
        host.at(hours: 10, "silent save") { model.store.save(["c"]) }
        let day = await host.run()
        #expect(day.reloads.count == 2, "\(day.log)")
        #expect(day.reloads[1].reasons == [.reloadTimelines])
        try day.expectShown(.accessoryRectangular, within: 1, of: host.date(hours: 9)) { $0.logins == ["a", "b"] }
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 23))?.entry.logins == ["a", "b"])
    }

    // Budget.

    @Test func backgroundReloadsPastTheBudgetAreRefusedAndForegroundOnesAreFree() async throws {
        let (model, host) = FavoritesModel.hosted(budget: 2)
        host.place(.accessoryRectangular)
        for h in 1...4 { host.at(hours: Double(h), "change \(h)") { model.didReceive(["u\(h)"]) } }
        host.foreground(at: host.date(hours: 5))
        host.at(hours: 6, "change in foreground") { model.didReceive(["fg"]) }
        host.background(at: host.date(hours: 7))
        let day = await host.run()
        let charged = day.reloads.filter(\.charged).map(\.at)
        #expect(seconds(charged, host) == [3600, 7200], "\(day.log)")
        #expect(seconds(day.refusals.map(\.at), host) == [3 * 3600, 4 * 3600])
        #expect(day.isStale(.accessoryRectangular, at: host.date(hours: 4, minutes: 30)))
        // Coming to the foreground with a refused batch pending: WidgetKit reloads then, free.
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 5, minutes: 1))?.entry.logins == ["u4"])
        #expect(day.showing(.accessoryRectangular, at: host.date(hours: 6, minutes: 1))?.entry.logins == ["fg"])
        #expect(!day.isStale(.accessoryRectangular, at: host.date(hours: 8)))
    }

    @Test func twoInstancesHaveTwoBudgets() async throws {
        let (model, host) = FavoritesModel.hosted(budget: 1)
        host.place(.accessoryRectangular, id: "left")
        host.place(.accessoryRectangular, id: "right")
        host.at(hours: 1, "change") { model.didReceive(["x"]) }
        let day = await host.run()
        #expect(day.reloads.filter(\.charged).count == 2)
        #expect(day.refusals.isEmpty)
    }

    // Completion handlers.

    @Test func aHandlerCalledTwiceUsesTheFirstAndIsReported() async throws {
        let host = WidgetHost(kind: "counter", provider: TwiceProvider())
        let day = await host.run(for: 60)
        #expect(day.reloads.count == 1)
        #expect(day.providerFailures.map(\.kind) == [.completedMoreThanOnce(extraCalls: 1)])
    }

    @Test func aHangingAsyncProviderIsReportedAndTheWidgetKeepsItsPlaceholder() async throws {
        let host = WidgetHost(
            kind: "city", provider: HangingCityProvider(), rules: WidgetReloadRules(providerTimeout: 0.1))
        let day = await host.run(for: 60)
        #expect(day.reloads.isEmpty)
        #expect(day.providerFailures.count == 1)
        #expect(day.shown.allSatisfy { $0.isPlaceholder })
        await #expect(throws: WidgetSnapshotError.self) { _ = try await host.snapshot(.accessoryInline) }
    }

    // App Intent configuration and getCurrentConfigurations.

    @Test func eachConfiguredInstanceGetsItsOwnIntent() async throws {
        let tokyo = CityIntent()
        tokyo.city = "Tokyo"
        let host = WidgetHost(kind: "city", provider: CityProvider())
        host.place(.accessoryRectangular, configuration: tokyo)
        host.place(.accessoryCircular)
        let day = await host.run(for: 60)
        #expect(day.showing(.accessoryRectangular, at: host.date(minutes: 1))?.entry.city == "Tokyo")
        #expect(day.showing(.accessoryCircular, at: host.date(minutes: 1))?.entry.city == "Seoul")
    }

    @Test func getCurrentConfigurationsListsThePlacedInstancesInsideAnAppEvent() async throws {
        let tokyo = CityIntent()
        tokyo.city = "Tokyo"
        let seen = LockedState<[String]>([])
        let asyncSeen = LockedState<[String]>([])
        let host = WidgetHost(kind: "city", provider: CityProvider())
        host.place(.accessoryRectangular, configuration: tokyo)
        host.place(.accessoryInline)
        host.at(hours: 1, "look") {
            WidgetCenter.shared.getCurrentConfigurations { result in
                guard case .success(let infos) = result else { return }
                seen.withLock {
                    $0 = infos.map { "\($0.kind) \($0.family) \($0.widgetConfigurationIntent(of: CityIntent.self)?.city ?? "-")" }
                }
                if infos.contains(where: { $0.kind == "city" }) { WidgetCenter.shared.reloadTimelines(ofKind: "city") }
            }
        }
        host.at(hours: 2, "look async") { @Sendable in
            let infos = (try? await WidgetCenter.shared.currentConfigurations()) ?? []
            asyncSeen.withLock { $0 = infos.map(\.description) }
        }
        let day = await host.run(for: 3 * 3600)
        #expect(seen.withLock { $0 } == ["city accessoryRectangular Tokyo", "city accessoryInline -"])
        #expect(asyncSeen.withLock { $0 } == ["city accessoryRectangular", "city accessoryInline"])
        #expect(day.appEvents.first { $0.label == "look" }?.reloadCalls == ["city"])
        // Outside a host (an app with no widget placed): empty, not an error.
        let outside = try await WidgetCenter.shared.currentConfigurations()
        #expect(outside.isEmpty)
    }
}

@Suite struct WidgetWalkthroughEdgeTests {
    @Test func anAppRequestAtTheFirstTimelinesReloadJoinsItsBatch() async throws {
        let (model, host) = FavoritesModel.hosted()
        host.place(.accessoryRectangular)
        host.place(.accessoryCircular)
        // The first timelines are requested at 0 and reload at 0.1 s: the app's request at
        // 0.1 s joins that batch; the one at 0.15 s is a reload of its own.
        host.at(host.date(seconds: 0.1), "first") { model.didReceive(["a"]) }
        host.at(host.date(seconds: 0.15), "second") { model.didReceive(["a", "b"]) }
        let day = await host.run(for: 60)
        #expect(day.reloads(.accessoryRectangular).count == 2, "\(day.log)")
        #expect(day.reloads(.accessoryRectangular).first?.reasons == [.widgetAdded, .reloadTimelines])
        #expect(day.shown(.accessoryRectangular).last?.entry.logins == ["a", "b"])
    }
}
