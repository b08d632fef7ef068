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
        let base = "http://127.0.0.1:\(relay.port)/console/api"
        let kind = s.fault ?? "none"
        if kind == "none" {
            var target = ""
            if s.actor != nil { target = "?target=" + (try await faultTarget(s, base: base)) }
            try await consolePost(base + "/faults/clear" + target)
            return
        }
        var query = "target=\(try await faultTarget(s, base: base))&kind=\(kind)"
        if let ms = s.ms { query += "&ms=\(ms)" }
        if let p = s.p { query += "&p=\(p)" }
        if let left = s.left { query += "&left=\(left)" }
        try await consolePost(base + "/faults?" + query)
    }

    /// `device:ID` of the actor (found by its device name), or `pair:ID` with `target: pair`.
    /// Waits for the console to list the device (it refreshes its view every few ticks).
    private func faultTarget(_ s: ScenarioStep, base: String) async throws -> String {
        let name = try actorName(s)
        let deadline = ContinuousClock.now + .seconds(5)
        var seen = "no state"
        while true {
            let state = try await consoleGet(base + "/state", as: ConsoleJSON.State.self)
            for pair in state.pairs {
                if let device = pair.devices.first(where: { $0.name == name }) {
                    return s.target == "pair" ? "pair:\(pair.id)" : "device:\(device.id)"
                }
            }
            seen = "devices " + state.pairs.flatMap { $0.devices.map(\.name) }.joined(separator: ", ")
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw StepFailure(expected: "a paired device named '\(name)' in the relay's console", seen: seen)
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

    private func consoleGet<T: Decodable>(_ url: String, as: T.Type) async throws -> T {
        let (status, data) = try await consoleRequest(url, method: "GET")
        guard status == 200 else {
            throw StepFailure(expected: "the console's state", seen: "\(status) \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONDecoder().decode(T.self, from: data)
    }
}
