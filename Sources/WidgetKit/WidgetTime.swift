import Foundation
import RelayProtocol

/// Whole-millisecond time for the reload rules: budgets, windows and wake-ups compare
/// exactly (a `Date`'s `Double` would make "a slot frees 24 h later" off by an ulp).
enum WidgetTime {
    /// The most milliseconds kept (about 31,700 years, either way): an interval of no finite
    /// length (a rule set to `.infinity`) means "never", and sums of two stay in `Int64`.
    static let maximumMilliseconds: Int64 = 1_000_000_000_000_000

    /// `date` in whole milliseconds since 1970 (rounded, within ``maximumMilliseconds``).
    static func ms(_ date: Date) -> Int64 {
        ms(seconds: date.timeIntervalSince1970)
    }

    /// `interval` in whole milliseconds (rounded, within ``maximumMilliseconds``; NaN is 0).
    static func ms(_ interval: TimeInterval) -> Int64 {
        ms(seconds: interval)
    }

    private static func ms(seconds: Double) -> Int64 {
        let v = (seconds * 1000).rounded()
        if v.isNaN { return 0 }
        let limit = Double(maximumMilliseconds)
        return Int64(min(max(v, -limit), limit))
    }

    /// The date `ms` milliseconds after 1970.
    static func date(_ ms: Int64) -> Date {
        Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    /// `date` moved by `interval`, on the millisecond grid.
    static func add(_ date: Date, _ interval: TimeInterval) -> Date {
        Self.date(ms(date) + ms(interval))
    }

    /// ISO-8601 in UTC (the protocol's ``Timestamp`` format).
    static func iso8601(_ date: Date) -> String {
        Timestamp(millisecondsSinceEpoch: ms(date)).iso8601
    }

    /// `HH:MM` in UTC.
    static func clock(_ date: Date) -> String {
        let iso = Array(iso8601(date))
        return String(iso[11..<16])
    }
}
