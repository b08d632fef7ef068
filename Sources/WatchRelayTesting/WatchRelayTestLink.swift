@_exported import WatchConnectivity
import Foundation
import Primitives
import RelayServer

/// An iPhone ↔ Apple Watch link for an app's own tests (WatchRelay addition, Linux only): a
/// relay in the test's process on 127.0.0.1 (a free port, its SQLite store in a directory of
/// its own), a phone's and a watch's state directories paired through it, and sessions on them.
///
/// ```swift
/// let link = try await WatchRelayTestLink.start()
/// let phone = link.makeSession(.phone)      // give these to the app's own connector classes
/// let watch = link.makeSession(.watch)
/// phone.delegate = phoneConnector; watch.delegate = watchConnector
/// try await link.activate(phone)
/// try await link.activate(watch)
/// // … the app's code sends; the test waits for what the other side's delegate saw:
/// try await link.waitUntil("the watch got the list") { watchConnector.favorites == ["octocat"] }
/// await link.stop()   // closes both sessions, stops the relay, removes its directory
/// ```
///
/// Everything goes through the real relay, as between two app processes: the sessions' stores
/// are in ``phoneState`` and ``watchState``, so a session closed and made again is the app
/// relaunched (queued transfers and the received context come back), and ``restartRelay()``
/// restarts the relay on its port and store. An app that reads `WCSession.default` runs as a
/// process of its own: ``launch(_:executable:arguments:foreground:complicationEnabled:environment:)``
/// starts it with ``environment(_:foreground:complicationEnabled:)``.
public final class WatchRelayTestLink: Sendable {
    /// A side of the link.
    public enum Device: String, Sendable, CaseIterable {
        case phone, watch
    }

    /// The link's directory (the relay's store, both devices' states); ``stop()`` removes it.
    public let directory: String
    /// The phone's state directory (`WATCHRELAY_STATE` of a phone app on this link).
    public let phoneState: String
    /// The watch's state directory.
    public let watchState: String
    /// The relay's port on 127.0.0.1, kept across ``restartRelay()``.
    public let port: Int
    /// The relay's URL (`WATCHRELAY_URL`).
    public var url: String { "ws://127.0.0.1:\(port)/v1" }

    private let relay: LockedState<RelayServer?>
    /// What ``stop()`` ends: the sessions ``makeSession(_:foreground:complicationEnabled:)`` made
    /// and the app processes ``launch(_:executable:arguments:foreground:complicationEnabled:environment:)`` started.
    private let made = LockedState(Made())

    private struct Made {
        var sessions: [WCSession] = []
        var apps: [WatchRelayAppProcess] = []
    }
    private let replyTimeoutSeconds: Double
    private let requestTimeoutSeconds: Double
    private let complicationsPerDay: Int

    private init(
        directory: String, relay: RelayServer, replyTimeoutSeconds: Double, requestTimeoutSeconds: Double,
        complicationsPerDay: Int
    ) {
        self.directory = directory
        phoneState = directory + "/phone"
        watchState = directory + "/watch"
        port = relay.port
        self.relay = LockedState(relay)
        self.replyTimeoutSeconds = replyTimeoutSeconds
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.complicationsPerDay = complicationsPerDay
    }

