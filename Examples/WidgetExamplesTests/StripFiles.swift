import Foundation
import WidgetKit

/// Where the examples write their SVG strips: `.build/widget-strips/` in the package.
enum StripFiles {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/widget-strips")

    /// Writes `day`'s strip as `<name>.svg`; returns the path. Throws if it cannot be written.
    @discardableResult
    static func write<Entry>(_ day: WidgetDay<Entry>, _ name: String) throws -> String {
        let url = directory.appendingPathComponent("\(name).svg")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(day.svgStrip().utf8).write(to: url)
        return url.path
    }
}
