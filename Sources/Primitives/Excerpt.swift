/// Text a program echoes back (a command, a login) cut to what one answer line should carry:
/// what a script sent by mistake may be megabytes, and an answer that repeats it, twice, is
/// megabytes more.
public enum Excerpt {
    /// `text` when it is at most `limit` UTF-8 bytes; else its first `keep` bytes (whole
    /// characters), `…` and its size: `aaaa… (3000000 bytes)`.
    public static func of(_ text: String, limit: Int = 200, keep: Int? = nil) -> String {
        guard text.utf8.count > limit else { return text }
        return "\(head(text, bytes: keep ?? limit))… (\(text.utf8.count) bytes)"
    }

    /// `text` in single quotes, or when longer than `limit` bytes its first `keep` bytes so
    /// quoted and its size: `'aaaa…' (3000000 bytes)`.
    public static func quoted(_ text: String, limit: Int = 200, keep: Int? = nil) -> String {
        guard text.utf8.count > limit else { return "'\(text)'" }
        return "'\(head(text, bytes: keep ?? limit))…' (\(text.utf8.count) bytes)"
    }

    /// The longest run of whole characters from the start of `text` within `bytes` UTF-8 bytes.
    private static func head(_ text: String, bytes: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        for character in text {
            used += character.utf8.count
            guard used <= bytes else { break }
            end = text.index(after: end)
        }
        return text[..<end]
    }
}
