import WidgetKit

/// The widget system's knobs: budgets, the no-budget debug switch, coalescing and the
/// minimum time between policy reloads.
public struct WidgetRules: Sendable, Hashable {
    /// Daily budget of a Smart Stack widget (WidgetKit: "typically 40 to 70").
    public var smartStackBudget: Int
    /// Daily budget of a face complication (watchOS: "up to 75").
    public var watchFaceBudget: Int
    /// The budget's rolling window.
    public var budgetWindow: Duration
    /// The `--no-budget` debug switch (like running under Xcode): nothing is charged or refused.
    public var noBudget: Bool
    /// How long the live loop waits after a first request before it flushes, so that a burst
    /// of requests becomes one reload. Only ``WidgetScheduler/nextWakeUp(now:)`` uses it: a
    /// `flush` always reloads what is pending.
    public var debounce: Duration
    /// WidgetKit's minimum time between reloads, applied to policy reloads (`.atEnd`,
    /// `.after`): a policy never fires sooner than this after the last reload. Explicit
    /// requests are not delayed by it; the budget limits them.
    public var minimumReloadInterval: Duration

    /// Rules with WidgetKit-like defaults.
    public init(
        smartStackBudget: Int = ReloadBudget.smartStackDefault, watchFaceBudget: Int = ReloadBudget.watchFaceDefault,
        budgetWindow: Duration = .seconds(86_400), noBudget: Bool = false, debounce: Duration = .milliseconds(100),
        minimumReloadInterval: Duration = .seconds(300)
    ) {
        self.smartStackBudget = smartStackBudget
        self.watchFaceBudget = watchFaceBudget
        self.budgetWindow = budgetWindow
        self.noBudget = noBudget
        self.debounce = debounce
        self.minimumReloadInterval = minimumReloadInterval
    }

    /// The daily budget of `descriptor`: its own override, else its placement's.
    public func budgetLimit(for descriptor: WidgetDescriptor) -> Int {
        if let limit = descriptor.budgetLimit { return limit }
        switch descriptor.placement {
        case .smartStack: return smartStackBudget
        case .watchFace: return watchFaceBudget
        }
    }
}
