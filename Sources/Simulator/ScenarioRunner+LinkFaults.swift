import Foundation
import GitHubAPI
import RelayConsole

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `linkFault` steps: faults on the link (reachability, delay, drop, no reply, budget,
/// disconnect, slow writes), set through the relay's console API over HTTP — the same way
/// for an in-process relay and a `watchrelay serve` child.
extension ScenarioRunner {
    func linkFault(_ s: ScenarioStep) async throws {
        guard let relay else { throw StepFailure(expected: "the relay running", seen: "stopped") }
        if let memoryRelay { return try await memoryLinkFault(s, memoryRelay) }
        let kind = s.fault ?? "none"
        // The console of the node that runs the core (a cluster's leader), which the state names.
        let (target, port) = try await faultTarget(s, relay: relay)
        let base = "http://127.0.0.1:\(port)/console/api"
        if kind == "none" {
            try await consolePost(base + "/faults/clear" + (target.map { "?target=" + $0 } ?? ""))
            return
        }
        guard let target else { throw StepFailure(expected: "an actor to set a '\(kind)' fault on", seen: "none") }
        var query = "target=\(target)&kind=\(kind)"
        if let ms = s.ms { query += "&ms=\(ms)" }
        if let p = s.p { query += "&p=\(p)" }
        if let left = s.left { query += "&left=\(left)" }
        try await consolePost(base + "/faults?" + query)
    }

    /// `device:ID` of the actor (found by its device name, in its current pair), or `pair:ID`
    /// with `target: pair` (nil for a step with no actor), and the port of the console that
    /// showed it. Awaits the console's state listing the device (it publishes at most every 150 ms).
    private func faultTarget(_ s: ScenarioStep, relay: any ScenarioRelay) async throws -> (String?, Int) {
        let name = s.actor == nil ? nil : try actorName(s)
        let wantsPair = s.target == "pair"
        let peer = await currentPeer(of: name)
        let stream = try relay.consoleStates(token: consoleToken)
        defer { stream.close() }
        // A state from before the phone's pair with `peer` existed (published up to 150 ms
        // late) would name the old pair, whose device it may still show connected: a phone
        // with a peer waits for a state listing that pair, and takes the last state if none does.
        @Sendable func target(in state: ConsoleJSON.State, needingPeer: Bool) -> (String?, Int)? {
            guard let name else { return (nil, relay.consolePort(of: state)) }
            let pairs = state.pairs.map { pair in
                (id: pair.id, devices: pair.devices.map { (id: $0.id, name: $0.name, connected: $0.connected) })
            }
            if needingPeer, let peer, !pairs.contains(where: { p in [name, peer].allSatisfy { n in p.devices.contains { $0.name == n } } }) {
                return nil
            }
            guard let (pair, device) = Self.currentPair(of: name, peer: peer, in: pairs) else { return nil }
            return (wantsPair ? "pair:\(pair)" : "device:\(device)", relay.consolePort(of: state))
        }
        let (found, last) = await stream.states.first(within: 5) { target(in: $0, needingPeer: true) }
        if let found { return found }
        if let last, let fallback = target(in: last, needingPeer: false) { return fallback }
        guard let name else { throw StepFailure(expected: "the relay's console", seen: "no state within 5 s") }
        let seen = last.map { "devices " + $0.pairs.flatMap { $0.devices.map(\.name) }.joined(separator: ", ") } ?? "no state"
        throw StepFailure(expected: "a paired device named '\(name)' in the relay's console", seen: seen)
    }

    /// The watch a phone talks to now (its `switchWatch` target, else the watch it paired
    /// first), which names its current pair; nil for a watch or a phone not started.
    func currentPeer(of name: String?) async -> String? {
        guard let name, let phone = phones[name] else { return nil }
        return await phone.activeWatch ?? firstWatches[name]
    }

    /// The pair and device of `name` a fault on it means: the actor's current pair. One name can
    /// be in several pairs (a phone that switched watches, a watch paired again): of the phone's
    /// pairs with `peer` (the watch it talks to now; all its pairs if none has it), the one whose
    /// device is connected (an actor runs one session), else the newest (`pairs` are oldest
    /// first, as the relay lists them). The peer comes first: a console state is up to 150 ms
    /// old, and may still show the phone connected in the pair it left.
    static func currentPair<Pair, Device>(
        of name: String, peer: String?, in pairs: [(id: Pair, devices: [(id: Device, name: String, connected: Bool)])]
    ) -> (pair: Pair, device: Device)? {
        let listing = pairs.compactMap { pair in
            pair.devices.first { $0.name == name }.map {
                (pair: pair.id, device: $0.id, connected: $0.connected, names: pair.devices.map(\.name))
            }
        }
        let withPeer = peer.map { peer in listing.filter { $0.names.contains(peer) } } ?? []
        let candidates = withPeer.isEmpty ? listing : withPeer
        let connected = candidates.filter(\.connected)
        return (connected.isEmpty ? candidates : connected).last.map { ($0.pair, $0.device) }
    }

    private func consoleRequest(_ url: String, method: String) async throws -> (Int, Data) {
        guard let u = URL(string: url) else { throw StepFailure(expected: "a console URL", seen: url) }
        var request = URLRequest(url: u, timeoutInterval: 10)
        request.httpMethod = method
        request.setValue("Bearer \(consoleToken)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.dataSafelyCancellable(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    private func consolePost(_ url: String) async throws {
        let (status, data) = try await consoleRequest(url, method: "POST")
        guard status == 200 else {
            throw StepFailure(expected: "the relay to take the fault", seen: "\(status) \(String(decoding: data, as: UTF8.self))")
        }
    }
}
