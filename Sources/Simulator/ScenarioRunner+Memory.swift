import InMemoryRelay
import RelayCore

/// The in-memory mode (``ScenarioRunner/inMemory(fixturesDirectory:onStep:)``): the relay is an
/// ``InMemoryRelay`` (the relay core wired straight to each device's session core, no sockets),
/// phones and watches take their sessions from it, and its clock follows the wall so the steps'
/// timeouts mean what they mean over sockets. The GitHub stub stays a real HTTP server.
///
/// What it cannot stand for: the relay's store (a stopped relay keeps its memory, as a relay
/// that lost nothing durable would), and the link faults the socket relay applies on its
/// service thread (`flap`, `delay`, `drop`, `no-reply`, `slow-writes`): those need the
/// relay over sockets. `unreachable`, `disconnect`, `complication-budget` and `none` work.
extension ScenarioRunner {
    /// Makes the run's in-memory relay, down until a `start relay` step, its clock following
    /// the wall (the scenario relays' short reply timeout and pairing code life, as over sockets).
    func prepareMemoryRelay() async {
        var configuration = RelayConfiguration()
        configuration.limits = Self.relayLimits(contextBytes: nil)
        configuration.pairingCodeTTLms = 1500
        let memory = InMemoryRelay(configuration: configuration)
        await memory.setRunning(false)
        await memory.followRealTime()
        memoryRelay = memory
    }

    /// Brings the in-memory relay up, announcing `contextBytes` (nil: the default) as a relay
    /// restarted with `serve --context-bytes` would, with what it held.
    func startMemoryRelay(contextBytes: Int?) async throws -> any ScenarioRelay {
        guard let memoryRelay else { throw StepFailure(expected: "the in-memory relay made", seen: "none") }
        await memoryRelay.setLimits(Self.relayLimits(contextBytes: contextBytes))
        await memoryRelay.setRunning(true)
        return MemoryScenarioRelay(memory: memoryRelay)
    }

    /// Ends the in-memory relay and its clock's timer (the run is over).
    func endMemoryRelay() async {
        await memoryRelay?.stopFollowingRealTime()
        memoryRelay = nil
    }

    /// The link faults the in-memory relay applies itself; the others happen on the socket
    /// relay's service thread.
    static let memoryLinkFaults = ["unreachable", "disconnect", "complication-budget", "none"]

    /// Why `scenario` cannot run on the in-memory relay (its first step setting a fault only the
    /// socket relay applies), or nil: such a scenario is skipped, not run to that step and failed.
    static func memoryCannotRun(_ scenario: Scenario) -> String? {
        for (i, step) in scenario.steps.enumerated() where step.action == ScenarioAction.linkFault.rawValue {
            let kind = step.fault ?? "none"
            if !memoryLinkFaults.contains(kind) {
                return "step \(i + 1) (\(describe(step))) sets '\(kind)', which only the relay over sockets applies: "
                    + "run it without --memory"
            }
        }
        return nil
    }

    /// A `linkFault` step on the in-memory relay.
    func memoryLinkFault(_ s: ScenarioStep, _ memory: InMemoryRelay) async throws {
        let kind = s.fault ?? "none"
        if kind == "none" {
            if s.actor == nil {
                await memory.clearForcedUnreachable()
            } else {
                for device in try await memoryTargets(s, memory) { await memory.setForcedUnreachable(device, false) }
            }
            return
        }
        switch kind {
        case "unreachable":
            for device in try await memoryTargets(s, memory) { await memory.setForcedUnreachable(device, true) }
        case "disconnect":
            for device in try await memoryTargets(s, memory) { await memory.disconnect(device) }
        case "complication-budget":
            guard let found = await currentPairedDevice(named: try actorName(s), memory) else {
                throw StepFailure(expected: "a paired device named '\(try actorName(s))'", seen: "none")
            }
            await memory.setComplicationBudgetLeft(found.pair, s.left ?? 0)
        default:
            throw StepFailure(
                expected: "a link fault the in-memory relay applies (\(Self.memoryLinkFaults.joined(separator: ", ")))",
                seen: "'\(kind)': it needs the relay over sockets (run without the in-memory mode)")
        }
    }

    /// The devices a fault step targets: the actor's device, or both of its pair's (`target: pair`).
    private func memoryTargets(_ s: ScenarioStep, _ memory: InMemoryRelay) async throws -> [DeviceID] {
        let name = try actorName(s)
        guard let found = await currentPairedDevice(named: name, memory) else {
            throw StepFailure(expected: "a paired device named '\(name)' in the relay", seen: "none")
        }
        return s.target == "pair" ? await memory.devices(of: found.pair) : [found.device]
    }

    /// The device named `name` in its current pair (``currentPair(of:peer:in:)``), and that pair.
    private func currentPairedDevice(named name: String, _ memory: InMemoryRelay) async -> (device: DeviceID, pair: PairID)? {
        let peer = await currentPeer(of: name)
        let pairs = await memory.pairs()
        return Self.currentPair(of: name, peer: peer, in: pairs).map { ($0.device, $0.pair) }
    }
}

/// The in-memory relay as the scenario's relay: stopping it takes it down (links drop,
/// connects fail), starting it again brings it up with what it held.
struct MemoryScenarioRelay: ScenarioRelay {
    let memory: InMemoryRelay

    var url: String { "memory:" }
    var port: Int { 0 }
    var records: [ChildProcessRecord] { [] }
    func stop() async { await memory.setRunning(false) }

    /// Checked now and after every change of the relay's state.
    func awaitCounters(
        within seconds: Double, consoleToken: String, _ accept: @escaping @Sendable (RelayCounters) -> Bool
    ) async throws -> (matched: RelayCounters?, last: RelayCounters?) {
        let updates = await memory.statsUpdates()
        // As they are first, whatever the timeout: `timeout: 0` checks them once (its timer
        // could otherwise end the wait before the stream's first element was looked at).
        let s = await memory.stats
        let now = RelayCounters(connections: s.connections, pairs: s.pairs, queued: s.queued)
        if accept(now) { return (now, now) }
        guard seconds > 0 else { return (nil, now) }
        let (matched, last) = await updates.first(within: seconds) { s -> RelayCounters? in
            let counters = RelayCounters(connections: s.connections, pairs: s.pairs, queued: s.queued)
            return accept(counters) ? counters : nil
        }
        return (matched, (last.map { RelayCounters(connections: $0.connections, pairs: $0.pairs, queued: $0.queued) }) ?? now)
    }
}
