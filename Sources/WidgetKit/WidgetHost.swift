import AppIntents
import Foundation

/// Runs a widget's provider against WidgetKit's rules on a virtual clock: a simulated day
/// (or week) in well under a second.
///
/// Place the widget in one or more families, schedule what the app does and when (data
/// changes that may call `WidgetCenter.shared.reloadTimelines(ofKind:)`, foreground and
/// background), then ``run(for:)``. The host jumps from event to event and from wake-up to
/// wake-up; at each it flushes every widget as WidgetKit would: coalesced requests become one
/// reload, charged to the widget's own rolling 24 h budget unless the app is in the
/// foreground (or budgets are off, or it is the widget's first timeline); a refused reload
/// leaves the widget stale; `.atEnd` and `.after` ask again at their time; each entry comes
/// on screen at its date. The result, a ``WidgetDay``, says what every widget showed at every
/// moment, every reload with its reason and the budget left, and every refusal.
///
/// ```swift
/// let host = WidgetHost(kind: "favorites", provider: FavoritesProvider(store: store))
/// host.place(.accessoryRectangular)
/// host.at(hours: 9, "store torvalds") { app.addFavorite("torvalds") }
/// let day = await host.run()
/// try day.expectShown(.accessoryRectangular, within: 60, of: host.date(hours: 9)) { $0.logins.contains("torvalds") }
/// ```
///
/// App code may be synchronous or `async` (`@MainActor` handlers, code that awaits a `Task`):
/// the host awaits it, then takes the `WidgetCenter` calls it made, at the event's time. A
/// call made after the action returned (from a `Task` it started and did not await) is kept as
/// an "unscoped call" app event (``AppEventRecord/isUnscoped``) at the moment the host noticed
/// it; a call from `Task.detached` sees no host and is lost, as on a watch with no widget placed.
///
/// Providers run unchanged: their `Date()` is the wall clock, and the host moves the dates
/// they return onto the virtual clock (``ProviderClock/wallClock``). A provider is called
/// from the host's task; its completion handler may be called from any thread, once.
public final class WidgetHost<Entry: TimelineEntry & Sendable> {
    /// The widget kind the provider serves.
    public let kind: String
    /// The rules in force (budget, debounce, spacing, provider timeout).
    public var rules: WidgetReloadRules
    /// The virtual clock: at ``start`` until ``run(for:)``.
    public let clock: VirtualClock
    /// Where the simulated day starts.
    public let start: Date
    /// How provider dates map onto the virtual clock.
    public var providerClock: ProviderClock
    /// Whether the app starts in the foreground (it starts in the background by default).
    public var startsInForeground = false
    /// The set-up calls refused so far (a duplicate placement, a bad interval), in order.
    public private(set) var setupErrors: [WidgetHostError] = []

    private let source: TimelineSource<Entry>
    private let describe: @Sendable (Entry) -> String
    private var widgets: [HostedWidget] = []
    private var events: [ScheduledEvent] = []

    /// A scheduled app event.
    private struct ScheduledEvent {
        enum Action {
            case app(() -> Void)
            case asyncApp(@Sendable () async -> Void)
            case foreground(Bool)
            case reload(kind: String?)
        }
        let at: Date
        let label: String
        let action: Action
    }

    /// Midnight UTC, 1 June 2026: the default start of the simulated day.
    public static var defaultStart: Date { Date(timeIntervalSince1970: 1_780_272_000) }

    private init(
        kind: String, source: TimelineSource<Entry>, rules: WidgetReloadRules, start: Date,
        providerClock: ProviderClock, describe: (@Sendable (Entry) -> String)?
    ) {
        self.kind = kind
        self.source = source
        self.rules = rules
        self.start = start
        self.providerClock = providerClock
        self.describe = describe ?? Self.defaultDescription
        clock = VirtualClock(start: start)
    }

    /// A host for a completion-handler ``TimelineProvider`` of widget `kind`.
    ///
    /// `describe` says in words what an entry shows (for the strip and the failure messages);
    /// by default the entry's stored properties other than `date`.
    public convenience init<P: TimelineProvider>(
        kind: String, provider: P, rules: WidgetReloadRules = WidgetReloadRules(), start: Date = defaultStart,
        providerClock: ProviderClock = .wallClock, describe: (@Sendable (Entry) -> String)? = nil
    ) where P.Entry == Entry {
        self.init(
            kind: kind, source: TimelineSource(provider), rules: rules, start: start, providerClock: providerClock,
            describe: describe)
    }

