/// A small command-line parser: `--name value`, `--name=value`, boolean `--flag`, positionals.
///
/// No Swift package can be fetched here (no swift-argument-parser), so this covers what the
/// subcommands need, with usage errors that name the bad option.
public struct Arguments {
    /// A usage error: printed with the subcommand's help, exit code 2.
    public struct UsageError: Error, CustomStringConvertible {
        public var description: String

        /// A usage error saying `description`.
        public init(description: String) {
            self.description = description
        }
    }

    private var options: [String: String] = [:]
    private var flags: Set<String> = []
    public private(set) var positionals: [String] = []
    private var consumed: Set<String> = []
    /// Options given with no value after them.
    private var missingValue: Set<String> = []

    /// Parses `args`; `booleanFlags` take no value.
    public init(_ args: [String], booleanFlags: Set<String>) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" {
                positionals += args[(i + 1)...]
                break
            }
            if a.hasPrefix("--") {
                let body = String(a.dropFirst(2))
                if let eq = body.firstIndex(of: "=") {
                    options[String(body[..<eq])] = String(body[body.index(after: eq)...])
                } else if booleanFlags.contains(body) {
                    flags.insert(body)
                } else {
                    // No value (the end, or another option next: `--consol --port 0` is a typo
                    // of a flag, not `--consol` set to `--port`): `string` reports it as
                    // missing its value, `rejectUnknown` as unknown if nobody asks for it.
                    guard i + 1 < args.count, !args[i + 1].hasPrefix("--") else {
                        missingValue.insert(body)
                        i += 1
                        continue
                    }
                    options[body] = args[i + 1]
                    i += 1
                }
            } else if a == "-h" {
                flags.insert("help")
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    /// Whether boolean `--name` was given.
    public mutating func flag(_ name: String) -> Bool {
        consumed.insert(name)
        return flags.contains(name)
    }

    /// The value of `--name`, if given.
    /// - Throws: a usage error when `--name` was given with no value after it.
    public mutating func string(_ name: String) throws(UsageError) -> String? {
        consumed.insert(name)
        if missingValue.contains(name) { throw UsageError(description: "option --\(name) needs a value") }
        return options[name]
    }

    /// The integer value of `--name`, if given; a usage error if it is not an integer in `range`.
    public mutating func int(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws -> Int? {
        guard let s = try string(name) else { return nil }
        guard let v = Int(s), range.contains(v) else {
            throw UsageError(description: "--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), not '\(s)'")
        }
        return v
    }

    /// Fails on options nobody asked for (typos), then (unless the command takes them) on
    /// words that are not options.
    public func rejectUnknown(allowingPositionals: Bool = false) throws {
        let unknown = Set(options.keys).union(flags).union(missingValue).subtracting(consumed).sorted()
        if let first = unknown.first { throw UsageError(description: "unknown option --\(first)") }
        if !allowingPositionals, let extra = positionals.first {
            throw UsageError(description: "unexpected argument '\(extra)' (see --help)")
        }
    }
}
