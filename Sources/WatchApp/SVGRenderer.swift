import Foundation
import RelayProtocol
import WidgetKit

/// Draws the watch as SVG: a sheet of widgets (a round complication for circular, a rounded
/// rectangle for rectangular, a line of text for inline, a face corner with a gauge arc and a
/// curved label for corner), the favorites screen and the profile screen's repo list.
///
/// Simple shapes and `<text>` only; deterministic (same state and `now`, same bytes): fixed
/// layout, numbers with at most one decimal, ids derived from widget ids, text escaped.
/// Text uses the system sans-serif fonts (CJK fallbacks listed), so glyphs depend on the
/// viewer's fonts, never the bytes.
public enum SVGRenderer {
    /// Colours of a dark watch face.
    enum Palette {
        static let sheet = "#2c2c2e"
        static let face = "#000000"
        static let well = "#1c1c1e"
        static let primary = "#ffffff"
        static let secondary = "#aeaeb2"
        static let accent = "#ff9f0a"
        static let track = "#3a3a3c"
        static let redacted = "#48484a"
        static let stale = "#ff453a"
        static let star = "#ffd60a"
    }

    static let cellWidth = 220.0
    static let cellHeight = 180.0
    static let gap = 10.0
    static let headerHeight = 34.0
    static let columns = 2

    /// Every widget of `scheduler` on one sheet, two per row, each with its caption.
    public static func render(_ scheduler: WidgetScheduler, now: Timestamp) -> String {
        let count = max(scheduler.widgets.count, 1)
        let rows = (count + columns - 1) / columns
        let width = gap + Double(columns) * (cellWidth + gap)
        let height = headerHeight + Double(rows) * (cellHeight + gap) + gap
        var svg = SVGWriter(width: width, height: height, title: "favorites widgets", background: Palette.sheet)
        var mode = scheduler.isAppForeground ? "foreground" : "background"
        if scheduler.rules.noBudget { mode += " · no budget" }
        svg.text(
            "watch · \(now.iso8601) · \(mode)", x: gap, y: 22, size: 13, fill: Palette.secondary)
        for (i, widget) in scheduler.widgets.enumerated() {
            let x = gap + Double(i % columns) * (cellWidth + gap)
            let y = headerHeight + Double(i / columns) * (cellHeight + gap)
            svg.open("g", [("id", "widget-\(slug(widget.id))"), ("transform", "translate(\(n(x)) \(n(y)))")])
            cell(&svg, widget, rules: scheduler.rules, now: now)
            svg.close("g")
        }
        return svg.finish()
    }

    /// The profile screen: title, status, and the repo rows (name, stars, language, age).
    public static func render(_ profile: ProfileDetail, now: Timestamp) -> String {
        let rows = profile.visibleList?.list.rows(now: now) ?? []
        let shown = min(rows.count, TextRenderer.maxRepoRows)
        let more = rows.count > shown
        // Status lines under the title: the phase's message, then the stale note.
        var notes: [(text: String, color: String)] = []
        if let status = profile.statusMessage {
            let failed = if case .failed = profile.phase { true } else { false }
            notes.append((status, failed ? Palette.stale : Palette.accent))
        }
        if let (list, stale) = profile.visibleList {
            if stale { notes.append(("stale · fetched \(TimeMath.clock(list.fetchedAt, from: now))", Palette.accent)) }
            if rows.isEmpty { notes.append(("No repositories", Palette.secondary)) }
        }
        let top = 60 + Double(notes.count) * 18
        let width = screenWidth
        let height = top + Double(shown) * 40 + (more ? 22 : 0) + 8
        var svg = screen(
            title: profile.login, description: "\(profile.login) repositories", notes: notes, height: height)
        for (i, row) in rows.prefix(shown).enumerated() {
            let y = top + 8 + Double(i) * 40
            let stars = "★ " + row.stars
            svg.text(
                TextMetrics.truncate(row.name, to: 20 - TextMetrics.width(of: stars)), x: 22, y: y, size: 14,
                fill: Palette.primary)
            svg.text(stars, x: width - 22, y: y, size: 13, fill: Palette.star, anchor: "end")
            let detail = "\(row.language) · \(row.updated)" + (row.isFork ? " · fork" : "")
            svg.text(TextMetrics.truncate(detail, to: 28), x: 22, y: y + 17, size: 12, fill: Palette.secondary)
        }
        if more {
            svg.text(
                "+\(rows.count - shown) more", x: 22, y: top + 8 + Double(shown) * 40, size: 12, fill: Palette.secondary
            )
        }
        return svg.finish()
    }

    /// The most rows the favorites screen draws.
    static let maxFavoriteRows = 8

