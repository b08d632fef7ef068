import RelayProtocol
import WidgetKit

/// Renders the watch as compact text frames for a terminal: one rounded box per widget
/// (28 columns, 24 inside), the favorites list and the profile screen.
///
/// Deterministic: the output depends only on the state and the injected `now` (relative
/// ages); every line ends in `\n`.
public enum TextRenderer {
    /// The frame's outer width in columns.
    public static let frameWidth = 28
    /// The columns inside a frame.
    public static let innerWidth = frameWidth - 4
    /// The most repo rows the profile frame lists.
    public static let maxRepoRows = 8

    /// The whole watch: a header, every widget, the favorites, and the profile screen if open.
    public static func render(_ state: WatchAppState, now: Timestamp) -> String {
        var out = header(state.widgets, now: now)
        for widget in state.widgets.widgets { out += render(widget, rules: state.widgets.rules, now: now) }
        out += render(state.favorites)
        if let profile = state.profile { out += render(profile, now: now) }
        return out
    }

    /// Every widget of `scheduler`, under a header.
    public static func render(_ scheduler: WidgetScheduler, now: Timestamp) -> String {
        var out = header(scheduler, now: now)
        for widget in scheduler.widgets { out += render(widget, rules: scheduler.rules, now: now) }
        return out
    }

    private static func header(_ scheduler: WidgetScheduler, now: Timestamp) -> String {
        var flags = [scheduler.isAppForeground ? "foreground" : "background"]
        if scheduler.rules.noBudget { flags.append("no-budget") }
        return "watch · \(now.iso8601) · \(flags.joined(separator: " · "))\n"
    }

    /// One widget: its frame, then generation, budget, staleness, entries and policy.
    public static func render(_ widget: WidgetInstance, rules: WidgetRules, now: Timestamp) -> String {
        let d = widget.descriptor
        let title = d.id.contains(d.family.shortName) ? d.id : "\(d.id) · \(d.family.shortName)"
        var out = box(title: title, lines: frameLines(widget.content)).joined()
        let budget = rules.noBudget ? "no budget" : "budget \(widget.budget.remaining(at: now))/\(widget.budget.limit)"
        var status = ["gen \(widget.generation)", budget]
        if widget.isStale {
            let retry = widget.budget.nextAvailable(at: now).map { " · retry \(TimeMath.clock($0, from: now))" } ?? ""
            status.append("STALE\(retry)")
        } else if widget.pending != nil {
            status.append("reload pending")
        } else {
            status.append("fresh")
        }
        out += "  " + status.joined(separator: " · ") + "\n"
        if let timeline = widget.timeline {
            for (i, entry) in timeline.entries.enumerated() {
                let mark = i == widget.displayedIndex ? "▸" : " "
                out += "  \(mark) \(TimeMath.clock(entry.timestamp)) \(TextMetrics.printable(describe(entry)))\n"
            }
            var policy = "  policy \(timeline.policy.name)"
            if let next = widget.policyReloadDate(rules: rules) { policy += " → \(TimeMath.clock(next, from: now))" }
            out += policy + "\n"
        }
        return out
    }

    /// The lines inside a widget's frame for its family.
    static func frameLines(_ c: WidgetContent) -> [String] {
        let w = innerWidth
        let main = c.lines.first ?? ""
        switch c.family {
        case .accessoryCircular:
            return [TextMetrics.center("( \(main) )", in: w), TextMetrics.center(c.label ?? "", in: w)]
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge:
            return c.lines.map { TextMetrics.padRight($0, to: w) }
        case .accessoryInline:
            return [TextMetrics.padRight(main, to: w)]
        case .accessoryCorner:
            var first = TextMetrics.padRight(main, to: 5)
            if let g = c.gauge { first += gaugeBar(g) + " \(g.value)/\(g.total)" }
            return [TextMetrics.padRight(first, to: w), TextMetrics.padRight("╰ " + (c.label ?? ""), to: w)]
        }
    }

