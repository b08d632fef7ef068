import Foundation
import GitExplorerPayloads
import GitHubAPI
import PhoneApp
import Primitives
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// An in-process relay on 127.0.0.1, port 0, with its own database.
final class TestRelay: Sendable {
    let server: RelayServer
    let directory: TemporaryDirectory
    var url: String { server.url }

    private init(server: RelayServer, directory: TemporaryDirectory) {
        self.server = server
        self.directory = directory
    }

    static func start(_ configure: @Sendable (inout RelayServerConfiguration) -> Void = { _ in }) async throws -> TestRelay {
        let dir = TemporaryDirectory()
        return TestRelay(server: try await RelayServer.startForTest(in: dir.path, configure), directory: dir)
    }

    func stop() async { await server.shutdown() }
}

/// The fixture GitHub server on port 0; with `logins`, over a private copy of just those users'
/// fixtures, which ``edit(_:_:)`` changes and ``restart()`` serves again on the same port.
final class TestGitHub: Sendable {
    let fixtures: String
    let port: Int
    private let copy: TemporaryDirectory?
    private let current: LockedState<GitHubStubServer>

    private init(fixtures: String, copy: TemporaryDirectory?, server: GitHubStubServer) {
        self.fixtures = fixtures
        self.copy = copy
        self.port = server.port
        current = LockedState(server)
    }

    static func start(logins: [String]? = nil) throws -> TestGitHub {
        guard let logins else {
            return TestGitHub(fixtures: fixturesDirectory, copy: nil, server: try GitHubStubServer.start(fixturesDirectory: fixturesDirectory))
        }
        let copy = TemporaryDirectory()
        let manager = FileManager.default
        for sub in ["users", "repos"] {
            try manager.createDirectory(atPath: "\(copy.path)/\(sub)", withIntermediateDirectories: true)
            for login in logins {
                try manager.copyItem(atPath: "\(fixturesDirectory)/\(sub)/\(login).json", toPath: "\(copy.path)/\(sub)/\(login).json")
            }
        }
        return try serving(copy)
    }

    /// The fixture server over `directory` (a fixture tree the test made), which it keeps.
    static func serving(_ directory: TemporaryDirectory) throws -> TestGitHub {
        TestGitHub(fixtures: directory.path, copy: directory, server: try GitHubStubServer.start(fixturesDirectory: directory.path))
    }

    var server: GitHubStubServer { current.withLock { $0 } }
    var baseURL: URL { server.baseURL }
    var client: GitHubClient { .live(baseURL: baseURL) }

    /// Rewrites the user fixture of `login` (a GitHub user object).
    func edit(_ login: String, _ change: (inout [String: Any]) -> Void) throws {
        let path = "\(fixtures)/users/\(login).json"
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        change(&object)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    }