    /// The favorites screen: the users the watch got, pending deletes marked, and when the
    /// list goes on on the phone (the snapshot's `omitted`), `+9 more on iPhone` under them.
    public static func render(_ favorites: FavoritesViewModel) -> String {
        let rows = favorites.rows
        let shown = min(rows.count, maxFavoriteRows)
        // Under the rows: the ones this picture leaves out, then the ones the watch never got.
        var footer: [(text: String, color: String)] = []
        if rows.count > shown { footer.append(("+\(rows.count - shown) more", Palette.secondary)) }
        if let note = favorites.omittedNote { footer.append((note, Palette.accent)) }
        var notes: [(text: String, color: String)] = []
        if let revision = favorites.snapshot?.revision { notes.append(("rev \(revision)", Palette.secondary)) }
        if rows.isEmpty && footer.isEmpty { notes.append(("No favorites", Palette.secondary)) }
        let top = 60 + Double(notes.count) * 18
        let height = top + Double(shown) * 26 + Double(footer.count) * 20 + 8
        var svg = screen(title: "Favorites", description: "favorites", notes: notes, height: height)
        for (i, row) in rows.prefix(shown).enumerated() {
            let y = top + 8 + Double(i) * 26
            let mark = "deleting…"
            let room = 28 - (row.isPendingDelete ? TextMetrics.width(of: mark) + 1 : 0)
            svg.text(
                TextMetrics.truncate(row.user.login, to: room), x: 22, y: y, size: 14,
                fill: row.isPendingDelete ? Palette.secondary : Palette.primary)
            if row.isPendingDelete {
                svg.text(mark, x: screenWidth - 22, y: y, size: 12, fill: Palette.accent, anchor: "end")
            }
        }
        for (i, line) in footer.enumerated() {
            svg.text(
                TextMetrics.truncate(line.text, to: 28), x: 22, y: top + 8 + Double(shown) * 26 + Double(i) * 20, size: 12,
                fill: line.color)
        }
        return svg.finish()
    }

    static let screenWidth = 220.0

    /// An app screen's picture (profile, favorites), `height` tall: the sheet, the rounded
    /// screen, the title, and the status `notes` under it; the caller draws from
    /// 60 + 18 per note down.
    private static func screen(
        title: String, description: String, notes: [(text: String, color: String)], height: Double
    ) -> SVGWriter {
        let width = screenWidth
        var svg = SVGWriter(width: width, height: height, title: description, background: Palette.sheet)
        svg.element(
            "rect",
            [
                ("x", "4"), ("y", "4"), ("width", n(width - 8)), ("height", n(height - 8)), ("rx", "30"),
                ("fill", Palette.face),
            ])
        svg.text(TextMetrics.truncate(title, to: 18), x: 22, y: 34, size: 17, fill: Palette.primary, weight: "bold")
        for (i, note) in notes.enumerated() {
            svg.text(TextMetrics.truncate(note.text, to: 28), x: 22, y: 56 + Double(i) * 18, size: 12, fill: note.color)
        }
        return svg
    }

    /// One widget cell: the face, the family's drawing, then two caption lines.
    private static func cell(_ svg: inout SVGWriter, _ widget: WidgetInstance, rules: WidgetRules, now: Timestamp) {
        var frame: [(String, String)] = [
            ("width", n(cellWidth)), ("height", n(150)), ("rx", "38"), ("fill", Palette.face),
        ]
        if widget.isStale {
            frame += [("stroke", Palette.stale), ("stroke-width", "2"), ("stroke-dasharray", "6 4")]
        }
        svg.element("rect", frame)
        let c = widget.content
        switch c.family {
        case .accessoryCircular: circular(&svg, c)
        case .accessoryRectangular, .systemSmall, .systemMedium, .systemLarge, .systemExtraLarge: rectangular(&svg, c)
        case .accessoryInline: inline(&svg, c)
        case .accessoryCorner: corner(&svg, c)
        }
        if widget.isStale {
            svg.text("STALE", x: cellWidth - 16, y: 142, size: 11, fill: Palette.stale, anchor: "end", weight: "bold")
        }
        let budget =
            rules.noBudget ? "no budget" : "budget \(widget.budget.remaining(at: now))/\(widget.budget.limit)"
        svg.text("\(c.family.shortName) · \(widget.id)", x: 4, y: 165, size: 12, fill: Palette.primary)
        svg.text("gen \(widget.generation) · \(budget)", x: 4, y: 179, size: 11, fill: Palette.secondary)
    }

    private static func circular(_ svg: inout SVGWriter, _ c: WidgetContent) {
        svg.element(
            "circle",
            [
                ("cx", "110"), ("cy", "72"), ("r", "50"), ("fill", Palette.well),
                ("stroke", c.isEmpty || c.isRedacted ? Palette.track : Palette.accent), ("stroke-width", "5"),
            ])
        if c.isRedacted {
            bar(&svg, x: 92, y: 54, width: 36, height: 20)
            bar(&svg, x: 96, y: 84, width: 28, height: 9)
            return
        }
        svg.text(c.lines.first ?? "", x: 110, y: 80, size: 30, fill: Palette.primary, anchor: "middle", weight: "bold")
        svg.text(c.label ?? "", x: 110, y: 100, size: 12, fill: Palette.secondary, anchor: "middle")
    }

