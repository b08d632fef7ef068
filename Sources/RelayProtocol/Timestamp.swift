/// An instant on the wire: milliseconds since the Unix epoch, written as ISO-8601 UTC
/// (`2026-11-30T04:14:17.123Z`).
///
/// Implemented without Foundation so the protocol module stays portable and fast.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.millisecondsSinceEpoch < b.millisecondsSinceEpoch }

    /// This instant moved by `milliseconds`.
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch + milliseconds)
    }

    /// The ISO-8601 UTC form with milliseconds.
    public var description: String { iso8601 }

    /// The ISO-8601 UTC form with milliseconds, e.g. `2026-11-30T04:14:17.123Z`.
    public var iso8601: String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        writeISO8601(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends ``iso8601``'s UTF-8 bytes to `out` (no intermediate strings: `deliver` frames
    /// carry one per item).
    public func writeISO8601(into out: inout [UInt8]) {
        let ms = millisecondsSinceEpoch
        var days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let msOfDay = ms - days * 86_400_000
        // Civil-from-days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        if m <= 2 { y += 1 }
        // Every field but a year outside 0...9999 (written as wide as it is, or negative) has
        // its width: constant divisors, which the compiler turns into multiplies (a padding
        // loop dividing by a variable was 2.4 % of a 64 B message, perf 2026-12-03).
        if (0...9999).contains(y) { Self.digits(y, 4, &out) } else { JSONWriter.writeDecimal(y, into: &out) }
        out.append(UInt8(ascii: "-"))
        Self.digits(m, 2, &out)
        out.append(UInt8(ascii: "-"))
        Self.digits(d, 2, &out)
        out.append(UInt8(ascii: "T"))
        Self.digits(msOfDay / 3_600_000, 2, &out)
        out.append(UInt8(ascii: ":"))
        Self.digits(msOfDay / 60_000 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        Self.digits(msOfDay / 1000 % 60, 2, &out)
        out.append(UInt8(ascii: "."))
        Self.digits(msOfDay % 1000, 3, &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// `v` (0 ≤ v < 10^width) in exactly `width` digits, width 2, 3 or 4.
    @inline(__always)
    private static func digits(_ v: Int64, _ width: Int, _ out: inout [UInt8]) {
        let zero = UInt8(ascii: "0")
        if width == 4 { out.append(zero + UInt8(truncatingIfNeeded: v / 1000)) }
        if width >= 3 { out.append(zero + UInt8(truncatingIfNeeded: v / 100 % 10)) }
        out.append(zero + UInt8(truncatingIfNeeded: v / 10 % 10))
        out.append(zero + UInt8(truncatingIfNeeded: v % 10))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`; `nil` if malformed.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        func num(_ at: Int, _ n: Int) -> Int64? {
            guard at + n <= b.count else { return nil }
            var v: Int64 = 0
            for i in at..<(at + n) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2),
            b[10] == 84 || b[10] == 116, let h = num(11, 2), b[13] == 58, let mi = num(14, 2), b[16] == 58,
            let s = num(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var milli: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { milli = milli * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            // More than three fraction digits: the rest is below a millisecond (found by the fuzzer).
            if digits < 3 {
                for _ in digits..<3 { milli *= 10 }
            }
        }
        var offsetMinutes: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), b.count > i + 3, b[i + 3] == 58,
            let om = num(i + 4, 2)
        {
            offsetMinutes = (oh * 60 + om) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days-from-civil (Howard Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let mp = mo > 2 ? mo - 3 : mo + 9
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offsetMinutes * 60
        self.init(millisecondsSinceEpoch: seconds * 1000 + milli)
    }
}
