import Foundation

/// A phone as a child process: `watchrelay phone --machine` on the phone's state directory,
/// driven over the line protocol (``MachineChannel``). ``stop()`` is a SIGKILL; the next
/// ``start(relayURL:githubURL:)`` runs a new process on the same state (SQLite stores).
actor PhoneChildProcess: ScenarioPhone {
    nonisolated let name: String
    let directory: String
    let executable: String
    private var channel: MachineChannel?
    private(set) var processes: [ChildProcessRecord] = []
    private var watch: String?
    /// The `reposMaxAge` a start gave (seconds), held for later starts.
    private var reposMaxAge: Double?

    init(name: String, directory: String, executable: String) {
        self.name = name
        self.directory = directory
        self.executable = executable
    }

    var isRunning: Bool { channel.map { $0.process.isRunning } ?? false }

    func start(relayURL: String, githubURL: URL, reposMaxAge: Double?) async throws {
        if let channel, channel.process.isRunning { return }
        await stop()
        if let reposMaxAge { self.reposMaxAge = reposMaxAge }
        // The simulator's settings of an in-process phone (SimulatedPhone), as options.
        var arguments = [
            "phone", "--machine", "--relay", relayURL, "--state", directory, "--name", name,
            "--github", githubURL.absoluteString, "--refresh-interval", "3600", "--refresh-throttle", "0",
            "--external-poll-s", "3600", "--reconnect-backoff", ScenarioRunner.reconnectBackoffArgument, "--request-timeout-s", "3",
            "--log-level", "warn",
        ]
        if let watch { arguments += ["--watch", watch] }
        if let reposMaxAge { arguments += ["--repos-max-age", "\(reposMaxAge)"] }
        channel = try await MachineChannel.start(
            name: name, executable: executable, arguments: arguments, logPath: directory + ".stderr.log",
            onEvent: { _, _ in })
    }

    /// SIGKILL; the state directory stays.
    func stop() async {
        guard let channel else { return }
        await channel.kill()
        processes.append(channel.process.record)
        self.channel = nil
    }

    /// `uninstall`; the child exits by itself once the relay was told.
    func uninstall() async throws {
        _ = try await running().request("uninstall")
        try await channel?.awaitExit()
        await stop()
    }

    func status() async throws -> PhoneSyncStatus {
        let answer = try await running().request("status")
        return PhoneSyncStatus(
            watchAppInstalled: answer["watchAppInstalled"]?.boolValue ?? true,
            pushError: answer["pushError"]?.objectValue?["code"]?.stringValue)
    }

    private func running() throws -> MachineChannel {
        try MachineChannel.running(channel, "phone '\(name)'")
    }

    func pairingCode() async throws -> String {
        let answer = try await running().request("pair")
        guard let code = answer["code"]?.stringValue else {
            throw StepFailure(expected: "a pairing code from '\(name)'", seen: "\(answer)")
        }
        return code
    }

    func add(_ login: String) async throws -> String { try await change("add", [login]) }
    func remove(_ login: String) async throws -> String { try await change("remove", [login]) }
    func move(_ login: String, to index: Int) async throws -> String { try await change("move", [login, String(index)]) }

    /// A favorites change's `sync`.
    private func change(_ command: String, _ args: [String]) async throws -> String {
        try await running().request(command, args)["sync"]?.stringValue ?? ""
    }
    func refresh() async throws { _ = try await running().request("refresh") }

    func useWatch(_ watch: String?) { self.watch = watch }
    var activeWatch: String? { watch }

    func favorites() async throws -> [String] {
        let answer = try await running().request("list")
        return (answer["logins"]?.arrayValue ?? []).compactMap(\.stringValue)
    }
}
