import Foundation
import Primitives
import RelayProtocol
import Synchronization

/// A logfmt logger writing to standard error (`ts=… level=info msg="…" key=value`).
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case debug, info, warning, error

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .debug: return "debug"
            case .info: return "info"
            case .warning: return "warn"
            case .error: return "error"
            }
        }

        /// Parses `debug`, `info`, `warn`/`warning`, `error`.
        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warn", "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }
    }

    /// Messages below this level are dropped.
    public var level: Level
    /// Fields added to every line (e.g. `component=relay`).
    public var fields: [(String, String)]
    private let sink: @Sendable (String) -> Void

    /// A logger to standard error.
    public init(level: Level = .info, fields: [(String, String)] = []) {
        self.init(level: level, fields: fields, sink: Logger.standardError)
    }

    /// A logger to a custom sink (tests).
    public init(level: Level, fields: [(String, String)] = [], sink: @escaping @Sendable (String) -> Void) {
        self.level = level
        self.fields = fields
        self.sink = sink
    }

    /// A logger that drops everything.
    public static let silent = Logger(level: .error, sink: { _ in })

    /// The same logger with more fixed fields.
    public func with(_ more: (String, String)...) -> Logger {
        var copy = self
        copy.fields += more
        return copy
    }

    public func debug(_ message: @autoclosure () -> String, _ kv: (String, String)...) { log(.debug, message(), kv) }
    public func info(_ message: @autoclosure () -> String, _ kv: (String, String)...) { log(.info, message(), kv) }
    public func warning(_ message: @autoclosure () -> String, _ kv: (String, String)...) { log(.warning, message(), kv) }
    public func error(_ message: @autoclosure () -> String, _ kv: (String, String)...) { log(.error, message(), kv) }

    /// Logs at `l` with fields given as an array (for callers that pass them on).
    public func log(_ l: Level, _ message: String, _ kv: [(String, String)]) {
        guard l >= level else { return }
        var line = "ts=\(Logger.timestamp()) level=\(l) msg=\(Logger.quote(message))"
        for (k, v) in fields + kv { line += " \(k)=\(Logger.quote(v))" }
        sink(line)
    }

    /// Quotes a value when logfmt needs it; a control character in it (a peer's text: a
    /// watch's name, a login) is written as an escape, never raw (``TerminalText/logfmtValue(_:)``).
    static func quote(_ v: String) -> String {
        TerminalText.logfmtValue(v)
    }

    private static func timestamp() -> String {
        let ms = Int64(Date().timeIntervalSince1970 * 1000)
        return Timestamp(millisecondsSinceEpoch: ms).iso8601
    }

    /// A line that cannot be written (standard error is a pipe whose reader is gone) is lost,
    /// not fatal (``StandardError``): a relay must outlive its log reader.
    private static let standardError: @Sendable (String) -> Void = { line in StandardError.write(line + "\n") }
}
