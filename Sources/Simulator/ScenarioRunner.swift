import Foundation
import GitHubAPI
import InMemoryRelay
import RelayProtocol

/// Runs scenarios against real components over loopback: the relay, the fixture GitHub
/// server, phone companions and headless watches — in this process, or (with a
/// `childExecutable`) the relay, every phone and every watch as `watchrelay` child processes.
///
/// Each run gets a fresh temporary directory with one state directory per actor; stopping
/// an actor keeps its directory, so starting it again is the same device restarted (for a
/// child process: a new process on the same SQLite stores after a SIGKILL). The relay and
/// the GitHub stub keep their first port across restarts. The GitHub stub always runs in
/// this process: it is the test double whose faults the steps set.
///
/// ``inMemory(fixturesDirectory:onStep:)`` runs the same steps with no WebSocket at all: the
/// relay is an ``InMemoryRelay`` and the phones and watches take their sessions from it (see
/// `ScenarioRunner+Memory.swift` for what that mode cannot stand for).
public actor ScenarioRunner {
    /// How long a scenario's relay waits for a reply before `reply_timeout` (every mode): short,
    /// so a scenario of a swallowed reply stays quick, and long enough for a phone that fetches
    /// from the fixture GitHub while a loaded CI machine runs every mode at once (1.5 s was
    /// not: a first `open` timed out in a fresh-clone run).
    static let replyTimeoutMilliseconds = 3_000

    /// Seconds between a scenario device's reconnect attempts (phones and watches, in process
    /// and as children): a restarted relay is back within the steps' waits. The sessions'
    /// default climbs to 5 s, and a watch child whose relay took 4 s to come back slept past a
    /// 4 s `wait` (a fresh-clone run of `relay-restart`).
    static let reconnectBackoff = [0.05, 0.1, 0.2]
    static var reconnectBackoffArgument: String { reconnectBackoff.map { String($0) }.joined(separator: ",") }

    /// Where the fixture GitHub users and repos are (`Simulator/fixtures/github`); nil: the
    /// catalog compiled into the binary (the same files, so a copied binary runs scenarios).
    public nonisolated let fixturesDirectory: String?
    /// `watchrelay` to run the relay, phones and watches as child processes, or `nil` for in-process.
    public nonisolated let childExecutable: String?
    /// Whether the relay is in memory (no sockets) rather than a ``RelayServer``.
    public nonisolated let isInMemory: Bool
    /// Whether the relay is two nodes on one redis-server, phones on one and watches on the
    /// other (``ClusterScenarioRelay``).
    public nonisolated let isCluster: Bool
    /// Called with each step's result as it finishes (for a live report).
    private let onStep: @Sendable (StepResult) -> Void

    var directory = ""
    var relay: (any ScenarioRelay)?
    /// The ports of the run's first relay (each node's, on a cluster), kept across restarts.
    var relayPorts: [Int] = []
    var relayURL = ""
    var relayWatchURL = ""
    /// The `contextBytes` the running relay was started with (nil: the default).
    var relayContextBytes: Int?
    /// On a cluster: its store, up for the whole run.
    var clusterRedis: RedisChildProcess?
    var github: GitHubStubServer?
    var githubPort = 0
    var phones: [String: any ScenarioPhone] = [:]
    var watches: [String: any ScenarioWatch] = [:]
    /// Per phone, the watch actor it paired before any `switchWatch` (its top-level session):
    /// a later `switchWatch` back to that actor goes back to that pair.
    var firstWatches: [String: String] = [:]
    /// The child processes of the current run that ended (relay restarts).
    var relayRecords: [ChildProcessRecord] = []
    /// The console token of the run's relay: it always runs with its console, whose events the
    /// runner awaits (`expectRelay`, a device to set a fault on) and whose API sets link faults.
    let consoleToken = "scenario-" + UUID().uuidString
    /// In memory: the run's relay (kept while it is stopped; its clock follows the wall).
    var memoryRelay: InMemoryRelay?

    /// A runner using the fixtures in `fixturesDirectory` (nil: the embedded catalog).
    /// - Parameters:
    ///   - childExecutable: a `watchrelay` binary: the relay (`serve`), phones (`phone --machine`)
    ///     and watches (`watch --machine`) then run as child processes, and stopping one is a
    ///     SIGKILL; `nil` runs them in this process.
    ///   - cluster: run the relay as two nodes on one redis-server (`/usr/bin/redis-server`),
    ///     phones on one and watches on the other.
    ///   - onStep: called with each step's result as it finishes.
    public init(
        fixturesDirectory: String?, childExecutable: String? = nil, cluster: Bool = false,
        onStep: @escaping @Sendable (StepResult) -> Void = { _ in }
    ) {
        self.init(
            fixturesDirectory: fixturesDirectory, childExecutable: childExecutable, inMemory: false, cluster: cluster,
            onStep: onStep)
    }

    private init(
        fixturesDirectory: String?, childExecutable: String?, inMemory: Bool, cluster: Bool,
        onStep: @escaping @Sendable (StepResult) -> Void
    ) {
        self.fixturesDirectory = fixturesDirectory
        self.childExecutable = childExecutable
        isInMemory = inMemory
        isCluster = cluster
        self.onStep = onStep
    }

    /// A runner whose relay is an ``InMemoryRelay``: phones and watches in this process on
    /// in-memory sessions, no WebSocket; the GitHub stub is still real HTTP on loopback.
    public static func inMemory(
        fixturesDirectory: String?, onStep: @escaping @Sendable (StepResult) -> Void = { _ in }
    ) -> ScenarioRunner {
        ScenarioRunner(fixturesDirectory: fixturesDirectory, childExecutable: nil, inMemory: true, cluster: false, onStep: onStep)
    }

    /// Finds `Simulator/fixtures/github` from `start` or one of its parents (a repository checkout).
    public static func findFixtures(from start: String = FileManager.default.currentDirectoryPath) -> String? {
        var dir = URL(fileURLWithPath: start).standardizedFileURL
        for _ in 0..<8 {
            let candidate = dir.appendingPathComponent("Simulator/fixtures/github").path
            if FileManager.default.fileExists(atPath: candidate + "/users") { return candidate }
            dir.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `scenario` from a clean state to its end or its first failing step, then stops
    /// every actor and removes the run's directory.
    public func run(_ scenario: Scenario, file: String? = nil) async -> ScenarioResult {
        let began = ContinuousClock.now
        if isInMemory, let reason = Self.memoryCannotRun(scenario) {
            var result = ScenarioResult(name: scenario.name, file: file, steps: [], milliseconds: 0)
            result.skipped = reason
            return result
        }
        directory = NSTemporaryDirectory() + "watchrelay-sim-" + UUID().uuidString
        do {
            try RunDirectories.create(directory)
        } catch {
            // The machine's error, not the scenario's: every step would fail on it (the relay's
            // said "pass another --db", which simulate has not), and the run exits 1, not 3.
            let step = StepResult(index: 0, name: "run directory", passed: false, milliseconds: 0, failure: error)
            return ScenarioResult(name: scenario.name, file: file, steps: [step], milliseconds: 0)
        }
        var results: [StepResult] = []
        if isInMemory { await prepareMemoryRelay() }
        for (i, step) in scenario.steps.enumerated() {
            let t0 = ContinuousClock.now
            var failure: StepFailure?
            do {
                try await perform(step)
            } catch let f as StepFailure {
                failure = f
            } catch {
                failure = StepFailure(expected: "the step to succeed", seen: "error: \(error)")
            }
            let result = StepResult(
                index: i + 1, name: Self.describe(step), passed: failure == nil, milliseconds: Self.ms(since: t0),
                failure: failure)
            results.append(result)
            onStep(result)
            if failure != nil { break }
        }
        let processes = await tearDown()
        var result = ScenarioResult(name: scenario.name, file: file, steps: results, milliseconds: Self.ms(since: began))
        result.processes = processes
        return result
    }

    /// Stops every actor (SIGKILL for child processes) and removes the run's directory;
    /// returns the child processes the run started, in the order they ended.
    func tearDown() async -> [ChildProcessRecord] {
        for w in watches.values { await w.stop() }
        for p in phones.values { await p.stop() }
        await stopRelay()
        await clusterRedis?.stop()
        var records = relayRecords + (clusterRedis.map { [$0.record] } ?? [])
        clusterRedis = nil
        await endMemoryRelay()
        await github?.stop()
        for p in phones.values { records += await p.processes }
        for w in watches.values { records += await w.processes }
        // In the order they ended (one still running, which a cancelled wait can leave, last).
        records.sort { a, b in
            switch (a.endedAt, b.endedAt) {
            case (let x?, let y?): x < y
            case (_?, nil): true
            default: false
            }
        }
        github = nil
        watches = [:]
        phones = [:]
        firstWatches = [:]
        relayRecords = []
        relayPorts = []
        relayContextBytes = nil
        githubPort = 0
        RunDirectories.remove(directory)
        return records
    }

    static func ms(since t0: ContinuousClock.Instant) -> Int {
        let d = ContinuousClock.now - t0
        return Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The step in words, e.g. `add phone octocat` or `wait watch snapshot 2`.
    static func describe(_ s: ScenarioStep) -> String {
        var parts = [s.action]
        if let a = s.actor { parts.append(a) }
        if s.action == "pair" { parts.append("\(s.phone ?? "phone")+\(s.watch ?? "watch")") }
        if let p = s.phone, s.action != "pair" { parts.append(p) }
        if let w = s.watch, s.action != "pair" { parts.append(w) }
        if let e = s.event { parts.append(e) }
        if let f = s.fault { parts.append(f) }
        if let l = s.login { parts.append(l) }
        if let i = s.index { parts.append("to \(i)") }
        if let r = s.revision { parts.append("\(r)") }
        if let sec = s.seconds { parts.append("\(sec)s") }
        if let w = s.widget { parts.append(w) }
        if let c = s.code { parts.append("code \(c)") }
        if let status = s.status { parts.append("\(status)") }
        if let bytes = s.contextBytes { parts.append("contextBytes \(bytes)") }
        if let e = s.expectError { parts.append("(expect error \(e))") }
        return parts.joined(separator: " ")
    }

    // MARK: - Relay and GitHub

    /// Starts the run's relay (its first port and database again after a stop) announcing
    /// `contextBytes` (nil: the default), as `serve --context-bytes` does; a relay already
    /// running stays as it is, so it must not be asked for other limits.
    func startRelay(contextBytes: Int? = nil) async throws {
        guard relay == nil else {
            if let contextBytes, contextBytes != relayContextBytes {
                throw StepFailure(
                    expected: "the relay stopped, to start it with contextBytes \(contextBytes) (restart it)",
                    seen: "the relay running with contextBytes \(relayContextBytes.map(String.init) ?? "default")")
            }
            return
        }
        let database = directory + "/relay.db"
        let started: any ScenarioRelay
        let port = relayPorts.first ?? 0
        do {
            started = try await startRelay(database: database, port: port, contextBytes: contextBytes)
        } catch let failure as RelayStartFailure {
            relayRecords += failure.records
            throw failure.error
        }
        relay = started
        relayContextBytes = contextBytes
        relayPorts = started.ports
        relayURL = started.url
        relayWatchURL = started.watchURL
    }

    /// The relay of the run's mode, started.
    private func startRelay(database: String, port: Int, contextBytes: Int?) async throws -> any ScenarioRelay {
        let started: any ScenarioRelay
        if isInMemory {
            started = try await startMemoryRelay(contextBytes: contextBytes)
        } else if isCluster {
            if clusterRedis == nil { clusterRedis = try await RedisChildProcess.start(directory: directory) }
            started = try await ClusterScenarioRelay.start(
                redisURL: clusterRedis!.url, ports: relayPorts, database: database, consoleToken: consoleToken,
                contextBytes: contextBytes, executable: childExecutable)
        } else if let childExecutable {
            started = try await RelayChildProcess.start(
                executable: childExecutable, port: port, database: database,
                consoleToken: consoleToken, contextBytes: contextBytes)
        } else {
            started = try await InProcessRelay.start(
                port: port, database: database, consoleToken: consoleToken, contextBytes: contextBytes)
        }
        return started
    }

    /// The limits of a scenario's relay: the protocol's, with the scenarios' short reply
    /// timeout and `contextBytes` when one is given (every mode: `serve` gets them as flags).
    static func relayLimits(contextBytes: Int?) -> Limits {
        var limits = Limits.default
        limits.replyTimeoutMs = replyTimeoutMilliseconds
        if let contextBytes { limits.contextBytes = contextBytes }
        return limits
    }

    /// In-process: a clean shutdown. A child process: SIGKILL.
    func stopRelay() async {
        guard let relay else { return }
        await relay.stop()
        relayRecords += relay.records
        self.relay = nil
    }

    func startGitHub() async throws {
        guard github == nil else { return }
        let catalog = try fixturesDirectory.map { try GitHubFixtureCatalog.load(directory: $0) } ?? .embedded()
        let stub = try GitHubStubServer.start(catalog: catalog, port: githubPort)
        github = stub
        githubPort = stub.port
    }

    func stopGitHub() async {
        await github?.stop()
        github = nil
    }

    func runningGitHub() throws -> GitHubStubServer {
        guard let github else { throw StepFailure(expected: "github running", seen: "stopped") }
        return github
    }
}
