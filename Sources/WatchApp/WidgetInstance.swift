import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// One placed widget: WidgetKit's rules for it (``WidgetReloadState``: budget, coalesced
/// requests, policy, the entry on screen) plus its favorites timeline and configuration.
/// ``WidgetScheduler`` drives it; it never reads a clock.
public struct WidgetInstance: Sendable, Identifiable {
    /// What the user placed, with its current configuration.
    public private(set) var descriptor: WidgetDescriptor
    /// The current timeline; `nil` until the first reload (the placeholder shows).
    public private(set) var timeline: WidgetTimeline?
    /// The entry on screen when the current timeline came, shown until its first entry is due.
    private var shownBefore: FavoritesEntry?
    /// WidgetKit's rules for this instance.
    public private(set) var reloadState: WidgetReloadState

    init(descriptor: WidgetDescriptor, rules: WidgetRules) {
        self.descriptor = descriptor
        reloadState = WidgetReloadState(
            budget: ReloadBudget(limit: rules.budgetLimit(for: descriptor), window: rules.budgetWindow))
    }

    /// The descriptor's id.
    public var id: String { descriptor.id }
    /// The descriptor's family.
    public var family: WidgetFamily { descriptor.family }
    /// Counts timelines: 0 before the first reload.
    public var generation: Int { reloadState.generation }
    /// The index of the entry on screen.
    public var displayedIndex: Int? { reloadState.displayedIndex }
    /// The instance's own reload budget.
    public var budget: ReloadBudget { reloadState.budget }
    /// The requests coalesced since the last reload.
    public var pending: PendingReload? { reloadState.pending }
    /// When the last reload happened.
    public var lastReloadAt: Timestamp? { reloadState.lastReloadAt.map(Timestamp.init) }

    /// True while a reload the budget refused is pending: the screen shows old data.
    public var isStale: Bool { reloadState.isStale }

    /// The entry on screen; `nil` before the first reload. A timeline whose first entry is
    /// still ahead leaves the entry before it on screen, as WidgetKit does.
    public var displayedEntry: FavoritesEntry? {
        guard let timeline, let i = displayedIndex else { return shownBefore }
        return timeline.entries[i]
    }

    /// What the widget shows now: its family's content for the entry on screen, or the
    /// redacted placeholder.
    public var content: WidgetContent { content(as: family) }

    /// The entry on screen laid out for any `family` (the JSON renderer shows them all).
    public func content(as family: WidgetFamily) -> WidgetContent {
        let entry =
            displayedEntry
            ?? FavoritesEntry(date: Timestamp(millisecondsSinceEpoch: 0), content: .placeholder, favoritesCount: 0)
        return WidgetContent(family: family, entry: entry)
    }

    /// When the current timeline's policy asks for the next one: the policy's date, but never
    /// sooner than the minimum reload interval after the last reload; `nil` for `.never`.
    public func policyReloadDate(rules: WidgetRules) -> Timestamp? {
        reloadState.policyReloadDate(rules: rules.reloadRules).map(Timestamp.init)
    }

    mutating func request(_ request: ReloadRequest) {
        reloadState.request(request)
    }

    mutating func configure(_ configuration: SelectedUserIntent) {
        descriptor.configuration = configuration
    }

    /// Runs what is due at `now` (WidgetKit's steps): the entry whose date has come on the
    /// timeline on screen (the last entry of an `.atEnd` timeline is due when its reload is),
    /// the policy's request and one reload for the pending batch (or a stale report), the
    /// provider's timeline, then the entry whose date has come on it.
    mutating func flush(
        now: Timestamp, favorites: FavoritesSnapshot?, provider: FavoritesTimelineProvider, rules: WidgetRules,
        appForeground: Bool
    ) -> [WidgetEvent] {
        var events: [WidgetEvent] = []
        renderDueEntry(now: now, into: &events)
        let reloadRules = rules.reloadRules
        switch reloadState.decide(now: now.date, rules: reloadRules, appForeground: appForeground) {
        case .none:
            break
        case .reload(let batch, let charged):
            events.append(
                .reloaded(reload(batch, now: now, favorites: favorites, provider: provider, rules: reloadRules, charged: charged)))
        case .refused(let batch, let retryAt):
            let report = StaleReport(
                widgetID: id, kind: descriptor.kind, family: family, generation: generation, reason: batch.reason,
                reasons: batch.reasons, requestCount: batch.requestCount, at: now, retryAt: retryAt.map(Timestamp.init),
                budgetLimit: budget.limit)
            events.append(.stale(report))
        }
        renderDueEntry(now: now, into: &events)
        return events
    }

    /// Renders the entry due at `now`, if it is not on screen already.
    private mutating func renderDueEntry(now: Timestamp, into events: inout [WidgetEvent]) {
        guard let timeline, let i = reloadState.advance(now: now.date) else { return }
        let entry = timeline.entries[i]
        let rendered = EntryRendered(
            widgetID: id, family: family, generation: generation, index: i, entryDate: entry.timestamp, at: now,
            content: WidgetContent(family: family, entry: entry))
        events.append(.rendered(rendered))
    }

    /// Asks the favorites widget's WidgetKit provider for the timeline, over the stored
    /// `favorites`, and installs it.
    private mutating func reload(
        _ batch: PendingReload, now: Timestamp, favorites: FavoritesSnapshot?, provider: FavoritesTimelineProvider,
        rules: WidgetReloadRules, charged: Bool
    ) -> WidgetReload {
        let widget = FavoritesWidgetProvider(provider, favorites: { favorites }, now: { now.date })
        let answer = widget.timeline(for: descriptor.configuration, in: TimelineProviderContext(family: family))
        let next = install(answer, now: now, rules: rules)
        return WidgetReload(
            widgetID: id, kind: descriptor.kind, family: family, generation: generation, reason: batch.reason,
            reasons: batch.reasons, requestCount: batch.requestCount, requestedAt: Timestamp(batch.firstRequestedAt),
            at: now, entries: next.entries, policy: next.policy,
            latencyMilliseconds: batch.dataDate.map { TimeMath.between(Timestamp($0), now) }, charged: charged,
            budgetLeft: budget.remaining(at: now))
    }

    /// Installs the provider's `answer` as the new timeline and returns it. An answer with no
    /// entries keeps the timeline on screen, as the reload state keeps its entry dates (and
    /// takes the new policy): replacing it would leave the displayed index past the end.
    mutating func install(_ answer: Timeline<FavoritesEntry>, now: Timestamp, rules: WidgetReloadRules)
        -> WidgetTimeline
    {
        // In date order, as the reload state keeps its dates (``WidgetReloadState/chronologicalOrder(_:)``).
        let order = WidgetReloadState.chronologicalOrder(answer.entries.map(\.date))
        let next = WidgetTimeline(Timeline(entries: order.map { answer.entries[$0] }, policy: answer.policy))
        if !next.entries.isEmpty {
            shownBefore = displayedEntry
            timeline = next
        }
        reloadState.install(entryDates: answer.entries.map(\.date), policy: answer.policy, now: now.date, rules: rules)
        return next
    }

    /// The earliest date at or after `now` when ``flush`` has work; `nil` if none is planned.
    func nextWakeUp(now: Timestamp, rules: WidgetRules, appForeground: Bool) -> Timestamp? {
        reloadState.nextWakeUp(now: now.date, rules: rules.reloadRules, appForeground: appForeground)
            .map(Timestamp.init)
    }
}
