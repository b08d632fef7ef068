import Primitives

/// Column arithmetic for the watch's small text slots: display width, truncation with `…`,
/// "first candidate that fits" (SwiftUI's `ViewThatFits`), and compact numbers.
///
/// Widths are terminal columns: East Asian wide characters and emoji shown as emoji (Unicode's
/// Emoji_Presentation, or an emoji with the emoji variation selector U+FE0F) count 2,
/// everything else 1. Deterministic and locale-free, so renderings are byte-stable.
public enum TextMetrics {
    /// The ellipsis that marks truncated text.
    public static let ellipsis: Character = "…"

    /// The display width of `character` in columns (1 or 2).
    public static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let emoji = scalar.properties
        if emoji.isEmojiPresentation || (emoji.isEmoji && character.unicodeScalars.contains("\u{FE0F}")) { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// What a terminal shows for `text` (``TerminalText/printable(_:)``). Text from the phone
    /// goes through it before it reaches a frame: a newline in a login would split a frame's
    /// line, and an escape would reach the terminal.
    public static func printable(_ text: String) -> String {
        TerminalText.printable(text)
    }

    /// The display width of `text` in columns.
    public static func width(of text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` cut to at most `columns` columns, ending in `…` when anything was cut.
    public static func truncate(_ text: String, to columns: Int) -> String {
        guard width(of: text) > columns else { return text }
        guard columns > 0 else { return "" }
        var out = ""
        var used = 0
        for c in text {
            let w = width(of: c)
            if used + w > columns - 1 { break }
            out.append(c)
            used += w
        }
        // Never end on a space before the ellipsis.
        while out.last == " " { out.removeLast() }
        out.append(ellipsis)
        return out
    }

    /// The first candidate that fits in `columns`, else the last one truncated.
    public static func fit(_ candidates: [String], in columns: Int) -> String {
        for c in candidates where width(of: c) <= columns { return c }
        return truncate(candidates.last ?? "", to: columns)
    }

    /// `text` padded with spaces on the right to exactly `columns` (truncated first if longer).
    public static func padRight(_ text: String, to columns: Int) -> String {
        let t = truncate(text, to: columns)
        return t + String(repeating: " ", count: max(0, columns - width(of: t)))
    }

    /// `text` centred in `columns` (extra space goes to the right).
    public static func center(_ text: String, in columns: Int) -> String {
        let t = truncate(text, to: columns)
        let free = max(0, columns - width(of: t))
        let left = free / 2
        return String(repeating: " ", count: left) + t + String(repeating: " ", count: free - left)
    }

    /// A count in at most four columns: `999`, `1.2k`, `12k`, `999k`, `1.2M`, `12M`.
    ///
    /// Digits are truncated, never rounded up, so `1999` is `1.9k` and nothing reads `1000k`.
    public static func compact(_ value: Int) -> String {
        if value < 0 { return "-" + compact(-value) }
        func scaled(_ unit: Int, _ suffix: String) -> String {
            let whole = value / unit
            if whole >= 10 { return "\(whole)\(suffix)" }
            let tenth = (value % unit) / (unit / 10)
            return tenth == 0 ? "\(whole)\(suffix)" : "\(whole).\(tenth)\(suffix)"
        }
        switch value {
        case ..<1000: return String(value)
        case ..<1_000_000: return scaled(1000, "k")
        case ..<1_000_000_000: return scaled(1_000_000, "M")
        default: return scaled(1_000_000_000, "B")
        }
    }
}
