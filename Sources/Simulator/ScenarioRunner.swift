import Foundation
import GitHubAPI
import RelayServer

/// Runs scenarios against real components over loopback: the relay, the fixture GitHub
/// server, phone companions and headless watches, all in this process.
///
/// Each run gets a fresh temporary directory with one state directory per actor; stopping
/// an actor keeps its directory, so starting it again is the same device restarted. The
/// relay and the GitHub stub keep their first port across restarts.
public actor ScenarioRunner {
    /// Where the fixture GitHub users and repos are (`Simulator/fixtures/github`).
    public nonisolated let fixturesDirectory: String
    /// `watchrelay` to run the relay as a child process (`serve`), or `nil` for in-process.
    public nonisolated let relayExecutable: String?
    /// Called with each step's result as it finishes (for a live report).
    private let onStep: @Sendable (StepResult) -> Void

    var directory = ""
    var relay: RelayServer?
    var relayChild: RelayChildProcess?
    var relayPort = 0
    var relayURL = ""
    var github: GitHubStubServer?
    var githubPort = 0
    var phones: [String: SimulatedPhone] = [:]
    var watches: [String: SimulatedWatch] = [:]

    /// A runner using the fixtures in `fixturesDirectory`.
    /// - Parameters:
    ///   - relayExecutable: a `watchrelay` binary: the relay then runs as a child process
    ///     (`watchrelay serve`) and stopping it is a SIGKILL; phones and watches stay in-process.
    ///   - onStep: called with each step's result as it finishes.
    public init(
        fixturesDirectory: String, relayExecutable: String? = nil,
        onStep: @escaping @Sendable (StepResult) -> Void = { _ in }
    ) {
        self.fixturesDirectory = fixturesDirectory
        self.relayExecutable = relayExecutable
        self.onStep = onStep
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
        directory = NSTemporaryDirectory() + "watchrelay-sim-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var results: [StepResult] = []
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
        await tearDown()
        return ScenarioResult(name: scenario.name, file: file, steps: results, milliseconds: Self.ms(since: began))
    }

    /// Stops every actor and removes the run's directory.
    func tearDown() async {
        for w in watches.values { await w.stop() }
        for p in phones.values { await p.stop() }
        await stopRelay()
        await github?.stop()
        github = nil
        watches = [:]
        phones = [:]
        relayPort = 0
        githubPort = 0
        try? FileManager.default.removeItem(atPath: directory)
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
        if let e = s.expectError { parts.append("(expect error \(e))") }
        return parts.joined(separator: " ")
    }

    // MARK: - Relay and GitHub

    func startRelay() async throws {
        guard relay == nil, relayChild == nil else { return }
        if let relayExecutable {
            let child = try RelayChildProcess.start(
                executable: relayExecutable, port: relayPort, database: directory + "/relay.db")
            relayChild = child
            relayPort = child.port
            relayURL = child.url
            return
        }
        var c = RelayServerConfiguration()
        c.port = relayPort
        c.databasePath = directory + "/relay.db"
        c.synchronous = .normal
        c.relay.limits.replyTimeoutMs = 1500
        c.relay.pairingCodeTTLms = 1500
        let server = try await RelayServer.start(c, log: .silent)
        relay = server
        relayPort = server.port
        relayURL = server.url
    }

    /// In-process: a clean shutdown. A child process: SIGKILL.
    func stopRelay() async {
        await relay?.shutdown()
        relay = nil
        relayChild?.kill9()
        relayChild = nil
    }

    func startGitHub() async throws {
        guard github == nil else { return }
        let stub = try GitHubStubServer.start(fixturesDirectory: fixturesDirectory, port: githubPort)
        github = stub
        githubPort = stub.port
    }

    func stopGitHub() async {
        await github?.stop()
        github = nil
    }

    /// The running relay's counters (in-process, or from the child's `/metrics`).
    func relayStats() async throws -> (connections: Int, pairs: Int, queued: Int) {
        if let relay { return await relay.stats }
        if let relayChild { return try await relayChild.stats() }
        throw StepFailure(expected: "the relay running", seen: "stopped")
    }

    func runningGitHub() throws -> GitHubStubServer {
        guard let github else { throw StepFailure(expected: "github running", seen: "stopped") }
        return github
    }
}
