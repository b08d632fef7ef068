import Foundation

/// WidgetKit's knobs for one widget system: the daily budget, the no-budget debug switch,
/// coalescing, the minimum time between policy reloads, the entry spacing that gets flagged,
/// and how long a provider may take to call its completion handler.
public struct WidgetReloadRules: Sendable, Hashable {
    /// Charged reloads per widget instance per ``budgetWindow`` (WidgetKit: "typically 40 to
    /// 70" a day; 70 by default, ``ReloadBudget/watchFaceDefault`` for a face complication).
    public var dailyBudget: Int
    /// The budget's rolling window, in seconds (24 h).
    public var budgetWindow: TimeInterval
    /// The debug switch (Xcode disables budgets while debugging): nothing is charged or refused.
    public var noBudget: Bool
    /// How long after a first request the flush comes, so that a burst of requests becomes
    /// one reload (seconds).
    public var debounce: TimeInterval
    /// WidgetKit's minimum time between reloads, applied to policy reloads (`.atEnd`,
    /// `.after`): a policy never fires sooner than this after the last reload. Explicit
    /// requests are not delayed by it; the budget limits them.
    public var minimumReloadInterval: TimeInterval
    /// Entries closer together than this are flagged ("at least about 5 minutes apart").
    public var minimumEntrySpacing: TimeInterval
    /// How long (real time) a provider may take to call its completion handler (or return,
    /// for the async form) before the host reports it and leaves the widget as it was.
    public var providerTimeout: TimeInterval

    /// Rules with WidgetKit's figures.
    public init(
        dailyBudget: Int = ReloadBudget.smartStackDefault, budgetWindow: TimeInterval = 86_400, noBudget: Bool = false,
        debounce: TimeInterval = 0.1, minimumReloadInterval: TimeInterval = 300, minimumEntrySpacing: TimeInterval = 300,
        providerTimeout: TimeInterval = 2
    ) {
        self.dailyBudget = max(0, dailyBudget)
        self.budgetWindow = budgetWindow
        self.noBudget = noBudget
        self.debounce = debounce
        self.minimumReloadInterval = minimumReloadInterval
        self.minimumEntrySpacing = minimumEntrySpacing
        self.providerTimeout = providerTimeout
    }
}
