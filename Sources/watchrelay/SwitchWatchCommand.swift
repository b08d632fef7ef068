#if os(Linux)
import CLIArguments
import Foundation
import Primitives
import RelayCommand
import RelayProtocol
import WatchConnectivity

/// `watchrelay switch-watch`: chooses a phone's active watch, as the user does in the Watch app.
enum SwitchWatchCommand {
    static let help = """
        USAGE: watchrelay switch-watch --phone-state DIR --watch-id ID
               watchrelay switch-watch --phone-state DIR --list

        Makes watch ID the active watch of the phone whose state directory is DIR (a watch
        paired with `watchrelay pair --watch-id ID`, or `default`: the one paired without an
        id). A WatchConnectivity phone app running on DIR notices at once (inotify) and
        switches in Apple's order: sessionDidBecomeInactive, sessionDidDeactivate, then its
        activate() gets the new watch. An app started later starts on it. Exits 0 once the
        choice is written (it does not wait for a running app).

        OPTIONS:
          --phone-state DIR     the phone's state directory (required; a watch's is refused)
          --watch-id ID         the watch to make active
          --list                print the phone's watches, the active one marked with *
          --json                print {"activeWatch":…,"watches":[…]} instead
          -h, --help            show this help
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json", "list"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        // Required, but said after the unknown options (a typo of --phone-state is named as one).
        let phoneStateOption = try args.string("phone-state")
        let watchID = try args.string("watch-id")
        let list = args.flag("list")
        let json = args.flag("json")
        try args.rejectUnknown()
        guard let phoneState = phoneStateOption else {
            throw Arguments.UsageError(description: "switch-watch needs --phone-state\n\n\(help)")
        }
        guard (watchID != nil) != list else {
            throw Arguments.UsageError(description: "switch-watch needs exactly one of --watch-id and --list\n\n\(help)")
        }
        // A watch's directory has a session.db too: it would list as a phone with one watch.
        do {
            try DeviceStateDirectory.require(phoneState, option: "--phone-state", holds: .phone)
        } catch {
            StandardError.write("watchrelay: \(error)\n")
            return 1
        }
        let watches = PhoneWatches(root: phoneState)
        guard !watches.ids.isEmpty else {
            // A mistyped path must not answer with an empty list (or create a directory).
            let exists = FileManager.default.fileExists(atPath: phoneState)
            StandardError.write(
                "watchrelay: " + (exists ? "no watch is paired with \(phoneState)" : "\(phoneState) does not exist")
                    + " (the phone's state directory is the one `watchrelay pair --phone-state DIR` paired)\n")
            return 1
        }
        if let watchID {
            guard PhoneWatches.isValid(watchID) else {
                throw Arguments.UsageError(description: "--watch-id: '\(watchID)' is not a watch id (1-64 of A-Z a-z 0-9 . _ -)")
            }
            guard watches.ids.contains(watchID) else {
                StandardError.write("watchrelay: no watch '\(watchID)' is paired with \(phoneState) (watches: \(watches.ids))\n")
                return 1
            }
            try watches.setActive(watchID)
        }
        if json {
            let object: [String: Any] = ["activeWatch": watches.activeID, "watches": watches.ids]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            StandardOutput.writeLine(String(decoding: data, as: UTF8.self))
        } else if list {
            for id in watches.ids { StandardOutput.writeLine((id == watches.activeID ? "* " : "  ") + id) }
        } else {
            StandardOutput.writeLine("active watch: \(watches.activeID)")
        }
        return 0
    }
}
#endif