    /// Stops the server and serves the (edited) fixtures again on the same port.
    func restart() async throws {
        await server.stop()
        var lastError: (any Error)?
        for _ in 0..<50 {
            do {
                let fresh = try GitHubStubServer.start(fixturesDirectory: fixtures, port: port)
                current.withLock { $0 = fresh }
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw TestFailure("could not restart the GitHub stub on port \(port): \(String(describing: lastError))")
    }

    func stop() async { await server.stop() }
}

/// A phone configuration for tests: fast reconnects, no periodic refresh after the first.
func phoneConfiguration(relay: String, state: String) -> PhoneConfiguration {
    var c = PhoneConfiguration(relayURL: relay, stateDirectory: state, deviceName: "Test iPhone")
    c.session.backoff = [0.02, 0.05, 0.1]
    c.session.requestTimeoutSeconds = 5 * timeoutScale
    c.refreshInterval = .seconds(3600)
    c.refreshThrottle = .seconds(10)
    return c
}

/// A relay, the GitHub stub, a started phone companion and a raw watch paired with it.
struct PhoneHarness {
    let relay: TestRelay
    let github: TestGitHub
    let state: TemporaryDirectory
    let phone: PhoneCompanion
    let watch: RawWatch
    /// The first snapshot the watch got after pairing.
    let first: FavoritesSnapshot

    static func start(
        github: TestGitHub? = nil, clock: SteppedWallClock? = nil,
        configure: (inout PhoneConfiguration) -> Void = { _ in },
        relay configureRelay: @Sendable (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> PhoneHarness {
        let relay = try await TestRelay.start(configureRelay)
        let github = try github ?? TestGitHub.start()
        let state = TemporaryDirectory()
        var configuration = phoneConfiguration(relay: relay.url, state: state.path)
        configure(&configuration)
        let phone = try PhoneCompanion(configuration: configuration, github: github.client, now: { clock?.now() ?? Date() })
        await phone.start()
        let code = try await phone.pair()
        let watch = try await RawWatch.pair(relay: relay.url, code: code.code)
        let first = try await watch.nextSnapshot()
        return PhoneHarness(relay: relay, github: github, state: state, phone: phone, watch: watch, first: first)
    }

    func stop() async {
        await phone.shutdown()
        await watch.close()
        await relay.stop()
        await github.stop()
    }
}

/// The wall clock moved on by hand: the real time plus an offset, for a companion's `now`.
final class SteppedWallClock: Sendable {
    private let offset = LockedState<TimeInterval>(0)

    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// Counts GitHub calls in flight, for checking the concurrency bound.
final class InFlightCounter: Sendable {
    private let state = LockedState((current: 0, peak: 0, calls: 0))

    var peak: Int { state.withLock { $0.peak } }
    var calls: Int { state.withLock { $0.calls } }

    func enter() {
        state.withLock {
            $0.current += 1
            $0.calls += 1
            $0.peak = max($0.peak, $0.current)
        }
    }

    func leave() { state.withLock { $0.current -= 1 } }
}

/// A user for tests.
func testUser(_ login: String, followers: Int = 1) -> User {
    User(
        login: login, id: Int64(abs(login.hashValue % 1_000_000)), name: login.capitalized,
        avatarURL: "https://example.com/\(login).png", htmlURL: "https://github.com/\(login)", publicRepos: 3,
        followers: followers, following: 0)
}

/// A GitHub double that answers every known login after `delay(login)`, counting calls in flight.
func slowGitHub(users: [User], counter: InFlightCounter, delay: @escaping @Sendable (String) -> Duration) -> GitHubClient {
    let fixed = GitHubClient.fixed(users: users)
    return GitHubClient(
        user: { (login) async throws(GitHubError) -> User in
            counter.enter()
            defer { counter.leave() }
            try? await Task.sleep(for: delay(login))
            return try await fixed.user(login)
        },
        repos: fixed.repos)
}

extension TestGitHub {
    /// The fixture server over `count` made-up users `long-00`, `long-01`, … whose `name`,
    /// `avatar_url` and `html_url` are each as long as the GitHub client accepts (2,048 UTF-8
    /// bytes; the name in two-byte characters), with no repos.
    static func start(longUsers count: Int) throws -> TestGitHub {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("users"), withIntermediateDirectories: true)
        for i in 0..<count {
            let login = longLogin(i)
            func padded(_ url: String) -> String { url + String(repeating: "x", count: 2048 - url.utf8.count) }
            let user: [String: Any] = [
                "login": login, "id": 9_000_000 + i, "name": String(repeating: "é", count: 1024),
                "avatar_url": padded("https://avatars.githubusercontent.com/u/\(9_000_000 + i)?v=4&"),
                "html_url": padded("https://github.com/\(login)?"), "public_repos": 0, "followers": i, "following": 0,
            ]
            try JSONSerialization.data(withJSONObject: user).write(to: URL(fileURLWithPath: directory.path("users/\(login).json")))
        }
        return try TestGitHub.serving(directory)
    }

    /// The login of made-up user `index` of ``start(longUsers:)``.
    static func longLogin(_ index: Int) -> String { "long-" + (index < 10 ? "0" : "") + String(index) }
}
