import Foundation

/// One run of a ``WidgetHost``: every widget's ``WidgetReloadState`` and timeline, and the
/// records that become the ``WidgetDay``.
struct HostRun<Entry: TimelineEntry & Sendable> {
    private struct Slot {
        let widget: HostedWidget
        var state: WidgetReloadState
        var entries: [Entry] = []
    }

    private var slots: [Slot]
    private let rules: WidgetReloadRules
    private let start: Date
    private var foreground: Bool
    private let describe: @Sendable (Entry) -> String
    private var shown: [ShownEntry<Entry>] = []
    private var reloads: [HostReload] = []
    private var refusals: [HostRefusal] = []
    private var failures: [ProviderFailure] = []
    /// Each answered call, with its count of extra handler calls: read when the day ends, so a
    /// second call after the answer was used (a cached timeline, then the network's) counts.
    private var answeredCalls: [(widget: HostedWidget, at: Date, extraCalls: @Sendable () -> Int)] = []
    private var appEvents: [AppEventRecord] = []

    /// Every widget placed at `start`, showing its placeholder, its first timeline requested.
    init(
        widgets: [HostedWidget], rules: WidgetReloadRules, start: Date, foreground: Bool,
        describe: @escaping @Sendable (Entry) -> String, placeholder: (TimelineProviderContext) -> Entry
    ) {
        self.rules = rules
        self.start = start
        self.foreground = foreground
        self.describe = describe
        slots = widgets.map { w in
            var state = WidgetReloadState(budget: ReloadBudget(limit: w.budget, window: rules.budgetWindow))
            state.request(ReloadRequest(reason: .widgetAdded, requestedAt: start))
            return Slot(widget: w, state: state)
        }
        for w in widgets {
            let entry = placeholder(TimelineProviderContext(family: w.family))
            shown.append(
                ShownEntry(
                    widgetID: w.id, family: w.family, from: start, entry: entry, text: describe(entry), generation: 0))
        }
    }

    mutating func setForeground(_ on: Bool) {
        foreground = on
    }

    mutating func record(_ event: AppEventRecord) {
        appEvents.append(event)
    }

    /// A reload request for `kind` (every widget when `nil`) at `now`; `label` records it as
    /// an app event of its own (a scheduled `reloadTimelines`).
    mutating func request(kind: String?, known: [String], now: Date, label: String?) {
        if let label {
            let unknown = kind.map { known.contains($0) ? [] : [$0] } ?? []
            appEvents.append(AppEventRecord(at: now, label: label, reloadCalls: [kind], unknownKinds: unknown))
        }
        let reason: ReloadReason = kind == nil ? .reloadAllTimelines : .reloadTimelines
        for i in slots.indices where kind == nil || slots[i].widget.kind == kind {
            // Free because the app asked in the foreground, even if it leaves before the flush.
            slots[i].state.request(ReloadRequest(reason: reason, requestedAt: now, dataDate: now, madeInForeground: foreground))
        }
    }

    /// When the next flush has work.
    func nextWakeUp(now: Date) -> Date? {
        slots.compactMap { $0.state.nextWakeUp(now: now, rules: rules, appForeground: foreground) }.min()
    }

    /// WidgetKit's pass at `now`, widget by widget: the entry due on the timeline on screen,
    /// reload or refuse, then the entry due on the timeline now installed.
    ///
    /// The first step shows the last entry of an `.atEnd` timeline, whose date is also the
    /// reload's: it comes on screen at its date like every entry, and the next timeline's
    /// first entry replaces it (Apple: the next timeline is asked for "after the last date in a
    /// timeline passes").
    nonisolated(nonsending) mutating func flush(now: Date, source: TimelineSource<Entry>, providerClock: ProviderClock) async {
        for i in slots.indices {
            let w = slots[i].widget
            showDueEntry(i, now: now)
            switch slots[i].state.decide(now: now, rules: rules, appForeground: foreground) {
            case .none:
                break
            case .refused(let batch, let retryAt):
                refusals.append(
                    HostRefusal(
                        widgetID: w.id, family: w.family, at: now, reasons: batch.reasons,
                        requestCount: batch.requestCount, retryAt: retryAt, budgetLimit: w.budget))
            case .reload(let batch, let charged):
                let context = TimelineProviderContext(family: w.family)
                let wall = Date()
                let (answer, answeredAt, extraCalls) = await source.timeline(
                    context, w.configuration, rules.providerTimeout)
                guard let timeline = answer, let answeredAt else {
                    slots[i].state.abandonReload(now: now, rules: rules)
                    failures.append(
                        ProviderFailure(
                            widgetID: w.id, family: w.family, at: now, kind: .neverCompleted(waited: rules.providerTimeout)))
                    continue
                }
                let dates = timeline.entries.map {
                    providerClock.translate($0.date, calledAt: wall, answeredAt: answeredAt, now: now)
                }
                answeredCalls.append((w, now, extraCalls))
                var policy = timeline.policy
                if let d = policy.date {
                    policy = .after(providerClock.translate(d, calledAt: wall, answeredAt: answeredAt, now: now))
                }
                let warnings = slots[i].state.install(entryDates: dates, policy: policy, now: now, rules: rules)
                if !timeline.entries.isEmpty {
                    slots[i].entries = WidgetReloadState.chronologicalOrder(dates).map { timeline.entries[$0] }
                }
                reloads.append(
                    HostReload(
                        widgetID: w.id, family: w.family, at: now, reasons: batch.reasons,
                        requestCount: batch.requestCount, requestedAt: batch.firstRequestedAt, charged: charged,
                        budgetLeft: slots[i].state.budget.remaining(at: now), generation: slots[i].state.generation,
                        entryCount: timeline.entries.count, policy: policy, warnings: warnings))
            }
            showDueEntry(i, now: now)
        }
    }

    /// Puts the entry of slot `i` due at `now` on screen, if it is not already.
    private mutating func showDueEntry(_ i: Int, now: Date) {
        guard let index = slots[i].state.advance(now: now) else { return }
        let w = slots[i].widget
        let entry = slots[i].entries[index]
        shown.append(
            ShownEntry(
                widgetID: w.id, family: w.family, from: now, entry: entry, text: describe(entry),
                generation: slots[i].state.generation))
    }

    /// The records, as the day's result. A handler called again after its answer was used (a
    /// cached timeline, then the network's) is reported now, at the reload it belonged to.
    func finish(end: Date, kind: String, recommendationsInvalidated: Int, relevanceInvalidated: Int) -> WidgetDay<Entry> {
        var failures = failures
        for call in answeredCalls {
            let extra = call.extraCalls()
            guard extra > 0 else { continue }
            failures.append(
                ProviderFailure(
                    widgetID: call.widget.id, family: call.widget.family, at: call.at,
                    kind: .completedMoreThanOnce(extraCalls: extra)))
        }
        failures = failures.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        return WidgetDay(
            kind: kind, start: start, end: end, widgets: slots.map(\.widget), shown: shown, reloads: reloads,
            refusals: refusals, providerFailures: failures, appEvents: appEvents,
            recommendationsInvalidated: recommendationsInvalidated, relevanceInvalidated: relevanceInvalidated)
    }
}
