import Foundation
import RelayProtocol
import WatchApp

/// A headless watch in a scenario: its state directory, its manual widget clock and its
/// event log survive stop/start (the same watch, restarted).
actor SimulatedWatch {
    let name: String
    let directory: String
    let clock: ManualClock
    let log = WatchEventLog()
    private(set) var watch: HeadlessWatch?
    private var pump: Task<Void, Never>?
    private var rules = WidgetRules()
    private var foreground = true
    /// The profile screen from the last `open`.
    private(set) var lastProfile: ProfileDetail?

    init(name: String, directory: String) {
        self.name = name
        self.directory = directory
        clock = ManualClock(Timestamp(millisecondsSinceEpoch: 1_796_000_000_000))
    }

    var isRunning: Bool { watch != nil }

    /// Opens the state and connects. The first start places the widgets (their free first
    /// reloads) and marks the log, so a scenario starts clean.
    func start(relayURL: String, budget: Int?, foreground: Bool?) async throws {
        guard watch == nil else { return }
        let first = !FileManager.default.fileExists(atPath: directory)
        if let budget { rules = WidgetRules(smartStackBudget: budget, watchFaceBudget: budget) }
        if let foreground { self.foreground = foreground }
        let w = try HeadlessWatch(
            relayURL: relayURL, stateDirectory: directory, deviceName: name, foreground: self.foreground, rules: rules,
            clock: .manual(clock))
        let log = log
        pump = Task { await log.pump(w.events) }
        watch = w
        try await w.start()
        if first {
            clock.advance(by: .seconds(1))
            await w.flush()
            try? await Task.sleep(for: .milliseconds(30))
            await log.markNow()
        }
    }

    /// Closes the session and the loops; the state directory stays.
    func stop() async {
        guard let w = watch else { return }
        await w.stop()
        await pump?.value
        pump = nil
        watch = nil
    }

    func running() throws -> HeadlessWatch {
        guard let watch else { throw StepFailure(expected: "watch '\(name)' running", seen: "stopped") }
        return watch
    }

    /// `open <login>`: the screen once loaded, failed or offline.
    func open(_ login: String) async throws -> ProfileDetail? {
        let p = try await running().open(login)
        lastProfile = p
        return p
    }

    func setForeground(_ on: Bool) async throws {
        foreground = on
        try await running().setForeground(on)
    }

    /// Advances the widget clock; the watch's loop flushes what became due.
    func advance(seconds: Double) async {
        clock.advance(by: .milliseconds(Int64(seconds * 1000)))
        // Let the widget loop (10 ms polling) run its pass.
        try? await Task.sleep(for: .milliseconds(40))
    }

    /// The state now (running or not, the stored state of the last run).
    func current() async -> WatchAppState? {
        await watch?.current
    }
}
