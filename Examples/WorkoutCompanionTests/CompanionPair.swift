import Foundation
import Primitives
import RelayServer
import TestSupport
import WatchConnectivity
import WorkoutCompanion

/// A relay, a paired phone and watch, and the example's two managers on sessions of their own
/// (in one process, so not `WCSession.default`: the managers take the session, as apps' tests do).
struct CompanionPair: Sendable {
    let relay: RelayServer
    let directory: TemporaryDirectory
    let phone: PhoneSessionManager
    let watch: WatchSessionManager
    /// The watch app's complication reloads. Counted here instead of going to `WidgetCenter`:
    /// these tests run no `WidgetHost`, so a call from WatchConnectivity's queue would go to
    /// another test's host of this kind if one ran in parallel (README, "Test your own widget");
    /// ComplicationTests runs the real one.
    let reloads: LockedState<Int>

    static func start(watchForeground: Bool = true, complicationEnabled: Bool = true) async throws -> CompanionPair {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let documents = URL(fileURLWithPath: directory.path("Documents"))
        let phoneSession = WCSession(
            environment: environment(relay, "phone", directory.path("phone"), complication: complicationEnabled))
        let watchSession = WCSession(environment: environment(relay, "watch", directory.path("watch"), foreground: watchForeground))
        let reloads = LockedState(0)
        return CompanionPair(
            relay: relay, directory: directory, phone: PhoneSessionManager(session: phoneSession, documents: documents),
            watch: WatchSessionManager(session: watchSession, store: WorkoutStore()) { reloads.withLock { $0 += 1 } },
            reloads: reloads)
    }

    static func environment(
        _ relay: RelayServer, _ role: String, _ state: String, foreground: Bool = true, complication: Bool = true
    ) -> WCSessionEnvironment? {
        WCSessionEnvironment([
            "WATCHRELAY_URL": relay.url, "WATCHRELAY_ROLE": role, "WATCHRELAY_STATE": state,
            "WATCHRELAY_FOREGROUND": foreground ? "1" : "0", "WATCHRELAY_COMPLICATION": complication ? "1" : "0",
            "WATCHRELAY_REQUEST_TIMEOUT_S": String(10 * timeoutScale),
        ])
    }

    /// A pair whose phone and watch apps both started and activated.
    static func running(watchForeground: Bool = true, complicationEnabled: Bool = true) async throws -> CompanionPair {
        let pair = try await start(watchForeground: watchForeground, complicationEnabled: complicationEnabled)
        try await pair.startPhone()
        try await pair.startWatch()
        return pair
    }

    /// Starts the phone app and waits for its activation.
    func startPhone() async throws {
        phone.start()
        try await eventually(10, "the phone's activation") { phone.log.contains { $0.hasPrefix("activated") } }
    }

    /// Starts the watch app and waits for its activation.
    func startWatch() async throws {
        watch.start()
        try await eventually(10, "the watch's activation") { watch.log.contains { $0.hasPrefix("activated") } }
    }

    func stop() async {
        await phone.session.close()
        await watch.session.close()
        await relay.shutdown()
    }
}

/// A value a handler delivers, read by the test (the first one only: "exactly one" is checked apart).
final class Delivered<Value: Sendable>: Sendable {
    private let values = LockedState<[Value]>([])

    /// Every value delivered so far, in order.
    var all: [Value] { values.withLock { $0 } }

    /// A handler that records what it gets.
    var handler: @Sendable (Value) -> Void {
        { [values] delivered in values.withLock { $0.append(delivered) } }
    }

    /// Waits for the first value.
    func first(_ what: String) async throws -> Value {
        try await eventually(10, what) { !self.all.isEmpty }
        return all[0]
    }
}
