import RelayClient
import SQLite

/// How a ``PhoneCompanion`` runs: its state, its relay session, and its refresh policy.
public struct PhoneConfiguration: Sendable {
    /// The state directory: `phone.db` (favorites, caches, ledger) and the session's `session.db`.
    public var stateDirectory: String
    /// The relay session (role phone, the same state directory).
    public var session: RelaySessionConfiguration
    /// Time between periodic refreshes (default 30 s); the first runs at start.
    public var refreshInterval: Duration
    /// The manual-refresh throttle window (default 10 s; the first request wins).
    public var refreshThrottle: Duration
    /// The most GitHub user fetches in flight during a refresh (default 4).
    public var concurrency: Int
    /// How often the store is checked for changes made by other processes where inotify is
    /// unavailable (default 100 ms). With inotify (Linux) each change of `phone.db` wakes the
    /// phone at once and this is not used.
    public var externalPollInterval: Duration
    /// How long a repo list fetched from GitHub answers `profile.repos.request` without asking
    /// GitHub again (default 30 s); past it the list is revalidated (ETag: free of rate limit
    /// when unchanged, with a GitHub token only), and answered marked stale if GitHub fails.
    public var reposMaxAge: Duration
    /// The seconds `phone --repos-max-age` (and a scenario phone's `reposMaxAge`) takes.
    public static let reposMaxAgeSeconds: ClosedRange<Double> = 0...86_400
    /// How long a user's data fetched from GitHub lets ``PhoneCompanion/add(_:)`` use it without
    /// asking GitHub again (default 30 s, the periodic refresh's interval): re-adding a favorite
    /// removed a moment ago then costs no request. `.zero` always asks GitHub.
    public var userMaxAge: Duration
    /// SQLite durability of `phone.db` (default `normal`, which survives `kill -9`).
    public var synchronous: SQLiteDatabase.Synchronous

    /// Creates a configuration with the defaults.
    /// - Parameters:
    ///   - relayURL: the relay, `ws://host:port/v1`.
    ///   - stateDirectory: the phone's state directory (created if missing).
    ///   - deviceName: the name the watch sees.
    public init(relayURL: String, stateDirectory: String, deviceName: String = "iPhone") {
        self.stateDirectory = stateDirectory
        session = RelaySessionConfiguration(
            url: relayURL, role: .phone, deviceName: deviceName, stateDirectory: stateDirectory)
        refreshInterval = .seconds(30)
        refreshThrottle = .seconds(10)
        concurrency = 4
        externalPollInterval = .milliseconds(100)
        reposMaxAge = .seconds(30)
        userMaxAge = .seconds(30)
        synchronous = .normal
    }

    /// The phone's active watch when it has several (PROTOCOL.md §6.5), or `nil` for the only one.
    ///
    /// The phone keeps one relay pair per watch: the session of watch `id` keeps its state in
    /// `stateDirectory/watches/<id>` (the layout WatchConnectivity's `PhoneWatches` uses), while
    /// the favorites stay the phone's. Set it with ``useWatch(_:)``.
    public private(set) var watchID: String?

    /// Talks to watch `id` (see ``watchID``); `nil` goes back to the top-level session state.
    public mutating func useWatch(_ id: String?) {
        watchID = id
        session.stateDirectory = id.map { stateDirectory + "/watches/" + $0 } ?? stateDirectory
    }
}
