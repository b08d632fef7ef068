import Foundation
import RelayProtocol
import WidgetKit

// The watch keeps time in the protocol's millisecond `Timestamp`s; WidgetKit's API and rules
// take `Date`s. These conversions are exact: the rules keep time on the same millisecond grid.

extension Timestamp {
    /// The same instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSinceEpoch) / 1000) }

    /// The instant of `date`, rounded to the millisecond.
    public init(_ date: Date) {
        self.init(millisecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}

extension Duration {
    /// The duration in seconds, on the millisecond grid.
    var seconds: TimeInterval { Double(TimeMath.milliseconds(self)) / 1000 }
}

extension ReloadReason {
    /// A favorites snapshot arrived and was stored (the fix for the seed app's bug).
    public static let snapshotReceived = ReloadReason(rawValue: "snapshotReceived")
}

extension ReloadBudget {
    /// A fresh budget of `limit` reloads per `window`.
    public init(limit: Int, window: Duration) {
        self.init(limit: limit, window: window.seconds)
    }

    /// The charged reloads that count at `now`.
    public func used(at now: Timestamp) -> Int { used(at: now.date) }

    /// How many reloads can still be charged at `now`.
    public func remaining(at now: Timestamp) -> Int { remaining(at: now.date) }

    /// The first instant at or after `now` when a reload can be charged; `nil` if never.
    public func nextAvailable(at now: Timestamp) -> Timestamp? { nextAvailable(at: now.date).map(Timestamp.init) }

    /// Charges one reload at `now` if the budget allows; returns whether it did.
    public mutating func spend(at now: Timestamp) -> Bool { spend(at: now.date) }
}

extension ReloadPolicy {
    /// The policy as WidgetKit's `TimelineReloadPolicy`.
    public var timelinePolicy: TimelineReloadPolicy {
        switch self {
        case .atEnd: .atEnd
        case .after(let d): .after(d.date)
        case .never: .never
        }
    }

    /// WidgetKit's policy in the watch's timestamps.
    public init(_ policy: TimelineReloadPolicy) {
        switch policy.kind {
        case .atEnd: self = .atEnd
        case .after(let d): self = .after(Timestamp(d))
        case .never: self = .never
        }
    }
}

extension WidgetRules {
    /// The rules in WidgetKit's terms (the budget itself is set per instance).
    public var reloadRules: WidgetReloadRules {
        WidgetReloadRules(
            dailyBudget: smartStackBudget, budgetWindow: budgetWindow.seconds, noBudget: noBudget,
            debounce: debounce.seconds, minimumReloadInterval: minimumReloadInterval.seconds,
            minimumEntrySpacing: FavoritesTimelineProvider.minimumEntrySpacing.seconds)
    }
}
