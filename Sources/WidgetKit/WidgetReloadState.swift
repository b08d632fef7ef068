import Foundation

/// What a flush decided for one widget: nothing, a reload (charged or free), or a refusal.
public enum ReloadDecision: Sendable, Hashable {
    /// No request is pending.
    case none
    /// Ask the provider for a new timeline now, for this batch; `charged` says whether it
    /// was spent from the budget.
    case reload(PendingReload, charged: Bool)
    /// The budget is spent: the widget keeps its timeline and is stale until `retryAt`
    /// (`nil`: never, a budget of 0). Reported once per batch of new requests.
    case refused(PendingReload, retryAt: Date?)
}

/// Something wrong with a timeline a provider returned, flagged when it is installed.
public enum TimelineWarning: Sendable, Hashable, CustomStringConvertible {
    /// Entry `index` is less than the minimum spacing after the one before it (`gap` seconds).
    case entriesTooClose(index: Int, gap: TimeInterval)
    /// Entry `index` is dated before the one before it.
    case entriesOutOfOrder(index: Int)
    /// The timeline has no entries: the widget keeps showing what it showed.
    case noEntries

    public var description: String {
        switch self {
        case .entriesTooClose(let i, let gap): "entry \(i) only \(Int(gap.rounded())) s after entry \(i - 1)"
        case .entriesOutOfOrder(let i): "entry \(i) dated before entry \(i - 1)"
        case .noEntries: "empty timeline"
        }
    }
}

/// One widget instance under WidgetKit's rules, as a value-type state machine that never
/// reads a clock: its reload requests (coalesced), its own budget, its timeline's entry
/// dates and policy, and which entry is on screen.
///
/// A flush is three steps, so a driver can call the provider in between however it must
/// (synchronously, or awaiting a completion handler): ``decide(now:rules:appForeground:)``
/// (the due policy becomes a request; the pending batch becomes a reload or a refusal),
/// then ``install(entryDates:policy:now:rules:)`` with the provider's answer (or
/// ``abandonReload(now:rules:)`` if it never answered), then ``advance(now:)`` (the entry now due).
/// The watch's favorites widget and ``WidgetHost`` both drive it.
public struct WidgetReloadState: Sendable, Hashable {
    /// The instance's own reload budget.
    public private(set) var budget: ReloadBudget
    /// The requests coalesced since the last reload.
    public private(set) var pending: PendingReload?
    /// Counts installed timelines: 0 before the first.
    public private(set) var generation = 0
    /// The current timeline's entry dates, as the provider gave them.
    public private(set) var entryDates: [Date] = []
    /// The current timeline's policy; `nil` before the first timeline.
    public private(set) var policy: TimelineReloadPolicy?
    /// The index of the entry on screen; `nil` before the first timeline.
    public private(set) var displayedIndex: Int?
    /// When the last reload happened (or was attempted).
    public private(set) var lastReloadAt: Date?
    /// The current timeline's policy has already turned into a request.
    private var policyRequested = false
    /// The last timeline had no entries (the old ones stay on screen).
    private var lastTimelineWasEmpty = false
    /// A timeline came once (``install(entryDates:policy:now:rules:)``).
    private var hasHadTimeline = false
    /// Reloads abandoned before any timeline came (``abandonReload(now:rules:)``'s back-off).
    private var firstTimelinesAbandoned = 0

    /// A widget with `budget`, no timeline and nothing pending.
    public init(budget: ReloadBudget) {
        self.budget = budget
    }

    /// True while a reload the budget refused is pending: the screen shows old data.
    public var isStale: Bool { pending?.isDeferred ?? false }

    /// Adds a request to the pending batch (or starts one).
    public mutating func request(_ request: ReloadRequest) {
        if pending == nil {
            pending = PendingReload(request)
        } else {
            pending?.merge(request)
        }
    }

    /// When the current timeline's policy asks for the next one: the policy's date, but never
    /// sooner than the minimum reload interval after the last reload; `nil` for `.never`.
    public func policyReloadDate(rules: WidgetReloadRules) -> Date? {
        guard let policy, let last = lastReloadAt else { return nil }
        let date: Date
        switch policy.kind {
        case .atEnd:
            // An empty timeline has no last date: it asks again after the minimum interval,
            // whatever an earlier timeline held.
            date = lastTimelineWasEmpty ? last : (entryDates.last ?? last)
        case .after(let d): date = d
        case .never: return nil
        }
        return max(date, WidgetTime.add(last, rules.minimumReloadInterval))
    }

    private func isExempt(_ batch: PendingReload, rules: WidgetReloadRules, appForeground: Bool) -> Bool {
        rules.noBudget || appForeground || batch.isExemptByReason
    }

