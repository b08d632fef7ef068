import WidgetKit

/// What one family shows for one entry, after the family's text-fit rules (see ``WidgetFamily``).
///
/// Every string already fits its slot: renderers draw it as is.
public struct WidgetContent: Sendable, Hashable {
    /// A gauge's reading: ``value`` of ``total``.
    public struct Gauge: Sendable, Hashable {
        /// The reading.
        public var value: Int
        /// The full scale.
        public var total: Int

        /// A gauge reading `value` of `total`.
        public init(value: Int, total: Int) {
            self.value = value
            self.total = total
        }

        /// `value / total`, clamped to 0…1 (0 when `total` is 0).
        public var fraction: Double {
            guard total > 0 else { return 0 }
            return min(1, max(0, Double(value) / Double(total)))
        }
    }

    /// The family it is laid out for.
    public var family: WidgetFamily
    /// The main text: one line, except up to three for rectangular.
    public var lines: [String]
    /// The circular caption or the corner's curved label.
    public var label: String?
    /// The corner's gauge.
    public var gauge: Gauge?
    /// Drawn redacted (the placeholder).
    public var isRedacted: Bool
    /// The empty state (no favorites).
    public var isEmpty: Bool

    /// Content as given (no rules applied).
    public init(
        family: WidgetFamily, lines: [String], label: String? = nil, gauge: Gauge? = nil, isRedacted: Bool = false,
        isEmpty: Bool = false
    ) {
        self.family = family
        self.lines = lines
        self.label = label
        self.gauge = gauge
        self.isRedacted = isRedacted
        self.isEmpty = isEmpty
    }

    /// The caption under the circular number.
    public static let circularCaption = "FAV"

    /// Applies `family`'s rules to `entry`.
    public init(family: WidgetFamily, entry: FavoritesEntry) {
        let f = family.favoritesLayout
        switch entry.content {
        case .placeholder:
            self = Self.placeholder(f)
        case .empty:
            switch f {
            case .accessoryCircular: self.init(family: f, lines: ["0"], label: Self.circularCaption, isEmpty: true)
            case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge:
                self.init(family: f, lines: ["No favorites", "Add users on iPhone"], isEmpty: true)
            case .accessoryInline: self.init(family: f, lines: ["★ No favorites"], isEmpty: true)
            case .accessoryCorner: self.init(family: f, lines: ["0"], label: "No favs", isEmpty: true)
            }
        case .count:
            self = Self.count(f, entry)
        case .user(let user):
            let repos = TextMetrics.compact(user.publicRepos)
            let followers = TextMetrics.compact(user.followers)
            switch f {
            case .accessoryCircular:
                self = Self.count(f, entry)
            case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge:
                let cols = f.lineColumns
                var lines = [TextMetrics.truncate(user.login, to: cols)]
                if let name = user.name, !name.isEmpty { lines.append(TextMetrics.truncate(name, to: cols)) }
                lines.append(
                    TextMetrics.fit(
                        [
                            "\(repos) repos · \(followers) followers", "\(repos) repos · \(followers) flw",
                            "\(repos)r · \(followers)f",
                        ],
                        in: cols))
                self.init(family: f, lines: lines)
            case .accessoryInline:
                let line = TextMetrics.fit(
                    ["★ \(user.login) · \(repos) repos", "★ \(user.login) · \(repos)", "★ \(user.login)"],
                    in: f.lineColumns)
                self.init(family: f, lines: [line])
            case .accessoryCorner:
                let gauge = entry.position.map { Gauge(value: $0, total: entry.favoritesCount) }
                self.init(
                    family: f, lines: [repos], label: TextMetrics.truncate(user.login, to: f.labelColumns),
                    gauge: gauge)
            }
        }
    }

    /// The entry's count of favorites: the phone's, the omitted ones included; the
    /// rectangular family says under it how many are on the phone only.
    private static func count(_ f: WidgetFamily, _ entry: FavoritesEntry) -> WidgetContent {
        let n = entry.favoritesCount
        switch f {
        case .accessoryCircular:
            return WidgetContent(family: f, lines: [n <= 99 ? String(n) : "99+"], label: circularCaption)
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge:
            var lines = ["Favorites", n == 1 ? "1 user" : "\(TextMetrics.compact(n)) users"]
            if let note = FavoritesViewModel.omittedNote(omitted: entry.omitted, shown: n - entry.omitted) {
                lines.append(TextMetrics.truncate(note, to: f.lineColumns))
            }
            return WidgetContent(family: f, lines: lines)
        case .accessoryInline:
            return WidgetContent(family: f, lines: [TextMetrics.truncate("★ \(n) favorites", to: f.lineColumns)])
        case .accessoryCorner:
            return WidgetContent(family: f, lines: [TextMetrics.compact(n)], label: "favorites")
        }
    }

    private static func placeholder(_ f: WidgetFamily) -> WidgetContent {
        switch f {
        case .accessoryCircular: WidgetContent(family: f, lines: ["••"], label: "•••", isRedacted: true)
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge:
            WidgetContent(family: f, lines: ["••••••••", "••••••••••••", "•• ••••• · •• •••••"], isRedacted: true)
        case .accessoryInline: WidgetContent(family: f, lines: ["★ ••••••••••"], isRedacted: true)
        case .accessoryCorner: WidgetContent(family: f, lines: ["••"], label: "••••••", isRedacted: true)
        }
    }
}