    /// A host for an intent-configured ``AppIntentTimelineProvider`` of widget `kind` (it must
    /// be `Sendable`: its async methods run in a task of their own, so a timeout can end the wait).
    public convenience init<P: AppIntentTimelineProvider & Sendable>(
        kind: String, provider: P, rules: WidgetReloadRules = WidgetReloadRules(), start: Date = defaultStart,
        providerClock: ProviderClock = .wallClock, describe: (@Sendable (Entry) -> String)? = nil
    ) where P.Entry == Entry {
        self.init(
            kind: kind, source: TimelineSource(provider), rules: rules, start: start, providerClock: providerClock,
            describe: describe)
    }

    // MARK: - Setting up the day

    /// Places an instance of the widget in `family` (id `<kind>.<family>` unless given), with
    /// its own budget (``WidgetReloadRules/dailyBudget`` unless given). An id already placed
    /// places nothing and returns ``WidgetHostError/alreadyPlaced(id:)`` (also kept in
    /// ``setupErrors``).
    @discardableResult
    public func place(
        _ family: WidgetFamily, id: String? = nil, configuration: (any WidgetConfigurationIntent)? = nil,
        budget: Int? = nil
    ) -> WidgetHostError? {
        let id = id ?? "\(kind).\(family)"
        guard !widgets.contains(where: { $0.id == id }) else { return refuse(.alreadyPlaced(id: id)) }
        widgets.append(
            HostedWidget(
                id: id, kind: kind, family: family, configuration: configuration, budget: budget ?? rules.dailyBudget))
        return nil
    }

    private func refuse(_ error: WidgetHostError) -> WidgetHostError {
        setupErrors.append(error)
        return error
    }

    /// The instant `hours`/`minutes`/`seconds` after ``start`` (on the millisecond grid the
    /// host keeps time on, so it compares equal to the dates in the ``WidgetDay``).
    public func date(hours: Double = 0, minutes: Double = 0, seconds: Double = 0) -> Date {
        WidgetTime.add(start, hours * 3600 + minutes * 60 + seconds)
    }

    /// Runs app code at `date`: data changes, and any `WidgetCenter` calls it makes.
    public func at(_ date: Date, _ label: String = "app event", _ action: @escaping () -> Void) {
        schedule(ScheduledEvent(at: date, label: label, action: .app(action)))
    }

    /// Runs async app code at `date` (a `@MainActor` handler, or one that awaits a `Task`):
    /// the host awaits it before it takes the event's `WidgetCenter` calls, so every call made
    /// before it returns, in any child or unstructured `Task` it awaited, counts at `date`.
    public func at(_ date: Date, _ label: String = "app event", _ action: @escaping @Sendable () async -> Void) {
        schedule(ScheduledEvent(at: date, label: label, action: .asyncApp(action)))
    }

    private func schedule(_ event: ScheduledEvent) {
        events.append(ScheduledEvent(at: WidgetTime.add(event.at, 0), label: event.label, action: event.action))
    }

    /// Runs app code `hours` (and `minutes`) after the start.
    public func at(hours: Double, minutes: Double = 0, _ label: String = "app event", _ action: @escaping () -> Void) {
        at(date(hours: hours, minutes: minutes), label, action)
    }

    /// Runs async app code `hours` (and `minutes`) after the start (see the async `at(_:_:_:)`).
    public func at(
        hours: Double, minutes: Double = 0, _ label: String = "app event",
        _ action: @escaping @Sendable () async -> Void
    ) {
        at(date(hours: hours, minutes: minutes), label, action)
    }

