/// Text from a peer (a login, a device name, a GitHub user's name) made safe to print on a
/// terminal.
public enum TerminalText {
    /// `text` with every character that holds a control (C0, DEL, C1: a newline, a carriage
    /// return, an escape sequence's start), a line or paragraph separator or a bidirectional
    /// override replaced by `�`, one column like the character it replaces. A newline would
    /// split the line it is printed in, an escape would reach the terminal, an override would
    /// turn the rest of the line around.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        return String(text.map { c in c.unicodeScalars.contains(where: isUnprintable) ? "\u{FFFD}" : c })
    }

    /// Whether `scalar` is one ``printable(_:)`` replaces.
    public static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `value` as a logfmt value: quoted when it needs it (empty, or with a space, `=`, `"` or
    /// what ``isUnprintable(_:)`` says). Values come from peers (a watch's name, a login,
    /// GitHub's text): a control character or a bidirectional override is written as an escape
    /// (`\n`, `\r`, `\t`, `\u001b`), never raw, so a value stays on its line and nothing reaches
    /// the terminal. The phone's answers and every process's log write values so.
    public static func logfmtValue(_ value: String) -> String {
        let needs = value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || isUnprintable($0) }
        guard needs else { return value }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isUnprintable(scalar):
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }
}