    /// Starts a relay and pairs a phone and a watch through it; returns once both are paired.
    ///
    /// - Parameters:
    ///   - replyTimeoutSeconds: how long the relay waits for the reply to a message before the
    ///     sender's error handler gets `messageReplyTimedOut` (10 s, as the relay's default).
    ///   - requestTimeoutSeconds: how long each session's activation and requests wait for the
    ///     relay (`WATCHRELAY_REQUEST_TIMEOUT_S`; raise it on a slow CI machine).
    ///   - complicationsPerDay: the pair's daily budget of complication transfers (the phone's
    ///     `remainingComplicationUserInfoTransfers`; 50, as the relay's default): a test of what
    ///     the app does once it is spent sets a small one. It does not refill while a test runs.
    ///   - phoneName: the phone's name as the watch sees it; `watchName` the watch's.
    /// - Throws: when the relay cannot start or the pairing fails (its directory is removed then).
    public static func start(
        replyTimeoutSeconds: Double = 10, requestTimeoutSeconds: Double = 10, complicationsPerDay: Int = 50,
        phoneName: String = "iPhone", watchName: String = "Apple Watch"
    ) async throws -> WatchRelayTestLink {
        let directory = FileManager.default.temporaryDirectory.path + "/watchrelay-link-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let relay = try await startRelay(
                in: directory, port: 0, replyTimeoutSeconds: replyTimeoutSeconds, complicationsPerDay: complicationsPerDay)
            let link = WatchRelayTestLink(
                directory: directory, relay: relay, replyTimeoutSeconds: replyTimeoutSeconds,
                requestTimeoutSeconds: requestTimeoutSeconds, complicationsPerDay: complicationsPerDay)
            do {
                _ = try await WatchRelayPairing.pair(
                    relayURL: link.url, phoneState: link.phoneState, watchState: link.watchState,
                    phoneName: phoneName, watchName: watchName, requestTimeoutSeconds: requestTimeoutSeconds)
            } catch {
                await relay.shutdown()
                throw error
            }
            return link
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The environment of an app process on this link as `device`: `WATCHRELAY_URL`,
    /// `WATCHRELAY_ROLE`, `WATCHRELAY_STATE`, `WATCHRELAY_REQUEST_TIMEOUT_S`, and
    /// `WATCHRELAY_FOREGROUND` (watch) or `WATCHRELAY_COMPLICATION` (phone). Add it to the
    /// process's own environment when you start the app (its `WCSession.default` reads it).
    public func environment(_ device: Device, foreground: Bool = true, complicationEnabled: Bool = true) -> [String: String] {
        var environment = [
            "WATCHRELAY_URL": url, "WATCHRELAY_ROLE": device.rawValue,
            "WATCHRELAY_STATE": device == .phone ? phoneState : watchState,
            "WATCHRELAY_REQUEST_TIMEOUT_S": String(requestTimeoutSeconds),
        ]
        switch device {
        case .phone: environment["WATCHRELAY_COMPLICATION"] = complicationEnabled ? "1" : "0"
        case .watch: environment["WATCHRELAY_FOREGROUND"] = foreground ? "1" : "0"
        }
        return environment
    }

    /// A new session of `device` on this link, not activated: set its delegate, then
    /// ``activate(_:within:)`` (or `activate()`). Making one again after the last one was closed
    /// (`await session.close()`) is the app launched again. Two sessions of one device open at
    /// once are two app processes: the relay keeps the later one.
    ///
    /// - Parameters:
    ///   - foreground: watch: whether the app is in the foreground (reachable for the phone's
    ///     messages; `setApplicationForeground(_:)` changes it later).
    ///   - complicationEnabled: phone: its `isComplicationEnabled`.
    public func makeSession(_ device: Device, foreground: Bool = true, complicationEnabled: Bool = true) -> WCSession {
        let values = environment(device, foreground: foreground, complicationEnabled: complicationEnabled)
        guard let environment = WCSessionEnvironment(values) else {
            preconditionFailure("WatchRelayTestLink made an environment WCSessionEnvironment refuses: \(values)")
        }
        let session = WCSession(environment: environment)
        made.withLock { $0.sessions.append(session) }
        return session
    }

    /// Records an app process ``stop()`` kills if it still runs.
    func started(_ app: WatchRelayAppProcess) {
        made.withLock { $0.apps.append(app) }
    }

    /// Calls `session.activate()` and returns once its `activationState` is `.activated` and
    /// the delegate's `activationDidCompleteWith` has returned, or throws after `seconds` (by
    /// default the link's request timeout, and a second more).
    public func activate(_ session: WCSession, within seconds: Double? = nil) async throws {
        session.activate()
        // `activationState` turns `.activated` just before the delegate is called.
        try await waitUntil("the session activated", within: seconds ?? requestTimeoutSeconds + 1) {
            session.activationState == .activated && session.activationReported
        }
    }

    /// Returns once `condition` holds, checking it every 10 ms; throws
    /// ``WatchRelayTestLinkError/timedOut(_:)`` naming `what` after `seconds` (by default 10 s,
    /// or the link's request timeout when that is longer: a slow CI machine's, raised there
    /// once, covers its waits too). What a test waits on: the other side's delegate ran on the
    /// session's queue, so a condition reads what it recorded under a lock of its own, or
    /// main-actor state it updated: `condition` runs on the caller's actor (a `@MainActor` test
    /// reads its view models directly).
    public func waitUntil(
        _ what: String, within seconds: Double? = nil, isolation: isolated (any Actor)? = #isolation,
        _ condition: () throws -> Bool
    ) async throws {
        let seconds = seconds ?? max(10, requestTimeoutSeconds)
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if try condition() { return }
            // Looked at once more after the deadline: a loaded machine can run this task late.
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        if try condition() { return }
        throw WatchRelayTestLinkError.timedOut("\(what): not within \(seconds) s")
    }

