import Foundation
import Primitives
import RelayConsole

/// A phone in a scenario: a ``PhoneCompanion`` in this process (``SimulatedPhone``) or
/// `watchrelay phone --machine` as a child process (``PhoneChildProcess``). The runner drives
/// both the same way; its state directory survives ``stop()``, so the next ``start(relayURL:githubURL:)``
/// is the same phone restarted.
protocol ScenarioPhone: Actor {
    nonisolated var name: String { get }
    var isRunning: Bool { get }
    /// Opens the state and connects; returns once the session activated (or timed out).
    /// `reposMaxAge` (seconds), once given, holds for later starts.
    func start(relayURL: String, githubURL: URL, reposMaxAge: Double?) async throws
    /// In-process: a clean shutdown. A child: SIGKILL. The state directory stays.
    func stop() async
    /// The iPhone app is uninstalled (`uninstall`: the relay is told, PROTOCOL.md §7.1) and the
    /// phone stops (a child exits by itself); its state stays, and the next start is the app
    /// installed again.
    func uninstall() async throws
    /// What `status` says of the watch app and the last push.
    func status() async throws -> PhoneSyncStatus
    /// Asks the relay for a pairing code to type on the watch.
    func pairingCode() async throws -> String
    /// Adds a favorite; returns once the relay took the snapshot or it was queued offline, with
    /// the answer's `sync` (`pushed`, `partial`, `queued`, `unchanged`).
    func add(_ login: String) async throws -> String
    func remove(_ login: String) async throws -> String
    func move(_ login: String, to index: Int) async throws -> String
    /// Refreshes every favorite from GitHub.
    func refresh() async throws
    /// The favorites' logins, in order.
    func favorites() async throws -> [String]
    /// The watch the phone talks to from its next start: one relay pair per watch, kept in
    /// `<state>/watches/<watch>` (PROTOCOL.md §6.5); the favorites stay the phone's. `nil`: the
    /// phone's first watch, whose pair is the top-level session state (no `--watch`).
    func useWatch(_ watch: String?)
    /// The watch given to ``useWatch(_:)`` (nil: the first watch's top-level session).
    var activeWatch: String? { get }
    /// The child processes this phone ran (none in-process).
    var processes: [ChildProcessRecord] { get }
}

/// A watch in a scenario: a ``HeadlessWatch`` in this process (``SimulatedWatch``) or
/// `watchrelay watch --machine --manual-clock` as a child process (``WatchChildProcess``).
/// Its state directory, its widget clock (manual, moved only by ``advance(seconds:)``) and its
/// event log survive ``stop()``.
///
/// Every command returns after the events it caused are in ``log``.
protocol ScenarioWatch: Actor {
    nonisolated var name: String { get }
    /// Every event of every incarnation.
    nonisolated var log: WatchEventLog { get }
    var isRunning: Bool { get }
    /// Opens the state and connects. The first start places the widgets (their free first
    /// reloads) and marks the log. `budget` and `foreground`, once given, hold for later starts.
    func start(relayURL: String, budget: Int?, foreground: Bool?) async throws
    /// In-process: a clean shutdown. A child: SIGKILL. The state directory stays.
    func stop() async
    /// The watch app is uninstalled (`uninstall`: the relay is told, PROTOCOL.md §7.1; the
    /// watch's own store is emptied) and the watch stops (a child exits by itself). The session
    /// state, the widget clock and the log stay: the next start is the app installed again.
    func uninstall() async throws
    func pair(code: String) async throws
    /// Deletes a favorite (durable userInfo); returns once the relay accepted it.
    func delete(_ login: String) async throws
    /// Opens a profile's repo list; returns the screen once loaded, failed or offline.
    func open(_ login: String) async throws -> ProfileView?
    /// The screen of the last ``open(_:)``.
    var lastProfile: ProfileView? { get }
    func select(_ login: String?) async throws
    func setForeground(_ on: Bool) async throws
    /// Moves the widget clock; the reloads that became due run before it returns.
    func advance(seconds: Double) async throws
    /// Returns once the watch handled everything the relay holds for it (its events in
    /// ``log``), so nothing more can arrive on its own; at once when it is not connected.
    func caughtUp() async throws
    /// The widgets and favorites now.
    func view() async throws -> WatchView
    /// The child processes this watch ran (none in-process).
    var processes: [ChildProcessRecord] { get }
}