    /// Runs app code every `interval` seconds from `from` (default: the start) until before
    /// `until` (default: a day later), passing the tick number (0, 1, …). An interval that is
    /// not a finite number of seconds, at least a millisecond, schedules nothing and returns
    /// ``WidgetHostError/badInterval(_:)`` (also kept in ``setupErrors``).
    @discardableResult
    public func every(
        _ interval: TimeInterval, from: Date? = nil, until: Date? = nil, _ label: String = "tick",
        _ action: @escaping (Int) -> Void
    ) -> WidgetHostError? {
        guard let dates = ticks(interval, from: from, until: until) else { return refuse(.badInterval(interval)) }
        for (n, t) in dates.enumerated() {
            at(t, "\(label) \(n)") { action(n) }
        }
        return nil
    }

    /// The dates of `every`'s ticks.
    private func ticks(_ interval: TimeInterval, from: Date?, until: Date?) -> [Date]? {
        guard interval.isFinite, interval >= 0.001 else { return nil }  // the host's millisecond grid
        let first = from ?? start
        let end = until ?? first.addingTimeInterval(86_400)
        var dates: [Date] = []
        var t = first
        while t < end {
            dates.append(t)
            t = WidgetTime.add(first, Double(dates.count) * interval)
        }
        return dates
    }

    /// Runs async app code every `interval` seconds (as the synchronous `every` does).
    @discardableResult
    public func every(
        _ interval: TimeInterval, from: Date? = nil, until: Date? = nil, _ label: String = "tick",
        _ action: @escaping @Sendable (Int) async -> Void
    ) -> WidgetHostError? {
        guard let dates = ticks(interval, from: from, until: until) else { return refuse(.badInterval(interval)) }
        for (n, t) in dates.enumerated() {
            at(t, "\(label) \(n)") { @Sendable in await action(n) }
        }
        return nil
    }

    /// The app comes to the foreground at `date` (reloads are free while it is there).
    public func foreground(at date: Date) {
        schedule(ScheduledEvent(at: date, label: "foreground", action: .foreground(true)))
    }

    /// The app leaves the foreground at `date`.
    public func background(at date: Date) {
        schedule(ScheduledEvent(at: date, label: "background", action: .foreground(false)))
    }

    /// `WidgetCenter.shared.reloadTimelines(ofKind:)` at `date`, as if the app called it.
    public func reloadTimelines(ofKind kind: String, at date: Date) {
        schedule(ScheduledEvent(at: date, label: "reloadTimelines(\(kind))", action: .reload(kind: kind)))
    }

    /// `WidgetCenter.shared.reloadAllTimelines()` at `date`.
    public func reloadAllTimelines(at date: Date) {
        schedule(ScheduledEvent(at: date, label: "reloadAllTimelines", action: .reload(kind: nil)))
    }

    // MARK: - Running it

    /// Runs `duration` seconds (a day by default) of virtual time and returns what happened.
    /// With no widget placed, the widget is placed in `accessoryRectangular`.
    nonisolated(nonsending) public func run(for duration: TimeInterval = 86_400) async -> WidgetDay<Entry> {
        if widgets.isEmpty { place(.accessoryRectangular) }
        var run = HostRun(
            widgets: widgets, rules: rules, start: start, foreground: startsInForeground, describe: describe,
            placeholder: source.placeholder)
        let end = WidgetTime.add(start, duration)
        let center = HostCenter(
            widgets: widgets.map { WidgetInfo(kind: $0.kind, family: $0.family, configuration: $0.configuration) })
        RunningHosts.add(center)
        defer { RunningHosts.remove(center) }
        let queue = events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        var next = 0
        var now = start
        var passes = 0
        while passes < Self.maximumPasses {
            let event = next < queue.count ? queue[next].at : nil
            guard let due = [event, run.nextWakeUp(now: now)].compactMap({ $0 }).min(), due <= end else { break }
            now = max(now, due)
            clock.move(to: now)
            recordUnscoped(center, to: &run, now: now)
            while next < queue.count, queue[next].at <= now {
                await apply(queue[next], to: &run, center: center, now: now)
                next += 1
            }
            recordUnscoped(center, to: &run, now: now)
            // Requests just made wait for their debounce: a burst becomes one reload.
            if let wake = run.nextWakeUp(now: now), wake <= now {
                await run.flush(now: now, source: source, providerClock: providerClock)
            }
            passes += 1
        }
        clock.move(to: end)
        recordUnscoped(center, to: &run, now: end)
        return run.finish(
            end: end, kind: kind, recommendationsInvalidated: center.invalidationCount,
            relevanceInvalidated: center.relevanceInvalidationCount(ofKind: kind))
    }

