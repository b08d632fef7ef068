#if os(Linux)
import CLIArguments
import Foundation
import Primitives
import RelayCommand
import RelayProtocol
import SQLite
import WatchConnectivity

/// `watchrelay pair`: pairs a phone's and a watch's state directories for WatchConnectivity apps.
enum PairCommand {
    static let help = """
        USAGE: watchrelay pair --relay URL --phone-state DIR --watch-state DIR [options]

        Pairs two device state directories through the relay, as the operating system pairs
        an iPhone with its Apple Watch before any app runs. Apps built against WatchRelay's
        WatchConnectivity module and started with WATCHRELAY_STATE set to these directories
        (and WATCHRELAY_URL, WATCHRELAY_ROLE=phone|watch) are paired at activate(). Pairing
        again makes a new pair. Prints the pair id; exits 0 once both sides are paired. A
        directory that holds the other device's state (the two swapped) is refused. A pairing
        that fails, or that SIGINT, SIGTERM or SIGHUP stop (exit 128 + the signal), leaves the
        directories as it found them.

        Several watches: with --watch-id the phone keeps the watches it has and adds this
        one (its state goes to PHONE-STATE/watches/ID). The phone's apps talk to the active
        watch only (PHONE-STATE/active-watch; the first watch paired is active; --activate
        makes this one active). `watchrelay switch-watch` chooses another; a running app
        follows it, or switches itself with WCSession.switchWatch(to:).

        OPTIONS:
          --relay URL           the relay, e.g. ws://127.0.0.1:8765/v1 (required)
          --phone-state DIR     the phone's state directory, created if missing (required)
          --watch-state DIR     the watch's state directory, created if missing (required)
          --phone-name NAME     the phone's device name (default iPhone)
          --watch-name NAME     the watch's device name (default Apple Watch)
          --watch-id ID         add a watch: its id among the phone's watches
                                (1-64 of A-Z a-z 0-9 . _ -; default: the phone's only watch)
          --activate            make this watch the phone's active watch
          --json                print {"pairId":…,"phoneState":…,"watchState":…,"watchId":…,
                                "activeWatch":…} instead
          -h, --help            show this help
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        var args = try Arguments(argv, booleanFlags: ["help", "json", "activate"])
        if args.flag("help") {
            StandardOutput.writeLine(help)
            return 0
        }
        // Required, but said after the unknown options (a typo of --watch-state is named as one).
        let relayOption = try args.string("relay")
        let phoneStateOption = try args.string("phone-state")
        let watchStateOption = try args.string("watch-state")
        let phoneName = try args.string("phone-name") ?? "iPhone"
        let watchName = try args.string("watch-name") ?? "Apple Watch"
        let json = args.flag("json")
        let watchID = try args.string("watch-id")
        let activate = args.flag("activate")
        try args.rejectUnknown()
        guard let relay = relayOption, let phoneState = phoneStateOption, let watchState = watchStateOption else {
            throw Arguments.UsageError(description: "pair needs --relay, --phone-state and --watch-state\n\n\(help)")
        }
        try CLI.requireWebSocketURL(relay)
        let standardized = [phoneState, watchState].map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        if standardized[0] == standardized[1] {
            throw Arguments.UsageError(
                description: "--phone-state and --watch-state are the same directory: a phone and its watch each need their own")
        }
        if let watchID, !PhoneWatches.isValid(watchID) {
            throw Arguments.UsageError(description: "--watch-id: '\(watchID)' is not a watch id (1-64 of A-Z a-z 0-9 . _ -)")
        }
        // Before anything is created or written: a path that can't be a directory, and a
        // directory that holds the other role's state (the two swapped, on a paired pair).
        try DirectoryError.check(phoneState, option: "--phone-state")
        try DirectoryError.check(watchState, option: "--watch-state")
        do {
            try DeviceStateDirectory.require(phoneState, option: "--phone-state", holds: .phone)
            try DeviceStateDirectory.require(watchState, option: "--watch-state", holds: .watch)
        } catch {
            throw Arguments.UsageError(description: "\(error)")
        }
        // A signal mid-pairing undoes what it created, as a failure does, and exits 128 + the
        // signal: its default action left the new directories holding unpaired session stores
        // (an unpaired phone store counts as a watch: PhoneWatches.ids).
        let interruptions = await SignalHandlers.install([SIGINT, SIGTERM, SIGHUP]) { number in
            WatchRelayPairing.removeUnfinished()
            StandardError.write("watchrelay: pair interrupted (signal \(number)); the state it had created is removed\n")
            exit(128 + number)
        }
        defer { withExtendedLifetime(interruptions) {} }
        let result: WatchRelayPairing.Result
        do {
            result = try await WatchRelayPairing.pair(
                relayURL: relay, phoneState: phoneState, watchState: watchState, phoneName: phoneName, watchName: watchName,
                watchID: watchID, makeActive: activate)
        } catch var error as DirectoryError {
            // The sessions name their directory `--state`; here it is one of these two.
            error.option = error.path == watchState ? "--watch-state" : "--phone-state"
            throw error
        }
        let watches = PhoneWatches(root: phoneState)
        if json {
            let object: [String: String] = [
                "pairId": result.pairID, "phoneState": phoneState, "watchState": watchState,
                "watchId": watchID ?? PhoneWatches.defaultID, "activeWatch": watches.activeID,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            StandardOutput.writeLine(String(decoding: data, as: UTF8.self))
        } else {
            let which = watchID.map { " watch \($0)" } ?? ""
            StandardOutput.writeLine(
                "paired \(result.pairID): \(phoneState) (\(phoneName))\(which) ↔ \(watchState) (\(watchName));"
                    + " active watch: \(watches.activeID)")
        }
        return 0
    }
}
#endif
