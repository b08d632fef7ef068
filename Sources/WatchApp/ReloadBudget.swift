import RelayProtocol

/// A widget instance's reload budget: at most ``limit`` charged reloads in any rolling
/// ``window`` (24 h by default).
///
/// A reload spent at `t` counts until `t + window` (exclusive), then frees its slot. Each
/// instance has its own budget (WidgetKit: "two instances of the same widget = two
/// budgets"). Exemptions (the app in the foreground, the no-budget debug switch) are the
/// scheduler's business: an exempt reload is simply not spent here.
public struct ReloadBudget: Sendable, Hashable {
    /// WidgetKit's upper figure for a frequently viewed widget.
    public static let smartStackDefault = 70
    /// watchOS: "up to 75 updates per day" for a complication on the face.
    public static let watchFaceDefault = 75

    /// The most charged reloads in one window.
    public var limit: Int
    /// The rolling window.
    public var window: Duration
    /// The charged reloads still in (or recently in) the window, oldest first.
    public private(set) var spent: [Timestamp] = []

    /// A fresh budget of `limit` reloads per `window`.
    public init(limit: Int, window: Duration = .seconds(86_400)) {
        self.limit = max(0, limit)
        self.window = window
    }

    /// The charged reloads that count at `now`.
    public func used(at now: Timestamp) -> Int {
        let start = now.adding(milliseconds: -TimeMath.milliseconds(window))
        return spent.count { $0 > start }
    }

    /// How many reloads can still be charged at `now`.
    public func remaining(at now: Timestamp) -> Int {
        max(0, limit - used(at: now))
    }

    /// The first instant at or after `now` when a reload can be charged; `nil` if never
    /// (a limit of 0).
    public func nextAvailable(at now: Timestamp) -> Timestamp? {
        guard limit > 0 else { return nil }
        let start = now.adding(milliseconds: -TimeMath.milliseconds(window))
        let live = spent.filter { $0 > start }.sorted()
        guard live.count >= limit else { return now }
        // The slot frees when the (count - limit)-th live spend leaves the window.
        return TimeMath.add(live[live.count - limit], window)
    }

    /// Charges one reload at `now` if the budget allows; returns whether it did.
    public mutating func spend(at now: Timestamp) -> Bool {
        let start = now.adding(milliseconds: -TimeMath.milliseconds(window))
        spent.removeAll { $0 <= start }
        guard spent.count < limit else { return false }
        spent.append(now)
        return true
    }
}