    private static func rectangular(_ svg: inout SVGWriter, _ c: WidgetContent) {
        svg.element(
            "rect",
            [("x", "12"), ("y", "22"), ("width", "196"), ("height", "104"), ("rx", "18"), ("fill", Palette.well)])
        let styles: [(size: Double, fill: String, weight: String?)] = [
            (17, Palette.primary, "bold"), (14, Palette.secondary, nil), (14, Palette.accent, nil),
        ]
        for (i, line) in c.lines.prefix(3).enumerated() {
            let y = 52 + Double(i) * 26
            let style = c.lines.count == 2 && i == 1 ? styles[2] : styles[i]
            if c.isRedacted {
                bar(&svg, x: 26, y: y - 13, width: Double(TextMetrics.width(of: line)) * 7.5, height: 14)
            } else {
                svg.text(
                    line, x: 26, y: y, size: style.size, fill: c.isEmpty ? Palette.secondary : style.fill,
                    weight: style.weight)
            }
        }
    }

    private static func inline(_ svg: inout SVGWriter, _ c: WidgetContent) {
        let line = c.lines.first ?? ""
        if c.isRedacted {
            bar(&svg, x: 50, y: 60, width: 120, height: 16)
        } else {
            svg.text(
                line, x: 110, y: 74, size: 16, fill: c.isEmpty ? Palette.secondary : Palette.primary, anchor: "middle")
        }
        svg.element(
            "line",
            [("x1", "24"), ("y1", "86"), ("x2", "196"), ("y2", "86"), ("stroke", Palette.track), ("stroke-width", "1")])
    }

    /// The top-left corner of a face: gauge text in the corner, then a gauge arc and a curved
    /// label along the inside edge (arcs centred towards the face's centre).
    private static func corner(_ svg: inout SVGWriter, _ c: WidgetContent) {
        let (cx, cy) = (184.0, 146.0)
        let gaugeRadius = 116.0
        let labelRadius = 94.0
        if c.isRedacted {
            bar(&svg, x: 20, y: 26, width: 34, height: 20)
        } else {
            svg.text(
                c.lines.first ?? "", x: 36, y: 44, size: 24, fill: Palette.primary, anchor: "middle", weight: "bold")
        }
        svg.element(
            "path",
            [
                ("d", arc(cx, cy, gaugeRadius, 0, 1)), ("fill", "none"), ("stroke", Palette.track),
                ("stroke-width", "7"), ("stroke-linecap", "round"),
            ])
        if let g = c.gauge, g.fraction > 0 {
            svg.element(
                "path",
                [
                    ("d", arc(cx, cy, gaugeRadius, 0, g.fraction)), ("fill", "none"),
                    ("stroke", Palette.accent), ("stroke-width", "7"), ("stroke-linecap", "round"),
                ])
        }
        if c.isRedacted {
            bar(&svg, x: 96, y: 72, width: 44, height: 10)
            return
        }
        // The curved label, drawn as text tangent to the arc at its middle (45°): portable,
        // unlike <textPath>.
        let mid = Double.pi * 1.25
        let (lx, ly) = (n(cx + labelRadius * cos(mid)), n(cy + labelRadius * sin(mid)))
        svg.element(
            "text",
            [
                ("x", lx), ("y", ly), ("font-size", "13"), ("fill", c.isEmpty ? Palette.secondary : Palette.primary),
                ("text-anchor", "middle"), ("transform", "rotate(-45 \(lx) \(ly))"),
            ],
            text: c.label ?? "")
    }

    /// A quarter-circle arc path from 180° (left) towards 270° (up), `from`…`to` of the way.
    static func arc(_ cx: Double, _ cy: Double, _ r: Double, _ from: Double, _ to: Double) -> String {
        func point(_ f: Double) -> String {
            let angle = Double.pi * (1 + f / 2)
            return "\(n(cx + r * cos(angle))) \(n(cy + r * sin(angle)))"
        }
        return "M \(point(from)) A \(n(r)) \(n(r)) 0 0 1 \(point(to))"
    }

    private static func bar(_ svg: inout SVGWriter, x: Double, y: Double, width: Double, height: Double) {
        svg.element(
            "rect",
            [
                ("x", n(x)), ("y", n(y)), ("width", n(width)), ("height", n(height)), ("rx", n(height / 2)),
                ("fill", Palette.redacted),
            ])
    }

    private static func n(_ x: Double) -> String { SVGWriter.number(x) }

    /// An id-safe form of a widget id: letters and digits kept, everything else `-`.
    static func slug(_ s: String) -> String {
        String(s.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" })
    }
}