    /// Whether the relay runs (``stopRelay()`` and ``startRelay()`` change it).
    public var isRelayRunning: Bool { relay.withLock { $0 != nil } }

    /// Shuts the relay down: it closes every session's connection (1001) after committing what
    /// it accepted. Sessions see their counterpart unreachable and keep what they send until
    /// ``startRelay()``. Does nothing when the relay is stopped.
    public func stopRelay() async {
        let running = relay.withLock { relay in
            defer { relay = nil }
            return relay
        }
        await running?.shutdown()
    }

    /// Starts the relay again on ``port`` and its store (a relay restart); sessions reconnect
    /// by themselves. Does nothing when it runs. Call it, ``stopRelay()`` and
    /// ``restartRelay()`` one at a time: a second start while one is under way finds the port
    /// taken and throws.
    /// - Throws: when the port is taken meanwhile or the store cannot be opened.
    public func startRelay() async throws {
        guard !isRelayRunning else { return }
        let started = try await Self.startRelay(
            in: directory, port: port, replyTimeoutSeconds: replyTimeoutSeconds, complicationsPerDay: complicationsPerDay)
        let other = relay.withLock { relay -> RelayServer? in
            if let relay { return relay }
            relay = started
            return nil
        }
        // Two concurrent starts: the second relay could not bind the port, so this is unreachable
        // in practice; shut it down rather than leak it.
        if other != nil { await started.shutdown() }
    }

    /// ``stopRelay()`` then ``startRelay()``.
    public func restartRelay() async throws {
        await stopRelay()
        try await startRelay()
    }

    /// Closes every session this link made (`close()`: one left open would keep trying to reach
    /// the relay), kills the app processes it launched that still run, stops the relay and
    /// removes ``directory``. A test that fails before it stops leaves all of that running for
    /// the rest of the test process: ``withLink(replyTimeoutSeconds:requestTimeoutSeconds:complicationsPerDay:phoneName:watchName:_:)``
    /// stops the link whichever way the test ends.
    public func stop() async {
        let (sessions, apps) = made.withLock { made in
            defer { made = Made() }
            return (made.sessions, made.apps)
        }
        for session in sessions { await session.close() }
        for app in apps { await app.kill() }
        await stopRelay()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts a link (as ``start(replyTimeoutSeconds:requestTimeoutSeconds:complicationsPerDay:phoneName:watchName:)``),
    /// runs `body` with it, and stops it (``stop()``) when `body` returned or threw, so a failed
    /// expectation leaves no relay, session or app process running.
    nonisolated(nonsending) public static func withLink<Result>(
        replyTimeoutSeconds: Double = 10, requestTimeoutSeconds: Double = 10, complicationsPerDay: Int = 50,
        phoneName: String = "iPhone", watchName: String = "Apple Watch",
        _ body: (WatchRelayTestLink) async throws -> Result
    ) async throws -> Result {
        let link = try await start(
            replyTimeoutSeconds: replyTimeoutSeconds, requestTimeoutSeconds: requestTimeoutSeconds,
            complicationsPerDay: complicationsPerDay, phoneName: phoneName, watchName: watchName)
        do {
            let result = try await body(link)
            await link.stop()
            return result
        } catch {
            await link.stop()
            throw error
        }
    }

    private static func startRelay(
        in directory: String, port: Int, replyTimeoutSeconds: Double, complicationsPerDay: Int
    ) async throws -> RelayServer {
        var configuration = RelayServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.databasePath = directory + "/relay.db"
        configuration.relay.limits.replyTimeoutMs = Int(replyTimeoutSeconds * 1000)
        configuration.relay.limits.complicationsPerDay = complicationsPerDay
        configuration.relay.limits.complicationsRemaining = complicationsPerDay
        return try await RelayServer.start(configuration, log: .silent)
    }
}

/// What ``WatchRelayTestLink`` throws when a wait ran out.
public enum WatchRelayTestLinkError: Error, CustomStringConvertible, Sendable {
    /// ``WatchRelayTestLink/waitUntil(_:within:isolation:_:)`` or ``WatchRelayTestLink/activate(_:within:)``
    /// ran out of time: what was awaited.
    case timedOut(String)
    /// ``WatchRelayTestLink/launch(_:executable:arguments:foreground:complicationEnabled:environment:)``
    /// could not set up the app's process: why.
    case launchFailed(String)

    public var description: String {
        switch self {
        case .timedOut(let what): "timed out: \(what)"
        case .launchFailed(let why): "cannot launch the app: \(why)"
        }
    }
}
