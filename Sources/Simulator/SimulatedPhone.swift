import Foundation
import GitHubAPI
import PhoneApp

/// A phone companion in a scenario: its state directory survives stop/start (the same
/// phone, restarted). A stopped companion cannot start again, so each start makes a new
/// ``PhoneCompanion`` over the same state.
actor SimulatedPhone {
    let name: String
    let directory: String
    private(set) var phone: PhoneCompanion?
    private var drains: [Task<Void, Never>] = []

    init(name: String, directory: String) {
        self.name = name
        self.directory = directory
    }

    var isRunning: Bool { phone != nil }

    /// Opens the state and connects (returns once activated or timed out).
    func start(relayURL: String, githubURL: URL) async throws {
        guard phone == nil else { return }
        var c = PhoneConfiguration(relayURL: relayURL, stateDirectory: directory, deviceName: name)
        c.refreshInterval = .seconds(3600)
        c.refreshThrottle = .zero
        c.externalPollInterval = .seconds(3600)
        c.session.backoff = [0.05, 0.1, 0.2]
        c.session.requestTimeoutSeconds = 3
        let p = try PhoneCompanion(configuration: c, github: .live(baseURL: githubURL))
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

    func running() throws -> PhoneCompanion {
        guard let phone else { throw StepFailure(expected: "phone '\(name)' running", seen: "stopped") }
        return phone
    }
}
