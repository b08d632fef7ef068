import Foundation
import InMemoryRelay
import Primitives
import RelayProtocol
import Synchronization
import TestClock
import WatchApp

/// A headless watch in this process: its state directory, its manual widget clock and its
/// event log survive stop/start (the same watch, restarted). Stopping is a clean shutdown.
actor SimulatedWatch: ScenarioWatch {
    nonisolated let name: String
    let directory: String
    let clock: ManualClock
    /// The in-memory relay to take sessions from, or nil for a live session to `relayURL`.
    let memory: InMemoryRelay?
    nonisolated let log = WatchEventLog()
    private var watch: HeadlessWatch?
    private var pump: Task<Void, Never>?
    /// Events of the current incarnation moved into ``log``.
    private var pumped = EventCount()
    private var rules = WidgetRules()
    private var foreground = true
    /// The profile screen from the last `open`.
    private(set) var lastProfile: ProfileView?

    init(name: String, directory: String, memory: InMemoryRelay? = nil) {
        self.name = name
        self.directory = directory
        self.memory = memory
        clock = ManualClock(Timestamp(millisecondsSinceEpoch: 1_796_000_000_000))
    }

    var isRunning: Bool { watch != nil }
    var processes: [ChildProcessRecord] { [] }

    func start(relayURL: String, budget: Int?, foreground: Bool?) async throws {
        guard watch == nil else { return }
        let first = !FileManager.default.fileExists(atPath: directory)
        if let budget { rules = WidgetRules(smartStackBudget: budget, watchFaceBudget: budget) }
        if let foreground { self.foreground = foreground }
        let session = await memory?.session(role: .watch, deviceName: name, foreground: self.foreground)
        let w = try HeadlessWatch(
            relayURL: relayURL, stateDirectory: directory, deviceName: name, foreground: self.foreground, rules: rules,
            clock: .manual(clock), session: session, reconnectBackoff: ScenarioRunner.reconnectBackoff)
        let log = log
        let count = EventCount()
        pumped = count
        pump = Task {
            for await event in w.events {
                log.append(WatchObservation(event))
                count.increment()
            }
            count.finish()
        }
        watch = w
        try await w.start()
        await settle()
        if first {
            try await advance(seconds: 1)
            log.markNow()
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

    /// Uninstalls the watch app (the relay is told, the watch's store emptied); the watch stops.
    func uninstall() async throws {
        try await running().uninstall()
        await pump?.value
        pump = nil
        watch = nil
    }

    private func running() throws -> HeadlessWatch {
        guard let watch else { throw StepFailure(expected: "watch '\(name)' running", seen: "stopped") }
        return watch
    }

    /// Returns once every event the watch published so far is in ``log``.
    private func settle() async {
        guard let watch else { return }
        await pumped.wait(until: await watch.publishedEvents)
    }

    func pair(code: String) async throws {
        try await running().pair(code: code)
        await settle()
    }

    func delete(_ login: String) async throws {
        try await running().delete(login)
        await settle()
    }

    func open(_ login: String) async throws -> ProfileView? {
        let p = try await running().open(login).map(ProfileView.init)
        lastProfile = p
        await settle()
        return p
    }

    func select(_ login: String?) async throws {
        try await running().select(login)
    }

    func setForeground(_ on: Bool) async throws {
        foreground = on
        try await running().setForeground(on)
        await settle()
    }

    /// Advances the widget clock and runs the reloads that became due.
    func advance(seconds: Double) async throws {
        clock.advance(by: .milliseconds(Int64((seconds * 1000).rounded())))
        try await running().flush()
        await settle()
    }

    func caughtUp() async throws {
        _ = try await running().caughtUpIfConnected()
        await settle()
    }

    func view() async throws -> WatchView {
        WatchView(try await running().current)
    }
}

/// How many events a consumer handled, so a caller can wait until it handled a given number
/// (the in-process simulated watch, and the `watch --machine` printer).
public final class EventCount: Sendable {
    private struct State {
        var count = 0
        var finished = false
        var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedState(State())

    public init() {}

    /// One more event handled.
    public func increment() {
        let due = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.count += 1
            let count = s.count
            let due = s.waiters.filter { $0.target <= count }.map(\.continuation)
            s.waiters.removeAll { $0.target <= count }
            return due
        }
        for c in due { c.resume() }
    }

    /// The consumer ended: nobody waits any more.
    public func finish() {
        let all = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.finished = true
            defer { s.waiters = [] }
            return s.waiters.map(\.continuation)
        }
        for c in all { c.resume() }
    }

    /// Returns once `target` events were handled (or the consumer ended).
    public func wait(until target: Int) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.finished || s.count >= target { return true }
                s.waiters.append((target, c))
                return false
            }
            if now { c.resume() }
        }
    }
}