/// What a phone's `status` says of its watch app and its last push (`expectPhoneStatus`).
struct PhoneSyncStatus: Sendable, Hashable {
    /// False while the watch app is uninstalled (PROTOCOL.md §7.1).
    var watchAppInstalled: Bool
    /// The code of the last push's failure (`watch_app_not_installed`…), nil when it went.
    var pushError: String?
}

/// The relay in a scenario: ``RelayServer`` in this process or `watchrelay serve` as a child,
/// or a cluster of two nodes on one Redis (``ClusterScenarioRelay``).
protocol ScenarioRelay: Sendable {
    /// `ws://127.0.0.1:PORT/v1`: where phones connect.
    var url: String { get }
    /// Where watches connect: ``url``, or another node of a cluster.
    var watchURL: String { get }
    var port: Int { get }
    /// Every port it listens on (a cluster: each node's), kept across restarts.
    var ports: [Int] { get }
    /// In-process: a clean shutdown. A child: SIGKILL.
    func stop() async
    /// Returns once the relay's counters satisfy `accept` (checked now and after every change)
    /// or `seconds` passed: the counters that did, or nil and the last ones seen.
    func awaitCounters(
        within seconds: Double, consoleToken: String, _ accept: @escaping @Sendable (RelayCounters) -> Bool
    ) async throws -> (matched: RelayCounters?, last: RelayCounters?)
    /// The port of the console whose `state` this is (on a cluster, the node it names).
    func consolePort(of state: ConsoleJSON.State) -> Int
    /// The child processes, if it runs as such.
    var records: [ChildProcessRecord] { get }
}

extension ScenarioRelay {
    var watchURL: String { url }
    var ports: [Int] { [port] }
    func consolePort(of state: ConsoleJSON.State) -> Int { port }

    /// The consoles' `state` events of every port, those of a node that does not lead left
    /// out (an edge's console shows no devices): what the relay's core holds, as it changes.
    func consoleStates(token: String) throws -> ConsoleStateStream {
        try ConsoleStateStream.open(ports: ports, token: token)
    }

    /// Over sockets: from the console's `state` events (the scenario relays run with the console),
    /// none taken before the call unless it is the relay's latest (``ConsoleCounterWait``).
    func awaitCounters(
        within seconds: Double, consoleToken: String, _ accept: @escaping @Sendable (RelayCounters) -> Bool
    ) async throws -> (matched: RelayCounters?, last: RelayCounters?) {
        let stream = try consoleStates(token: consoleToken)
        defer { stream.close() }
        return await ConsoleCounterWait.run(stream.states, within: seconds, since: Clock.system.milliseconds(), accept)
    }
}

extension ConsoleJSON.State {
    /// Whether this console shows the relay's core: a single relay's always, a cluster
    /// node's while it leads.
    var isLeading: Bool { node?.leads ?? true }
}

/// One child process a scenario ran (`simulate --processes`): which actor, its PID, and how it
/// ended (`killed by signal 9` after a `stop`, `kill` or the end of the run).
public struct ChildProcessRecord: Sendable, Hashable {
    /// The actor's name (`relay`, `phone`, `watch`…).
    public var actor: String
    /// The process ID.
    public var pid: Int32
    /// How it ended, e.g. `killed by signal 9`; nil if it was still running when recorded.
    public var termination: String?
    /// The cluster node it ran as (`a`, `b`), for a relay of `simulate --cluster --processes`.
    public var node: String?
    /// When it ended (nil: still running), to list a run's processes in that order.
    var endedAt: ContinuousClock.Instant?

    /// Whether it ended by SIGKILL.
    public var wasKilled: Bool { termination == "killed by signal \(SIGKILL)" }

    public init(actor: String, pid: Int32, termination: String?, node: String? = nil) {
        self.actor = actor
        self.pid = pid
        self.termination = termination
        self.node = node
    }
}

extension ChildProcess {
    /// What became of this process, for the run's report.
    var record: ChildProcessRecord {
        var record = ChildProcessRecord(actor: name, pid: pid, termination: termination)
        record.endedAt = endedAt
        return record
    }
}
