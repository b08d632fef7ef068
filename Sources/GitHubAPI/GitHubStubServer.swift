import Foundation
import Primitives
import Synchronization
import WebSocketTransport

/// The fixture GitHub server: ``GitHubStub`` served over plain HTTP on 127.0.0.1 (or any host).
///
/// `watchrelay github-stub --fixtures DIR --port P` runs one; tests start one on port 0 and
/// point a ``GitHubRESTClient`` at ``baseURL``. HTTP goes through the project's transport
/// (`WebSocketServer`'s generic HTTP handler); the WebSocket path it also has is never used.
///
/// Faults, the rate limit and the counters can be changed and read from any thread while
/// it serves. Call ``stop()`` before dropping it.
public final class GitHubStubServer: Sendable {
    /// The port it listens on (the ephemeral one if started with port 0).
    public let port: Int
    /// The API root to give a client, e.g. `http://127.0.0.1:54321`.
    public let baseURL: URL
    /// The users and repositories served.
    public let catalog: GitHubFixtureCatalog
    private let state: GitHubStubState
    private let server: WebSocketServer

    private init(
        port: Int, baseURL: URL, catalog: GitHubFixtureCatalog, state: GitHubStubState, server: WebSocketServer
    ) {
        self.port = port
        self.baseURL = baseURL
        self.catalog = catalog
        self.state = state
        self.server = server
    }

    /// Loads the fixtures in `fixturesDirectory` and starts serving them.
    /// - Parameters:
    ///   - fixturesDirectory: a directory with `users/` and `repos/` (see ``GitHubFixtureCatalog/load(directory:)``).
    ///   - port: the TCP port; 0 (the default) picks a free one, reported by ``port``.
    ///   - host: the address to listen on (default `127.0.0.1`).
    ///   - rateLimit: the primary rate limit, or `nil` (the default) for none.
    ///   - now: the clock for rate-limit windows.
    /// - Throws: ``GitHubStubError`` if a fixture is invalid or the port cannot be opened.
    public static func start(
        fixturesDirectory: String,
        port: Int = 0,
        host: String = "127.0.0.1",
        rateLimit: GitHubStubRateLimit? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(GitHubStubError) -> GitHubStubServer {
        let catalog = try GitHubFixtureCatalog.load(directory: fixturesDirectory)
        return try start(catalog: catalog, port: port, host: host, rateLimit: rateLimit, now: now)
    }

    /// Starts serving a catalog already loaded (or built in memory).
    /// - Throws: ``GitHubStubError/transport(_:)`` if the port cannot be opened.
    public static func start(
        catalog: GitHubFixtureCatalog,
        port: Int = 0,
        host: String = "127.0.0.1",
        rateLimit: GitHubStubRateLimit? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(GitHubStubError) -> GitHubStubServer {
        let state = GitHubStubState(GitHubStub(catalog: catalog, rateLimit: rateLimit), now: now)
        let configuration = ServerConfiguration(
            host: host, port: port,
            // The transport always has a WebSocket endpoint; this one is for no client.
            path: "/.watchrelay-github-stub-has-no-websocket", subprotocol: "none",
            shutdownGracePeriod: .milliseconds(100),
            httpHandler: { request in state.respond(to: request) })
        let server: WebSocketServer
        do {
            server = try WebSocketServer(configuration: configuration)
        } catch {
            throw .transport(error)
        }
        let reachableHost = ["0.0.0.0", "::", "[::]"].contains(host) ? "127.0.0.1" : host
        let root = "http://\(reachableHost.contains(":") ? "[\(reachableHost)]" : reachableHost):\(server.port)"
        state.withStub { $0.baseURL = root }
        return GitHubStubServer(
            port: server.port, baseURL: URL(string: root)!, catalog: catalog, state: state, server: server)
    }

    /// What the server has answered so far.
    public var counters: GitHubStubCounters {
        state.withStub { $0.counters }
    }

    /// Zeroes the counters.
    public func resetCounters() {
        state.withStub { $0.resetCounters() }
    }

    /// Makes requests about `login` misbehave, or behave again with `nil`.
    public func setFault(_ fault: GitHubStubFault?, for login: String) {
        state.withStub { $0.setFault(fault, for: login) }
    }

    /// Makes every request misbehave, or behave again with `nil` (per-login faults then apply).
    public func setGlobalFault(_ fault: GitHubStubFault?) {
        state.withStub { $0.globalFault = fault }
    }

    /// Clears every fault: the global one and every login's.
    public func clearFaults() {
        state.withStub { $0.clearFaults() }
    }

    /// Sets the primary rate limit (`nil`: none) with a fresh window: `limit` more requests are
    /// answered from now on.
    public func restartRateLimit(_ rateLimit: GitHubStubRateLimit?) {
        state.withStub { $0.restartRateLimit(rateLimit) }
    }

    /// Replaces the primary rate limit (`nil`: none); the current window keeps its count.
    public func setRateLimit(_ rateLimit: GitHubStubRateLimit?) {
        state.withStub { $0.rateLimit = rateLimit }
    }

    /// Stops listening and closes every connection; returns once the port is released.
    public func stop() async {
        await server.shutdown()
    }
}

/// The stub's state shared by the lws service thread (which answers) and the owner (which reads
/// counters and sets faults), behind a `LockedState` (a Mutex TSan can see).
private final class GitHubStubState: Sendable {
    private let stub: LockedState<GitHubStub>
    private let now: @Sendable () -> Date

    init(_ stub: GitHubStub, now: @escaping @Sendable () -> Date) {
        self.stub = LockedState(stub)
        self.now = now
    }

    /// Answers a request; runs on the lws service thread, so it only computes (no I/O, no waiting).
    func respond(to request: HTTPRequest) -> HTTPResponse {
        let time = now()
        return stub.withLock { $0.respond(to: request, now: time) }
    }

    func withStub<Result: Sendable>(_ body: (inout GitHubStub) -> Result) -> Result {
        stub.withLock { body(&$0) }
    }
}
