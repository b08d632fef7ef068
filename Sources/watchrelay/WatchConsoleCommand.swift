import Primitives
import WatchApp

/// One command of the watch console: a stdin line of `watchrelay watch`, in human or
/// `--machine` mode.
enum WatchConsoleCommand: Sendable, Hashable {
    /// `pair CODE`: join the phone showing this code.
    case pair(String)
    /// `delete LOGIN`: favorites.delete by userInfo; answered once the relay accepted it.
    case delete(String)
    /// `open LOGIN`: the profile's repos from the phone; answered once loaded, failed or offline.
    case open(String)
    /// `select LOGIN` (`select none`: rotate): the rectangular widget's configured user.
    case select(String?)
    /// `foreground` / `background`.
    case foreground(Bool)
    /// `advance SECONDS`: moves the manual widget clock, then runs the due widget work.
    case advance(Double)
    /// `reload`: ask for a widget reload.
    case reload
    /// `flush`: run the due widget work now.
    case flush
    /// `widget`: the widgets now (text frames, or JSON with --json).
    case widget
    /// `state` (also `json`): the whole watch state as JSON.
    case state
    /// `status`: favorites, pending deletes, foreground, clock.
    case status
    /// `sync`: answered once the watch handled (stored, reloaded, acked) everything the relay
    /// holds for it; at once when it is not connected (`caughtUp` false).
    case sync
    /// `uninstall`: the watch app is uninstalled (the relay is told, the watch's own store is
    /// emptied) and the watch exits; started again on the same state it is installed again.
    case uninstall
    /// `help`.
    case help
    /// `quit` (also `exit`).
    case quit

    /// The verb, as typed.
    var verb: String {
        switch self {
        case .pair: "pair"
        case .delete: "delete"
        case .open: "open"
        case .select: "select"
        case .foreground(let on): on ? "foreground" : "background"
        case .advance: "advance"
        case .reload: "reload"
        case .flush: "flush"
        case .widget: "widget"
        case .state: "state"
        case .status: "status"
        case .sync: "sync"
        case .uninstall: "uninstall"
        case .help: "help"
        case .quit: "quit"
        }
    }

    static let helpText = """
        pair CODE        join the phone showing this 6-digit code
        delete LOGIN     send favorites.delete by userInfo (works while the phone is offline)
        open LOGIN       ask the phone for LOGIN's repos (message with reply)
        select LOGIN     show LOGIN on the rectangular widget (select none: rotate)
        foreground | background
        advance SECONDS  move the widget clock (only with --manual-clock), then run due reloads
        widget           print the widgets now     state (json)   print the state as JSON
        reload           ask for a widget reload   flush          run due widget work now
        status           favorites, pending deletes, foreground, clock
        sync             wait until everything the relay holds for this watch is handled
        uninstall        uninstall the watch app: the phone is told (if connected), the watch's
                         favorites and widget settings go, the watch exits (start it again:
                         reinstalled)
        quit             stop (also exit)
        """

    /// Parses a verb and its operands; what is wrong (with the usage) if they are not a command.
    static func parse(_ words: [String]) -> Result<WatchConsoleCommand, WatchConsoleCommand.ParseError> {
        guard let verb = words.first?.lowercased() else { return .failure(ParseError("empty command")) }
        let operands = Array(words.dropFirst())
        func one(_ what: String, _ make: (String) -> WatchConsoleCommand) -> Result<WatchConsoleCommand, ParseError> {
            operands.count == 1 ? .success(make(operands[0])) : .failure(ParseError("usage: \(verb) \(what)"))
        }
        func none(_ command: WatchConsoleCommand) -> Result<WatchConsoleCommand, ParseError> {
            operands.isEmpty ? .success(command) : .failure(ParseError("\(verb) takes no operands"))
        }
        switch verb {
        case "pair": return one("CODE") { .pair($0) }
        case "delete", "rm": return one("LOGIN") { .delete($0) }
        case "open": return one("LOGIN") { .open($0) }
        case "select": return one("LOGIN|none") { .select($0 == "none" ? nil : $0) }
        case "foreground": return none(.foreground(true))
        case "background": return none(.foreground(false))
        case "advance":
            let allowed = WatchMachineLimits.advanceSeconds
            guard operands.count == 1, let seconds = Double(operands[0]), allowed.contains(seconds) else {
                return .failure(ParseError("usage: advance SECONDS (\(Int(allowed.lowerBound)) to \(Int(allowed.upperBound)))"))
            }
            return .success(.advance(seconds))
        case "reload": return none(.reload)
        case "flush": return none(.flush)
        case "widget", "widgets": return none(.widget)
        case "state", "json": return none(.state)
        case "status": return none(.status)
        case "sync": return none(.sync)
        case "uninstall": return none(.uninstall)
        case "help", "?": return none(.help)
        case "quit", "exit": return none(.quit)
        default: return .failure(ParseError("unknown command \(Excerpt.quoted(verb)) (try help)"))
        }
    }

    /// Why words are not a command.
    struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
