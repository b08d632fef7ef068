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
}
