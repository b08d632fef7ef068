/// A minimal, deterministic SVG writer: elements with attributes in the order given, fixed
/// number formatting (at most one decimal) and XML escaping. Package-wide: the day strip
/// here and the watch's renderers (WatchApp) draw with it.
package struct SVGWriter {
    /// The system sans-serif fonts, with Korean fallbacks for the seed app's users.
    package static let fonts =
        "-apple-system, 'SF Compact', 'Helvetica Neue', Arial, 'Noto Sans CJK KR', 'Apple SD Gothic Neo', sans-serif"

    package private(set) var text = ""
    private var depth = 0

    /// Starts the document: `<svg>` with a `viewBox` and a background.
    package init(width: Double, height: Double, title: String, background: String) {
        text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        open(
            "svg",
            [
                ("xmlns", "http://www.w3.org/2000/svg"), ("width", Self.number(width)), ("height", Self.number(height)),
                ("viewBox", "0 0 \(Self.number(width)) \(Self.number(height))"),
                ("font-family", Self.fonts),
            ])
        element("title", [], text: title)
        element("rect", [("width", "100%"), ("height", "100%"), ("fill", background)])
    }

    /// The finished document.
    package mutating func finish() -> String {
        while depth > 0 { close("svg") }
        return text
    }

    /// `<name attrs>` and one level deeper.
    package mutating func open(_ name: String, _ attributes: [(String, String)]) {
        line("<\(name)\(Self.attributes(attributes))>")
        depth += 1
    }

    /// `</name>`, one level up.
    package mutating func close(_ name: String) {
        depth -= 1
        line("</\(name)>")
    }

    /// `<name attrs/>`, or `<name attrs>text</name>` with `text` escaped.
    package mutating func element(_ name: String, _ attributes: [(String, String)], text content: String? = nil) {
        if let content {
            line("<\(name)\(Self.attributes(attributes))>\(Self.escape(content))</\(name)>")
        } else {
            line("<\(name)\(Self.attributes(attributes))/>")
        }
    }

    /// A `<text>` element.
    package mutating func text(
        _ content: String, x: Double, y: Double, size: Double, fill: String, anchor: String = "start",
        weight: String? = nil
    ) {
        var a: [(String, String)] = [
            ("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size)), ("fill", fill),
        ]
        if anchor != "start" { a.append(("text-anchor", anchor)) }
        if let weight { a.append(("font-weight", weight)) }
        element("text", a, text: content)
    }

    private mutating func line(_ s: String) {
        text += String(repeating: "  ", count: depth) + s + "\n"
    }

    private static func attributes(_ attributes: [(String, String)]) -> String {
        attributes.map { " \($0.0)=\"\(escape($0.1))\"" }.joined()
    }

    /// `x` with at most one decimal, no trailing `.0`, no `-0`: `12`, `12.5`, `-3.2`.
    package static func number(_ x: Double) -> String {
        let tenths = Int((x * 10).rounded())
        let magnitude = abs(tenths)
        let sign = tenths < 0 ? "-" : ""
        return magnitude % 10 == 0 ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }

    /// Escapes the five XML special characters and drops what XML 1.0 forbids: the C0 controls
    /// but tab, newline and return, and the noncharacters U+FFFE and U+FFFF.
    package static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.append(c)
            default:
                // XML 1.0 forbids these, even escaped: one makes the whole document unreadable.
                if c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0xFFFE || $0.value == 0xFFFF }) {
                    continue
                }
                out.append(c)
            }
        }
        return out
    }
}
