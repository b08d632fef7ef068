import RelayProtocol

/// One placed widget: its timeline, what is on screen, its generation, budget and pending
/// reload requests. ``WidgetScheduler`` drives it; it never reads a clock.
public struct WidgetInstance: Sendable, Identifiable {
    /// What the user placed, with its current configuration.
    public private(set) var descriptor: WidgetDescriptor
    /// The current timeline; `nil` until the first reload (the placeholder shows).
    public private(set) var timeline: WidgetTimeline?
    /// Counts timelines: 0 before the first reload.
    public private(set) var generation = 0
    /// The index of the entry on screen.
    public private(set) var displayedIndex: Int?
    /// The instance's own reload budget.
    public private(set) var budget: ReloadBudget
    /// The requests coalesced since the last reload.
    public private(set) var pending: PendingReload?
    /// When the last reload happened.
    public private(set) var lastReloadAt: Timestamp?
    /// The current timeline's policy has already turned into a request.
    private var policyRequested = false

    init(descriptor: WidgetDescriptor, rules: WidgetRules) {
        self.descriptor = descriptor
        budget = ReloadBudget(limit: rules.budgetLimit(for: descriptor), window: rules.budgetWindow)
    }

    /// The descriptor's id.
    public var id: String { descriptor.id }
    /// The descriptor's family.
    public var family: WidgetFamily { descriptor.family }

    /// True while a reload the budget refused is pending: the screen shows old data.
    public var isStale: Bool { pending?.isDeferred ?? false }

    /// The entry on screen; `nil` before the first reload.
    public var displayedEntry: FavoritesEntry? {
        guard let timeline, let i = displayedIndex else { return nil }
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
        guard let date = timeline?.policyDate, let last = lastReloadAt else { return nil }
        return max(date, TimeMath.add(last, rules.minimumReloadInterval))
    }

    mutating func request(_ request: ReloadRequest) {
        if pending == nil {
            pending = PendingReload(request)
        } else {
            pending?.merge(request)
        }
    }

    mutating func configure(_ configuration: SelectedUserIntent) {
        descriptor.configuration = configuration
    }

    /// Whether a reload now would be free.
    private func isExempt(_ batch: PendingReload, rules: WidgetRules, appForeground: Bool) -> Bool {
        rules.noBudget || appForeground || batch.isExemptByReason
    }

    /// Runs what is due at `now`: the policy's request, one reload for the pending batch (or
    /// a stale report), then the entry whose date has come.
    mutating func flush(
        now: Timestamp, favorites: FavoritesSnapshot?, provider: FavoritesTimelineProvider, rules: WidgetRules,
        appForeground: Bool
    ) -> [WidgetEvent] {
        var events: [WidgetEvent] = []
        if !policyRequested, let timeline, let due = policyReloadDate(rules: rules), due <= now {
            policyRequested = true
            let reason: ReloadReason = timeline.policy == .atEnd ? .policyAtEnd : .policyAfterDate
            request(ReloadRequest(reason: reason, requestedAt: due))
        }
        if let batch = pending {
            let exempt = isExempt(batch, rules: rules, appForeground: appForeground)
            if exempt || budget.spend(at: now) {
                events.append(
                    .reloaded(reload(batch, now: now, favorites: favorites, provider: provider, charged: !exempt)))
            } else if batch.hasUnreportedRequests {
                pending?.isDeferred = true
                pending?.hasUnreportedRequests = false
                let report = StaleReport(
                    widgetID: id, kind: descriptor.kind, family: family, generation: generation, reason: batch.reason,
                    reasons: batch.reasons, requestCount: batch.requestCount, at: now,
                    retryAt: budget.nextAvailable(at: now), budgetLimit: budget.limit)
                events.append(.stale(report))
            }
        }
        if let timeline, let i = timeline.index(at: now), i != displayedIndex {
            displayedIndex = i
            let entry = timeline.entries[i]
            let rendered = EntryRendered(
                widgetID: id, family: family, generation: generation, index: i, entryDate: entry.date, at: now,
                content: WidgetContent(family: family, entry: entry))
            events.append(.rendered(rendered))
        }
        return events
    }

    private mutating func reload(
        _ batch: PendingReload, now: Timestamp, favorites: FavoritesSnapshot?, provider: FavoritesTimelineProvider,
        charged: Bool
    ) -> WidgetReload {
        let context = FavoritesTimelineProvider.Context(
            now: now, family: family, favorites: favorites?.users ?? [], revision: favorites?.revision,
            configuration: descriptor.configuration)
        let next = provider.timeline(in: context)
        generation += 1
        timeline = next
        displayedIndex = nil
        lastReloadAt = now
        policyRequested = false
        pending = nil
        return WidgetReload(
            widgetID: id, kind: descriptor.kind, family: family, generation: generation, reason: batch.reason,
            reasons: batch.reasons, requestCount: batch.requestCount, requestedAt: batch.firstRequestedAt, at: now,
            entries: next.entries, policy: next.policy,
            latencyMilliseconds: batch.snapshotSentAt.map { TimeMath.between($0, now) }, charged: charged,
            budgetLeft: budget.remaining(at: now))
    }

    /// The earliest date at or after `now` when ``flush`` has work; `nil` if none is planned.
    func nextWakeUp(now: Timestamp, rules: WidgetRules, appForeground: Bool) -> Timestamp? {
        var dates: [Timestamp] = []
        if let timeline, let i = displayedIndex, i + 1 < timeline.entries.count {
            dates.append(timeline.entries[i + 1].date)
        }
        if !policyRequested, let due = policyReloadDate(rules: rules) { dates.append(due) }
        if let batch = pending {
            if !batch.isDeferred {
                dates.append(TimeMath.add(batch.firstRequestedAt, rules.debounce))
            } else if isExempt(batch, rules: rules, appForeground: appForeground) {
                dates.append(now)
            } else {
                if batch.hasUnreportedRequests { dates.append(TimeMath.add(batch.lastRequestedAt, rules.debounce)) }
                if let retry = budget.nextAvailable(at: now) { dates.append(retry) }
            }
        }
        return dates.min().map { max($0, now) }
    }
}
