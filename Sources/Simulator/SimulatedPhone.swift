import Foundation
import GitHubAPI
import InMemoryRelay
import PhoneApp

/// A phone companion in this process: its state directory survives stop/start (the same
/// phone, restarted). A stopped companion cannot start again, so each start makes a new
/// ``PhoneCompanion`` over the same state. Stopping is a clean shutdown, not a crash.
actor SimulatedPhone: ScenarioPhone {
    nonisolated let name: String
    let directory: String
    /// The in-memory relay to take sessions from, or nil for a live session to `relayURL`.
    let memory: InMemoryRelay?
    private var phone: PhoneCompanion?
    private var drains: [Task<Void, Never>] = []
    private var watch: String?
    /// The `reposMaxAge` a start gave (seconds), held for later starts.
    private var reposMaxAge: Double?

    init(name: String, directory: String, memory: InMemoryRelay? = nil) {
        self.name = name
        self.directory = directory
        self.memory = memory
    }

    var isRunning: Bool { phone != nil }
    var processes: [ChildProcessRecord] { [] }

    /// Opens the state and connects (returns once activated or timed out).
    func start(relayURL: String, githubURL: URL, reposMaxAge: Double?) async throws {
        guard phone == nil else { return }
        if let reposMaxAge { self.reposMaxAge = reposMaxAge }
        var c = PhoneConfiguration(relayURL: relayURL, stateDirectory: directory, deviceName: name)
        if let seconds = self.reposMaxAge { c.reposMaxAge = .milliseconds(Int64((seconds * 1000).rounded())) }
        c.refreshInterval = .seconds(3600)
        c.refreshThrottle = .zero
        c.externalPollInterval = .seconds(3600)
        c.session.backoff = ScenarioRunner.reconnectBackoff
        c.session.requestTimeoutSeconds = 3
        c.useWatch(watch)
        // In memory, one stored session per watch, as the live one keeps one directory per watch.
        let session = await memory?.session(role: .phone, deviceName: name, store: name + "/" + (watch ?? ""))
        let p = try PhoneCompanion(configuration: c, github: .live(baseURL: githubURL), session: session)
        // Nobody reads them in a scenario; drain so they never hold anything up.
        drains = [
            Task { for await _ in p.errors {} },
            Task { for await _ in p.activity {} },
        ]
        phone = p
        await p.start()
    }

    /// Shuts the companion down; the state directory stays.
    func stop() async {
        guard let p = phone else { return }
        await p.shutdown()
        for d in drains { await d.value }
        drains = []
        phone = nil
    }

    /// Uninstalls the iPhone app (the relay is told) and shuts the companion down.
    func uninstall() async throws {
        let p = try running()
        await p.uninstall()
        await stop()
    }

    func status() async throws -> PhoneSyncStatus {
        let s = try await running().status()
        return PhoneSyncStatus(watchAppInstalled: s.watchAppInstalled, pushError: s.pushError?.code)
    }

    private func running() throws -> PhoneCompanion {
        guard let phone else { throw StepFailure(expected: "phone '\(name)' running", seen: "stopped") }
        return phone
    }

    func pairingCode() async throws -> String { try await running().pair().code }
    func add(_ login: String) async throws -> String { try await running().add(login).sync.name }
    func remove(_ login: String) async throws -> String { try await running().remove(login).sync.name }
    func move(_ login: String, to index: Int) async throws -> String { try await running().move(login, to: index).sync.name }
    func refresh() async throws { _ = try await running().refresh() }
    func favorites() async throws -> [String] { try await running().favorites().map(\.login) }
    func useWatch(_ watch: String?) { self.watch = watch }
    var activeWatch: String? { watch }
}
