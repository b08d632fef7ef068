import Foundation

/// A widget instance's reload budget: at most ``limit`` charged reloads in any rolling
/// ``window`` (24 h by default).
///
/// A reload spent at `t` counts until `t + window` (exclusive), then frees its slot. Each
/// instance has its own budget (WidgetKit: "two instances of the same widget = two
/// budgets"). Exemptions (the app in the foreground, the no-budget debug switch, a widget's
/// first timeline) are the scheduler's business: an exempt reload is simply not spent here.
/// Times are kept in whole milliseconds, so a slot frees exactly `window` later.
public struct ReloadBudget: Sendable, Hashable {
    /// WidgetKit's upper figure for a frequently viewed widget ("typically 40 to 70").
    public static let smartStackDefault = 70
    /// watchOS: "up to 75 updates per day" for a complication on the face.
    public static let watchFaceDefault = 75

    /// The most charged reloads in one window.
    public var limit: Int
    /// The rolling window, in seconds.
    public var window: TimeInterval
    /// The charged reloads still in (or recently in) the window, oldest first (ms since 1970).
    private var spentMilliseconds: [Int64] = []

    /// A fresh budget of `limit` reloads per `window` seconds.
    public init(limit: Int, window: TimeInterval = 86_400) {
        self.limit = max(0, limit)
        self.window = window
    }

    /// The charged reloads kept, oldest first.
    public var spent: [Date] { spentMilliseconds.map(WidgetTime.date) }

    private func windowStart(_ now: Date) -> Int64 { WidgetTime.ms(now) - WidgetTime.ms(window) }

    /// The charged reloads that count at `now`.
    public func used(at now: Date) -> Int {
        let start = windowStart(now)
        return spentMilliseconds.count { $0 > start }
    }

    /// How many reloads can still be charged at `now`.
    public func remaining(at now: Date) -> Int {
        max(0, limit - used(at: now))
    }

    /// The first instant at or after `now` when a reload can be charged; `nil` if never
    /// (a limit of 0).
    public func nextAvailable(at now: Date) -> Date? {
        guard limit > 0 else { return nil }
        let start = windowStart(now)
        let live = spentMilliseconds.filter { $0 > start }.sorted()
        guard live.count >= limit else { return now }
        // The slot frees when the (count - limit)-th live spend leaves the window.
        return WidgetTime.date(live[live.count - limit] + WidgetTime.ms(window))
    }

    /// Charges one reload at `now` if the budget allows; returns whether it did.
    public mutating func spend(at now: Date) -> Bool {
        let start = windowStart(now)
        spentMilliseconds.removeAll { $0 <= start }
        guard spentMilliseconds.count < limit else { return false }
        spentMilliseconds.append(WidgetTime.ms(now))
        return true
    }
}
