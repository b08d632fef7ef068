import Primitives

/// One command of the phone console: a line typed on stdin in `watchrelay phone`, or a subcommand.
public enum PhoneConsoleCommand: Sendable, Hashable {
    /// `add <login>`: add a favorite at the end.
    case add(String)
    /// `remove <login>` (or `rm`, `delete`): remove a favorite.
    case remove(String)
    /// `move <login> <index>` (or `reorder`): move a favorite to a 0-based place.
    case move(String, to: Int)
    /// `list [--json]`: the favorites in order.
    case list(json: Bool)
    /// `refresh`: a manual (throttled) refresh.
    case refresh
    /// `repos <login>`: what the watch would get for `profile.repos.request`.
    case repos(String)
    /// `pair`: a pairing code to type on the watch.
    case pair
    /// `status`: session and snapshot state.
    case status
    /// `uninstall`: the iPhone app is uninstalled (the relay is told) and the companion stops;
    /// started again on the same state it is installed again.
    case uninstall
    /// `help`.
    case help
    /// `quit` (or `exit`): stop the companion.
    case quit

    /// The verb, as typed.
    public var verb: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .move: "move"
        case .list: "list"
        case .refresh: "refresh"
        case .repos: "repos"
        case .pair: "pair"
        case .status: "status"
        case .uninstall: "uninstall"
        case .help: "help"
        case .quit: "quit"
        }
    }

    /// The console's help text.
    public static let helpText = """
        add <login>            add a GitHub user to the favorites (at the end)
        remove <login>         remove a favorite (also: rm, delete)
        move <login> <index>   move a favorite to a 0-based place (also: reorder)
        list [--json]          the favorites in order, with their last known data
        refresh                refresh every favorite from GitHub now (throttled)
        repos <login>          the repos the watch would get for that user
        pair                   print a pairing code to type on the watch
        status                 session and snapshot state
        uninstall              uninstall the iPhone app: every watch is told (if the relay
                               answers; not_told names those that were not), the companion
                               stops (its favorites stay; start it again: reinstalled)
        quit                   stop (also: exit)
        """

    /// Parses `args` (a verb and its operands); a description of what is wrong if they are not a command.
    public static func parse(_ args: [String]) -> Result<PhoneConsoleCommand, ParseError> {
        guard let verb = args.first?.lowercased() else { return .failure(ParseError("empty command")) }
        let operands = Array(args.dropFirst())
        // `add torvalds --json` (a script asking for JSON) was read as a second login. No
        // GitHub login starts with `-`, so `--json` is never one: said as what it is.
        if verb != "list" && verb != "ls" && operands.contains("--json") {
            return .failure(ParseError("--json is for list (`list --json`), not \(verb)"))
        }
        func one(_ make: (String) -> PhoneConsoleCommand) -> Result<PhoneConsoleCommand, ParseError> {
            guard operands.count <= 1 else {
                let got = operands.joined(separator: ", ")
                return .failure(ParseError("usage: \(verb) <login>: one login at a time (got \(operands.count): \(got))"))
            }
            guard let login = operands.first else { return .failure(ParseError("usage: \(verb) <login>")) }
            return .success(make(login))
        }
        func none(_ command: PhoneConsoleCommand) -> Result<PhoneConsoleCommand, ParseError> {
            operands.isEmpty ? .success(command) : .failure(ParseError("\(verb) takes no operands"))
        }
        switch verb {
        case "add": return one { .add($0) }
        case "remove", "rm", "delete": return one { .remove($0) }
        case "repos": return one { .repos($0) }
        case "move", "reorder":
            guard operands.count == 2, let index = Int(operands[1]), index >= 0 else {
                return .failure(ParseError("usage: \(verb) <login> <index> (index from 0)"))
            }
            return .success(.move(operands[0], to: index))
        case "list", "ls":
            let rest = Set(operands)
            guard rest.isSubset(of: ["--json"]) else { return .failure(ParseError("usage: list [--json]")) }
            return .success(.list(json: rest.contains("--json")))
        case "refresh": return none(.refresh)
        case "pair": return none(.pair)
        case "status": return none(.status)
        case "uninstall": return none(.uninstall)
        case "help", "?": return none(.help)
        case "quit", "exit": return none(.quit)
        default: return .failure(ParseError("unknown command \(Excerpt.quoted(verb)) (try help)"))
        }
    }

    /// Parses one console line (words separated by spaces); `nil` for a blank line or a `#` comment.
    public static func parse(line: String) -> Result<PhoneConsoleCommand, ParseError>? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first, !first.hasPrefix("#") else { return nil }
        return parse(words)
    }

    /// Why a line is not a command.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, with the usage when it helps.
        public var description: String
        /// Creates an error.
        public init(_ description: String) { self.description = description }
    }
}
