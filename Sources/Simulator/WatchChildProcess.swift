import Foundation
import RelayProtocol

/// A watch as a child process: `watchrelay watch --machine --manual-clock MS` on the watch's
/// state directory, driven over the line protocol (``MachineChannel``); its event lines go to
/// ``log``. ``stop()`` is a SIGKILL; the next start runs a new process on the same state, its
/// widget clock resumed where the last one was.
actor WatchChildProcess: ScenarioWatch {
    nonisolated let name: String
    nonisolated let log = WatchEventLog()
    let directory: String
    let executable: String
    private var channel: MachineChannel?
    /// The widget clock, in milliseconds since 1970 (the in-process watches' start instant).
    private var clockMs: Int64 = 1_796_000_000_000
    private var budget: Int?
    private var foreground = true
    private(set) var lastProfile: ProfileView?
    private(set) var processes: [ChildProcessRecord] = []

    init(name: String, directory: String, executable: String) {
        self.name = name
        self.directory = directory
        self.executable = executable
    }

    var isRunning: Bool { channel.map { $0.process.isRunning } ?? false }

    func start(relayURL: String, budget: Int?, foreground: Bool?) async throws {
        if let channel, channel.process.isRunning { return }
        await stop()
        let first = !FileManager.default.fileExists(atPath: directory)
        if let budget { self.budget = budget }
        if let foreground { self.foreground = foreground }
        var arguments = [
            "watch", "--machine", "--relay", relayURL, "--state", directory, "--name", name,
            "--manual-clock", String(clockMs), "--log-level", "warn", "--reconnect-backoff", ScenarioRunner.reconnectBackoffArgument,
        ]
        if let budget = self.budget { arguments += ["--budget", String(budget)] }
        if !self.foreground { arguments.append("--background") }
        let log = log
        channel = try await MachineChannel.start(
            name: name, executable: executable, arguments: arguments, logPath: directory + ".stderr.log",
            onEvent: { event, fields in
                if let observation = WatchObservation(event: event, fields) { log.append(observation) }
            })
        // The process keeps reconnecting, as the in-process watch does after its start threw.
        if channel?.ready["activated"] == .bool(false) {
            throw StepFailure(
                expected: "watch '\(name)' to activate", seen: "no welcome from the relay within the request timeout")
        }
        if first {
            try await advance(seconds: 1)
            log.markNow()
        }
    }

    /// SIGKILL; the state directory, the clock and the log stay.
    func stop() async {
        guard let channel else { return }
        await channel.kill()
        processes.append(channel.process.record)
        self.channel = nil
    }

    /// `uninstall`; the child exits by itself once the relay was told and its store emptied.
    func uninstall() async throws {
        _ = try await running().request("uninstall")
        try await channel?.awaitExit()
        await stop()
    }

    private func running() throws -> MachineChannel {
        try MachineChannel.running(channel, "watch '\(name)'")
    }

    func pair(code: String) async throws { _ = try await running().request("pair", [code]) }
    func delete(_ login: String) async throws { _ = try await running().request("delete", [login]) }

    func open(_ login: String) async throws -> ProfileView? {
        let answer = try await running().request("open", [login])
        let profile = try answer["profile"].flatMap { $0 == .null ? nil : try ProfileView(json: $0) }
        lastProfile = profile
        return profile
    }

    func select(_ login: String?) async throws { _ = try await running().request("select", [login ?? "none"]) }

    func setForeground(_ on: Bool) async throws {
        _ = try await running().request(on ? "foreground" : "background")
        foreground = on
    }

    func advance(seconds: Double) async throws {
        let answer = try await running().request("advance", [String(seconds)])
        if let now = answer["nowMs"]?.intValue { clockMs = now }
    }

    func caughtUp() async throws { _ = try await running().request("sync") }

    func view() async throws -> WatchView {
        let answer = try await running().request("state")
        return try WatchView(json: answer["state"] ?? .null)
    }
}