    /// What the widget shows in a transient appearance: the provider's
    /// `getSnapshot(in:completion:)` (an ``AppIntentTimelineProvider``'s `snapshot(for:in:)`,
    /// given `configuration`) for `family`, with `context.isPreview` true by default — the
    /// widget gallery, or the watch face editor, where WidgetKit asks for sample data fast.
    /// Apart from ``run(for:)``'s day: the budget is not charged and nothing is recorded.
    ///
    /// The entry is returned as the provider made it (its `date` is not moved onto the virtual clock).
    /// - Throws: ``WidgetSnapshotError/neverCompleted(family:timeout:)`` when the provider did not
    ///   answer within ``WidgetReloadRules/providerTimeout`` seconds of real time.
    nonisolated(nonsending) public func snapshot(
        _ family: WidgetFamily, isPreview: Bool = true, configuration: (any WidgetConfigurationIntent)? = nil
    ) async throws(WidgetSnapshotError) -> Entry {
        let context = TimelineProviderContext(family: family, isPreview: isPreview)
        let (entry, _) = await source.snapshot(context, configuration, rules.providerTimeout)
        guard let entry else { throw .neverCompleted(family: family, timeout: rules.providerTimeout) }
        return entry
    }

    /// A guard against a provider whose policy asks again at once, forever.
    static var maximumPasses: Int { 1_000_000 }

    nonisolated(nonsending) private func apply(_ event: ScheduledEvent, to run: inout HostRun<Entry>, center: HostCenter, now: Date) async {
        switch event.action {
        case .foreground(let on):
            run.setForeground(on)
            run.record(AppEventRecord(at: now, label: event.label, reloadCalls: [], unknownKinds: []))
        case .reload(let kind):
            run.request(kind: kind, known: widgets.map(\.kind), now: now, label: event.label)
        case .app(let action):
            let scope = center.open()
            WidgetCenter.$host.withValue(scope) { action() }
            await scope.laterWorkDone()
            scope.close()
            record(calls: center.drain(), label: event.label, to: &run, now: now)
        case .asyncApp(let action):
            let scope = center.open()
            await WidgetCenter.$host.withValue(scope) { await action() }
            await scope.laterWorkDone()
            scope.close()
            record(calls: center.drain(), label: event.label, to: &run, now: now)
        }
    }

    /// Records an event's `WidgetCenter` calls and turns them into reload requests at `now`.
    private func record(
        calls: [String?], label: String, unscoped: Bool = false, to run: inout HostRun<Entry>, now: Date
    ) {
        let unknown = calls.compactMap { $0 }.filter { k in !widgets.contains { $0.kind == k } }
        run.record(
            AppEventRecord(at: now, label: label, reloadCalls: calls, unknownKinds: unknown, isUnscoped: unscoped))
        for kind in calls { run.request(kind: kind, known: widgets.map(\.kind), now: now, label: nil) }
    }

    /// Records the calls that arrived after their event's action had returned (from a `Task`
    /// it did not await) as an ``unscopedLabel`` event at `now`, when the host noticed them,
    /// and requests those reloads then: never dropped, never charged to a later event.
    private func recordUnscoped(_ center: HostCenter, to run: inout HostRun<Entry>, now: Date) {
        let late = center.drainUnscoped()
        guard !late.isEmpty else { return }
        record(calls: late, label: Self.unscopedLabel, unscoped: true, to: &run, now: now)
    }

    /// The label of the app event that records calls made outside any event.
    public static var unscopedLabel: String { "unscoped call (made after its app event ended)" }

    /// The default `describe`: the entry's stored properties other than `date` and `relevance`.
    @Sendable static func defaultDescription(_ entry: Entry) -> String {
        let parts = Mirror(reflecting: entry).children.compactMap { child -> String? in
            guard let label = child.label, label != "date", label != "relevance" else { return nil }
            return "\(child.value)"
        }
        return parts.isEmpty ? String(describing: entry) : parts.joined(separator: " · ")
    }
}