    /// Flush step 1: turns a due policy into a request, then decides the pending batch: a
    /// reload (spending the budget unless exempt) or, with no budget left, a refusal
    /// (reported once per batch of new requests; the batch stays pending).
    public mutating func decide(now: Date, rules: WidgetReloadRules, appForeground: Bool) -> ReloadDecision {
        if !policyRequested, let policy, let due = policyReloadDate(rules: rules), due <= now {
            policyRequested = true
            let reason: ReloadReason = policy == .atEnd ? .policyAtEnd : .policyAfterDate
            request(ReloadRequest(reason: reason, requestedAt: due))
        }
        guard let batch = pending else { return .none }
        let exempt = isExempt(batch, rules: rules, appForeground: appForeground)
        if exempt || budget.spend(at: now) {
            pending = nil
            return .reload(batch, charged: !exempt)
        }
        guard batch.hasUnreportedRequests else { return .none }
        pending?.isDeferred = true
        pending?.hasUnreportedRequests = false
        return .refused(batch, retryAt: budget.nextAvailable(at: now))
    }

    /// The order in which a timeline's entries are shown: by date, equal dates in the order
    /// given. ``install(entryDates:policy:now:rules:)`` keeps `entryDates` in this order, so a
    /// driver reorders its entries the same way.
    public static func chronologicalOrder(_ dates: [Date]) -> [Int] {
        dates.indices.sorted { (dates[$0], $0) < (dates[$1], $1) }
    }

    /// Flush step 2: the provider's timeline for the reload ``decide(now:rules:appForeground:)``
    /// asked for; returns what is wrong with it. An empty timeline keeps the old entries.
    /// Entries out of order are reported and shown in date order (``chronologicalOrder(_:)``);
    /// dates are kept on the millisecond grid.
    @discardableResult
    public mutating func install(
        entryDates dates: [Date], policy: TimelineReloadPolicy, now: Date, rules: WidgetReloadRules
    ) -> [TimelineWarning] {
        var warnings: [TimelineWarning] = []
        for i in dates.indices.dropFirst() {
            let gap = dates[i].timeIntervalSince(dates[i - 1])
            if gap < 0 {
                warnings.append(.entriesOutOfOrder(index: i))
            } else if WidgetTime.ms(gap) < WidgetTime.ms(rules.minimumEntrySpacing) {
                warnings.append(.entriesTooClose(index: i, gap: gap))
            }
        }
        generation += 1
        hasHadTimeline = true
        lastReloadAt = now
        policyRequested = false
        lastTimelineWasEmpty = dates.isEmpty
        if dates.isEmpty {
            warnings.append(.noEntries)
            self.policy = policy
            return warnings
        }
        entryDates = Self.chronologicalOrder(dates).map { WidgetTime.add(dates[$0], 0) }
        self.policy = policy
        displayedIndex = nil
        return warnings
    }

    /// Flush step 2 when the provider never answered: the widget keeps its timeline, and its
    /// policy asks again, no sooner than the minimum reload interval from now (a slow answer
    /// once does not stop the widget for the rest of the day; `.never` waits for a request).
    /// A widget whose first timeline never came has no policy to ask again with, and showed its
    /// placeholder for the rest of the day: it asks again after the minimum reload interval,
    /// then twice as long each time its provider stays silent (at most 6 h), from its budget.
    public mutating func abandonReload(now: Date, rules: WidgetReloadRules = WidgetReloadRules()) {
        lastReloadAt = now
        policyRequested = false
        guard !hasHadTimeline else { return }
        firstTimelinesAbandoned += 1
        let wait = min(rules.minimumReloadInterval * pow(2, Double(firstTimelinesAbandoned - 1)), 6 * 3600)
        policy = .after(WidgetTime.add(now, wait))
    }

    /// The index of the entry due at `now`: the last one whose date has passed; `nil` while
    /// none has (what was on screen stays until the first entry's date).
    public func index(at now: Date) -> Int? {
        entryDates.lastIndex { $0 <= now }
    }

    /// Flush step 3: puts the entry due at `now` on screen; returns its index if it changed.
    /// Called before step 1 too, so an entry due when a reload is (the last entry of an `.atEnd`
    /// timeline) comes on screen before the next timeline replaces it.
    public mutating func advance(now: Date) -> Int? {
        guard let i = index(at: now), i != displayedIndex else { return nil }
        displayedIndex = i
        return i
    }

    /// The earliest date at or after `now` when a flush has work; `nil` if none is planned.
    public func nextWakeUp(now: Date, rules: WidgetReloadRules, appForeground: Bool) -> Date? {
        var dates: [Date] = []
        if let i = displayedIndex {
            if i + 1 < entryDates.count { dates.append(entryDates[i + 1]) }
        } else if let first = entryDates.first {
            // A new timeline not on screen yet: its first entry comes at its date (now if due).
            dates.append(first)
        }
        if !policyRequested, let due = policyReloadDate(rules: rules) { dates.append(due) }
        if let batch = pending {
            if !batch.isDeferred {
                dates.append(WidgetTime.add(batch.firstRequestedAt, rules.debounce))
            } else if isExempt(batch, rules: rules, appForeground: appForeground) {
                dates.append(now)
            } else {
                if batch.hasUnreportedRequests { dates.append(WidgetTime.add(batch.lastRequestedAt, rules.debounce)) }
                if let retry = budget.nextAvailable(at: now) { dates.append(retry) }
            }
        }
        return dates.min().map { max($0, now) }
    }
}