    /// Five cells, filled in proportion to the gauge (rounded down, at least one when > 0).
    static func gaugeBar(_ g: WidgetContent.Gauge) -> String {
        let cells = 5
        var filled = g.total > 0 ? g.value * cells / g.total : 0
        if g.value > 0 { filled = max(filled, 1) }
        filled = min(filled, cells)
        return String(repeating: "▰", count: filled) + String(repeating: "▱", count: cells - filled)
    }

    private static func describe(_ entry: FavoritesEntry) -> String {
        switch entry.content {
        case .placeholder: return "placeholder"
        case .empty: return "empty"
        case .count: return "count \(entry.favoritesCount)"
        case .user(let u):
            var s = u.login
            if let p = entry.position { s += " (\(p)/\(entry.favoritesCount))" }
            if entry.selectionFellBack { s += " fallback" }
            return s
        }
    }

    /// The favorites list, with pending deletes marked, and a last line when the list goes on
    /// on the phone (`+9 more on iPhone`: the snapshot's `omitted`).
    public static func render(_ favorites: FavoritesViewModel) -> String {
        let title = favorites.snapshot.map { "favorites · rev \($0.revision)" } ?? "favorites"
        var lines: [String] = []
        for row in favorites.rows {
            let mark = "deleting…"
            if row.isPendingDelete {
                let room = innerWidth - TextMetrics.width(of: mark) - 1
                lines.append(TextMetrics.padRight(row.user.login, to: room) + " " + mark)
            } else {
                lines.append(TextMetrics.padRight(row.user.login, to: innerWidth))
            }
        }
        if let note = favorites.omittedNote {
            lines.append(TextMetrics.padRight(note, to: innerWidth))
        } else if lines.isEmpty {
            lines.append(TextMetrics.padRight("No favorites", to: innerWidth))
        }
        return box(title: title, lines: lines).joined()
    }

    /// The profile screen: status, then the repo rows (name and stars, then language and age).
    public static func render(_ profile: ProfileDetail, now: Timestamp) -> String {
        let w = innerWidth
        var lines: [String] = []
        if let status = profile.statusMessage { lines.append(TextMetrics.padRight(status, to: w)) }
        if let (list, stale) = profile.visibleList {
            if stale {
                lines.append(
                    TextMetrics.padRight("⚠ stale · fetched \(TimeMath.clock(list.fetchedAt, from: now))", to: w))
            }
            let rows = list.rows(now: now)
            if rows.isEmpty { lines.append(TextMetrics.padRight("No repositories", to: w)) }
            for row in rows.prefix(maxRepoRows) {
                let stars = "★" + row.stars
                let name = TextMetrics.padRight(row.name, to: w - TextMetrics.width(of: stars) - 1)
                lines.append(name + " " + stars)
                let detail = "  \(row.language) · \(row.updated)" + (row.isFork ? " · fork" : "")
                lines.append(TextMetrics.padRight(detail, to: w))
            }
            if rows.count > maxRepoRows {
                lines.append(TextMetrics.padRight("+\(rows.count - maxRepoRows) more", to: w))
            }
        }
        if lines.isEmpty { lines.append(TextMetrics.padRight("", to: w)) }
        return box(title: "\(profile.login) · \(profile.phase.name)", lines: lines).joined()
    }

    /// A rounded frame: `╭─ title ─╮`, `│ line │` for each (already `innerWidth` wide), `╰─╯`.
    /// Controls in the text (the phone's) show as `�` (``TextMetrics/printable(_:)``).
    static func box(title: String, lines: [String]) -> [String] {
        let t = TextMetrics.printable(TextMetrics.truncate(title, to: frameWidth - 6))
        let top = "╭─ \(t) " + String(repeating: "─", count: frameWidth - 5 - TextMetrics.width(of: t)) + "╮\n"
        let bottom = "╰" + String(repeating: "─", count: frameWidth - 2) + "╯\n"
        return [top] + lines.map { "│ \(TextMetrics.printable($0)) │\n" } + [bottom]
    }
}
