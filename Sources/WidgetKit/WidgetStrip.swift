import Foundation

/// Draws a ``WidgetDay`` as an SVG strip: one row per widget across the simulated time, each
/// entry a box with what it showed, stale stretches in red with each refused reload marked
/// `×`, reloads as ticks above the row (filled: charged, hollow: free), providers that never
/// answered as `!`, and the app's events on the time axis.
///
/// Deterministic: the same day draws the same bytes (fixed layout, numbers with at most one
/// decimal, text escaped).
enum WidgetStrip {
    enum Palette {
        static let sheet = "#1c1c1e"
        static let row = "#2c2c2e"
        static let entryA = "#0a84ff"
        static let entryB = "#5e5ce6"
        static let placeholder = "#48484a"
        static let text = "#ffffff"
        static let secondary = "#aeaeb2"
        static let grid = "#3a3a3c"
        static let stale = "#ff453a"
        static let reload = "#30d158"
        static let failure = "#ff9f0a"
    }

    static let labelWidth = 170.0
    static let plotWidth = 960.0
    static let rowHeight = 46.0
    static let rowGap = 14.0
    static let top = 64.0

    static func render<Entry>(_ day: WidgetDay<Entry>) -> String {
        let span = max(day.end.timeIntervalSince(day.start), 1)
        let width = labelWidth + plotWidth + 20
        let rowsHeight = Double(day.widgets.count) * (rowHeight + rowGap)
        let height = top + rowsHeight + 70
        var svg = SVGWriter(
            width: width, height: height, title: "\(day.kind) widget · simulated day", background: Palette.sheet)
        func x(_ date: Date) -> Double {
            labelWidth + plotWidth * min(max(date.timeIntervalSince(day.start) / span, 0), 1)
        }
        let charged = day.reloads.filter(\.charged).count
        var summary = "\(day.reloads.count) reloads (\(charged) charged) · \(day.refusals.count) refused"
        if let first = day.firstRefusal { summary += " · first refused \(stamp(first.at, from: day.start))" }
        if !day.providerFailures.isEmpty { summary += " · \(day.providerFailures.count) provider failures" }
        svg.text(
            "\(day.kind) · \(WidgetTime.iso8601(day.start)) → \(WidgetTime.iso8601(day.end))", x: 10, y: 22, size: 14,
            fill: Palette.text, weight: "bold")
        svg.text(summary, x: 10, y: 42, size: 12, fill: day.refusals.isEmpty ? Palette.secondary : Palette.stale)
        axis(&svg, day: day, span: span, x: x, bottom: top + rowsHeight)
        for (row, widget) in day.widgets.enumerated() {
            let y = top + Double(row) * (rowHeight + rowGap)
            self.row(&svg, day: day, widget: widget, y: y, x: x)
        }
        events(&svg, day: day, y: top + rowsHeight + 8, x: x)
        return svg.finish()
    }

    /// Hour lines and labels (every hour for a day, every 6 h for longer runs).
    private static func axis<Entry>(
        _ svg: inout SVGWriter, day: WidgetDay<Entry>, span: TimeInterval, x: (Date) -> Double, bottom: Double
    ) {
        let step: TimeInterval = span <= 2 * 86_400 ? 3600 : 6 * 3600
        let labelEvery = span <= 86_400 ? 3 : (span <= 2 * 86_400 ? 6 : 1)
        var k = 0
        while Double(k) * step <= span {
            let t = day.start.addingTimeInterval(Double(k) * step)
            let px = x(t)
            svg.element(
                "line",
                [("x1", n(px)), ("y1", n(top - 6)), ("x2", n(px)), ("y2", n(bottom)), ("stroke", Palette.grid)])
            if k % labelEvery == 0 {
                svg.text(stamp(t, from: day.start), x: px, y: top - 10, size: 10, fill: Palette.secondary, anchor: "middle")
            }
            k += 1
        }
    }

