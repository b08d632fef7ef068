/// The `Link` header GitHub paginates with (RFC 8288), e.g.
/// `<https://api.github.com/user/1/repos?page=2>; rel="next", <…?page=5>; rel="last"`.
///
/// Parsing is lenient like browsers: parameters may be in any order, `rel` may be quoted or
/// not and may hold several space-separated relations; entries that are not `<uri>; …` are
/// skipped. Formatting writes GitHub's exact spelling.
public struct LinkHeader: Sendable, Hashable {
    /// The target URI of each relation, as written between `<` and `>`, keyed by lowercased `rel`.
    public var links: [String: String]

    /// Creates a header from its relations.
    public init(links: [String: String] = [:]) {
        self.links = links
    }

    /// Parses a `Link` header value; a value with no well-formed entry gives no links.
    public init(parsing value: String) {
        var links: [String: String] = [:]
        for entry in Self.splitEntries(value) {
            let trimmed = entry.trimmingSpaces
            guard trimmed.hasPrefix("<"), let close = trimmed.firstIndex(of: ">") else { continue }
            let target = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            for parameter in trimmed[trimmed.index(after: close)...].split(separator: ";") {
                let parts = parameter.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingSpaces.lowercased() == "rel" else { continue }
                let rel = parts[1].trimmingSpaces.trimming("\"")
                for name in rel.split(separator: " ") where links[name.lowercased()] == nil {
                    links[name.lowercased()] = target
                }
            }
        }
        self.links = links
    }

    /// The next page, if there is one.
    public var next: String? { links["next"] }
    /// The previous page, if there is one.
    public var prev: String? { links["prev"] }
    /// The first page.
    public var first: String? { links["first"] }
    /// The last page.
    public var last: String? { links["last"] }

    /// The header value in GitHub's order (`prev`, `next`, `last`, `first`, then any other
    /// relation by name), or `nil` if there is no link.
    public var value: String? {
        let known = ["prev", "next", "last", "first"]
        let order = known.filter { links[$0] != nil } + links.keys.filter { !known.contains($0) }.sorted()
        guard !order.isEmpty else { return nil }
        return order.map { "<\(links[$0]!)>; rel=\"\($0)\"" }.joined(separator: ", ")
    }

    /// Splits at the commas between entries, not at commas inside `<…>` or quotes.
    private static func splitEntries(_ value: String) -> [Substring] {
        var entries: [Substring] = []
        var start = value.startIndex
        var inAngle = false
        var inQuote = false
        var index = value.startIndex
        while index < value.endIndex {
            switch value[index] {
            case "<" where !inQuote: inAngle = true
            case ">" where !inQuote: inAngle = false
            case "\"" where !inAngle: inQuote.toggle()
            case "," where !inAngle && !inQuote:
                entries.append(value[start..<index])
                start = value.index(after: index)
            default: break
            }
            index = value.index(after: index)
        }
        entries.append(value[start...])
        return entries
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let characters = self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }
        return String(characters.reversed())
    }

    /// The text without leading and trailing occurrences of `character`.
    func trimming(_ character: Character) -> String {
        let characters = self.drop { $0 == character }.reversed().drop { $0 == character }
        return String(characters.reversed())
    }
}
