import RelayProtocol

/// Time arithmetic on the protocol's ``Timestamp`` and Swift's `Duration`, in whole milliseconds.
///
/// The watch core never reads a clock: every `now` is injected, so these helpers are pure.
enum TimeMath {
    /// One rolling day, the reload budget's default window.
    static let day: Duration = .seconds(86_400)

    /// `duration` in whole milliseconds (sub-millisecond parts are dropped).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let c = duration.components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }

    /// `t` moved forward by `duration`.
    static func add(_ t: Timestamp, _ duration: Duration) -> Timestamp {
        t.adding(milliseconds: milliseconds(duration))
    }

    /// Milliseconds from `start` to `end` (negative if `end` is earlier).
    static func between(_ start: Timestamp, _ end: Timestamp) -> Int64 {
        end.millisecondsSinceEpoch - start.millisecondsSinceEpoch
    }

    /// `HH:MM` in UTC, the watch's clock face for entry dates.
    static func clock(_ t: Timestamp) -> String {
        let iso = Array(t.iso8601)
        return String(iso[11..<16])
    }

    /// `HH:MM` if `t` is on the same UTC day as `now`, else `MM-DD HH:MM`.
    static func clock(_ t: Timestamp, from now: Timestamp) -> String {
        let a = Array(t.iso8601)
        let b = Array(now.iso8601)
        return a[0..<10] == b[0..<10] ? String(a[11..<16]) : String(a[5..<10]) + " " + String(a[11..<16])
    }

    /// `HH:MM:SS` in UTC.
    static func clockSeconds(_ t: Timestamp) -> String {
        let iso = Array(t.iso8601)
        return String(iso[11..<19])
    }

    /// A compact age such as `now`, `5m`, `3h`, `2d`, `4mo`, `1y`: how long before `now` `iso` was.
    ///
    /// Falls back to the date part of `iso` when it does not parse; a date in the future
    /// reads `now`.
    static func age(ofISO iso: String, now: Timestamp) -> String {
        guard let t = Timestamp(iso8601: iso) else { return String(iso.prefix(10)) }
        let seconds = between(t, now) / 1000
        switch seconds {
        case ..<60: return "now"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86_400: return "\(seconds / 3600)h"
        case ..<(30 * 86_400): return "\(seconds / 86_400)d"
        case ..<(365 * 86_400): return "\(seconds / (30 * 86_400))mo"
        default: return "\(seconds / (365 * 86_400))y"
        }
    }
}