    private static func row<Entry>(
        _ svg: inout SVGWriter, day: WidgetDay<Entry>, widget: HostedWidget, y: Double, x: (Date) -> Double
    ) {
        svg.open("g", [("id", "row-\(widget.id)")])
        svg.text(widget.family.rawValue, x: 10, y: y + 18, size: 12, fill: Palette.text)
        svg.text("budget \(widget.budget)/day", x: 10, y: y + 34, size: 10, fill: Palette.secondary)
        svg.element(
            "rect",
            [("x", n(labelWidth)), ("y", n(y)), ("width", n(plotWidth)), ("height", n(rowHeight)), ("fill", Palette.row)])
        let shown = day.shown(id: widget.id)
        for (i, entry) in shown.enumerated() {
            let from = x(entry.from)
            let to = i + 1 < shown.count ? x(shown[i + 1].from) : x(day.end)
            guard to > from else { continue }
            let fill = entry.isPlaceholder ? Palette.placeholder : (entry.generation % 2 == 0 ? Palette.entryA : Palette.entryB)
            svg.open("g", [])
            svg.element("title", [], text: "\(stamp(entry.from, from: day.start)) #\(entry.generation): \(entry.text)")
            svg.element(
                "rect",
                [
                    ("x", n(from)), ("y", n(y + 8)), ("width", n(max(to - from - 0.5, 0.5))), ("height", n(rowHeight - 8)),
                    ("fill", fill), ("opacity", "0.85"),
                ])
            let room = Int((to - from - 6) / 6.2)
            if room >= 3 {
                let label = entry.isPlaceholder ? "placeholder" : entry.text
                svg.text(fit(label, room), x: from + 3, y: y + 31, size: 10, fill: Palette.text)
            }
            svg.close("g")
        }
        for stale in day.staleIntervals(id: widget.id) {
            svg.element(
                "rect",
                [
                    ("x", n(x(stale.from))), ("y", n(y + 8)), ("width", n(max(x(stale.to) - x(stale.from), 1))),
                    ("height", n(rowHeight - 8)), ("fill", Palette.stale), ("opacity", "0.35"),
                ])
            svg.element(
                "line",
                [
                    ("x1", n(x(stale.from))), ("y1", n(y + rowHeight)), ("x2", n(x(stale.to))), ("y2", n(y + rowHeight)),
                    ("stroke", Palette.stale), ("stroke-width", "3"),
                ])
        }
        for reload in day.reloads where reload.widgetID == widget.id {
            let px = x(reload.at)
            var a: [(String, String)] = [("cx", n(px)), ("cy", n(y + 4)), ("r", "2.5"), ("stroke", Palette.reload)]
            a.append(("fill", reload.charged ? Palette.reload : "none"))
            svg.open("g", [])
            svg.element("title", [], text: reload.description)
            svg.element("circle", a)
            svg.close("g")
        }
        for refusal in day.refusals where refusal.widgetID == widget.id {
            svg.open("g", [("class", "refused")])
            svg.element("title", [], text: refusal.description)
            svg.text("×", x: x(refusal.at), y: y + 6, size: 16, fill: Palette.stale, anchor: "middle", weight: "bold")
            svg.close("g")
        }
        for failure in day.providerFailures where failure.widgetID == widget.id {
            svg.open("g", [("class", "provider-failure")])
            svg.element("title", [], text: failure.description)
            svg.text("!", x: x(failure.at), y: y + 6, size: 14, fill: Palette.failure, anchor: "middle", weight: "bold")
            svg.close("g")
        }
        svg.close("g")
    }

    /// The app's events under the rows: a mark each, labelled when there are few.
    private static func events<Entry>(_ svg: inout SVGWriter, day: WidgetDay<Entry>, y: Double, x: (Date) -> Double) {
        svg.text("app", x: 10, y: y + 12, size: 11, fill: Palette.secondary)
        let labelled = day.appEvents.count <= 12
        for (i, event) in day.appEvents.enumerated() {
            let px = x(event.at)
            svg.open("g", [])
            svg.element("title", [], text: "\(stamp(event.at, from: day.start)) \(event.label)")
            let color = event.reloadCalls.isEmpty ? Palette.secondary : Palette.reload
            svg.element("path", [("d", "M\(n(px)) \(n(y)) l-4 8 h8 z"), ("fill", color)])
            if labelled {
                svg.text(
                    fit(event.label, 22), x: px, y: y + 22 + Double(i % 2) * 12, size: 9, fill: Palette.secondary,
                    anchor: "middle")
            }
            svg.close("g")
        }
        svg.text(
            "▲ app event (green: called reloadTimelines) · ● reload (hollow: free) · × refused: widget stale (red) · ! provider never answered",
            x: 10, y: y + 52, size: 10, fill: Palette.secondary)
    }

    /// `HH:MM`, prefixed `dN ` past the first day.
    static func stamp(_ date: Date, from start: Date) -> String {
        let day = Int(date.timeIntervalSince(start) / 86_400)
        return day > 0 ? "d\(day + 1) \(WidgetTime.clock(date))" : WidgetTime.clock(date)
    }

    private static func fit(_ s: String, _ room: Int) -> String {
        s.count <= room ? s : String(s.prefix(max(room - 1, 1))) + "…"
    }

    private static func n(_ v: Double) -> String { SVGWriter.number(v) }
}

extension WidgetDay {
    /// The day as an SVG strip: what each widget showed across the simulated time, stale
    /// stretches and refused reloads in red (see ``WidgetStrip``). Check it renders:
    /// `rsvg-convert strip.svg -o strip.png`.
    public func svgStrip() -> String {
        WidgetStrip.render(self)
    }
}
