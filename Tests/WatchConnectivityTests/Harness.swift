import Foundation
import Primitives
import RelayServer
import TestSupport
import WatchConnectivity

/// What a delegate saw, in order, and where it ran.
struct DelegateCall: Sendable, Equatable {
    var name: String
    /// A short form of the argument (a dictionary's `"n"` or `"delete"`, an error code…).
    var detail: String = ""
    var onMainThread: Bool
}

/// A `nonisolated` delegate that records every call (the fixed form of the seed's service).
///
/// `@unchecked Sendable` only because `NSObject` is not `Sendable`: every stored property is a
/// `let` of a `Sendable` type.
final class RecordingDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    let calls = LockedState<[DelegateCall]>([])
    /// Calls in progress: the session must never run two at once.
    let inside = LockedState(0)
    let overlapped = LockedState(false)
    /// userInfo calls take this long, so overlapping calls would show.
    let userInfoDelay: Double
    /// Where received files are moved during the delegate call (nil: they are not moved).
    let moveFilesTo: String?
    /// For each received file: its URL during the call and whether it existed then.
    let files = LockedState<[(url: URL, existed: Bool, metadata: String)]>([])
    /// `session.receivedApplicationContext` as each `didReceiveApplicationContext` saw it.
    let receivedContextDuringCall = LockedState<[String]>([])

    /// Runs inside `sessionDidBecomeInactive` (to try sends while the phone switches watches).
    let whileInactive: (@Sendable (WCSession) -> Void)?
    /// Runs inside `sessionDidDeactivate` (Apple's pattern calls `activate()` there).
    let onDeactivate: (@Sendable (WCSession) -> Void)?
    /// Runs inside `activationDidCompleteWith`, before the call is recorded.
    let onActivation: (@Sendable (WCSession) -> Void)?

    init(
        userInfoDelay: Double = 0, moveFilesTo: String? = nil, whileInactive: (@Sendable (WCSession) -> Void)? = nil,
        onDeactivate: (@Sendable (WCSession) -> Void)? = nil, onActivation: (@Sendable (WCSession) -> Void)? = nil
    ) {
        self.userInfoDelay = userInfoDelay
        self.moveFilesTo = moveFilesTo
        self.whileInactive = whileInactive
        self.onDeactivate = onDeactivate
        self.onActivation = onActivation
    }

    func record(_ name: String, _ detail: String = "") {
        let entered = inside.withLock { n in
            n += 1
            return n
        }
        if entered > 1 { overlapped.withLock { $0 = true } }
        calls.withLock { $0.append(DelegateCall(name: name, detail: detail, onMainThread: Thread.isMainThread)) }
        inside.withLock { $0 -= 1 }
    }

    func names() -> [String] { calls.withLock { $0.map(\.name) } }
    func details(_ name: String) -> [String] { calls.withLock { $0.filter { $0.name == name }.map(\.detail) } }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        onActivation?(session)
        record("activation", "\(activationState.rawValue)")
    }
    func sessionReachabilityDidChange(_ session: WCSession) { record("reachability", "\(session.isReachable)") }
    func sessionDidBecomeInactive(_ session: WCSession) {
        record("inactive", "\(session.activationState.rawValue)")
        whileInactive?(session)
    }
    func sessionDidDeactivate(_ session: WCSession) {
        record("deactivate", "\(session.activationState.rawValue)")
        onDeactivate?(session)
    }
    func sessionWatchStateDidChange(_ session: WCSession) {
        record("watchState", "\(session.isPaired),\(session.watchDirectoryURL?.path ?? "none")")
    }
    func sessionCompanionAppInstalledDidChange(_ session: WCSession) {
        record("companionInstalled", "\(session.isCompanionAppInstalled)")
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        record("message", Self.detail(message))
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        record("messageWithReply", Self.detail(message))
        if let size = message["replyBytes"] as? Int {
            replyHandler(["big": String(repeating: "r", count: size)])  // a reply of about that size
        } else {
            replyHandler(["echo": message["n"] ?? "none"])
        }
    }
    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        record("messageData", "\(messageData.count)")
        // "big" asks for a reply larger than a message may be.
        replyHandler(messageData == Data("big".utf8) ? Data(count: 70_000) : Data(messageData.reversed()))
    }
    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        let property = Self.detail(session.receivedApplicationContext)
        receivedContextDuringCall.withLock { $0.append(property) }
        record("context", Self.detail(applicationContext))
    }
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {
        record("userInfo", Self.detail(userInfo))
        if userInfoDelay > 0 { Thread.sleep(forTimeInterval: userInfoDelay) }
    }
    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        record("didFinish", error.map { "\(($0 as? WCError)?.code.rawValue ?? 0)" } ?? Self.detail(userInfoTransfer.userInfo))
    }

    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let existed = FileManager.default.fileExists(atPath: file.fileURL.path)
        let metadata = file.metadata.map(Self.detail) ?? "none"
        files.withLock { $0.append((file.fileURL, existed, metadata)) }
        if let moveFilesTo {
            try? FileManager.default.moveItem(
                atPath: file.fileURL.path, toPath: moveFilesTo + "/" + file.fileURL.lastPathComponent)
        }
        record("file", file.fileURL.lastPathComponent)
    }
    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        let progress = "\(fileTransfer.progress.completedUnitCount)/\(fileTransfer.progress.totalUnitCount)"
        record("fileFinished", error.map { "\(($0 as? WCError)?.code.rawValue ?? 0)" } ?? progress)
    }

    static func detail(_ dict: [String: Any]) -> String {
        if let n = dict["n"] { return "\(n)" }
        if let login = dict["delete"] as? String { return "delete:\(login)" }
        return dict.keys.sorted().joined(separator: ",")
    }
}

/// A delegate with only the required method and `didReceiveMessage` without reply: the
/// protocol's defaults answer the rest. `@unchecked Sendable` as ``RecordingDelegate``.
final class MinimalDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    let activated = LockedState(false)
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        activated.withLock { $0 = true }
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {}
}

/// A relay, two paired state directories, and a phone and a watch session on them.
struct WCHarness: Sendable {
    let relay: RelayServer
    let directory: TemporaryDirectory
    let phone: WCSession
    let watch: WCSession
    let phoneDelegate: RecordingDelegate
    let watchDelegate: RecordingDelegate

    static func start(
        watchForeground: Bool = true, phoneForeground: Bool = true, activate: Bool = true,
        phoneDelegate: RecordingDelegate = RecordingDelegate(), watchDelegate: RecordingDelegate = RecordingDelegate(),
        configure: (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> WCHarness {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path, configure)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let phone = WCSession(environment: environment(relay, "phone", directory.path("phone"), foreground: phoneForeground))
        let watch = WCSession(environment: environment(relay, "watch", directory.path("watch"), foreground: watchForeground))
        phone.delegate = phoneDelegate
        watch.delegate = watchDelegate
        let h = WCHarness(
            relay: relay, directory: directory, phone: phone, watch: watch, phoneDelegate: phoneDelegate,
            watchDelegate: watchDelegate)
        if activate {
            try await h.activate(phone, phoneDelegate)
            try await h.activate(watch, watchDelegate)
        }
        return h
    }

    /// A harness whose phone answers to an app's own `delegate` instead of a recording one: the
    /// phone activated, until `activated` (read from that delegate) holds; then the watch, with
    /// its recording delegate, unless `activatingWatch` is false. The caller keeps `delegate`
    /// (a session holds its delegate weakly).
    static func start(
        phoneApp delegate: any WCSessionDelegate, activated: @escaping @Sendable () -> Bool, activatingWatch: Bool = true
    ) async throws -> WCHarness {
        let h = try await start(activate: false)
        h.phone.delegate = delegate
        h.phone.activate()
        try await eventually(10, "the phone's activationDidComplete", activated)
        if activatingWatch { try await h.activate(h.watch, h.watchDelegate) }
        return h
    }

    static func environment(_ relay: RelayServer, _ role: String, _ state: String, foreground: Bool = true) -> WCSessionEnvironment? {
        WCSessionEnvironment([
            "WATCHRELAY_URL": relay.url, "WATCHRELAY_ROLE": role, "WATCHRELAY_STATE": state,
            "WATCHRELAY_FOREGROUND": foreground ? "1" : "0",
            // Scaled like the tests' own waits (ThreadSanitizer on two loaded cores is slow).
            "WATCHRELAY_REQUEST_TIMEOUT_S": String(10 * timeoutScale),
        ])
    }

    /// Activates `session` and waits for `activationDidComplete`.
    func activate(_ session: WCSession, _ delegate: RecordingDelegate) async throws {
        session.activate()
        let calls = delegate.calls
        try await eventually(10, "activationDidComplete") { calls.withLock { $0.contains { $0.name == "activation" } } }
    }

    /// A relay again on this harness's port and database, once `relay` was shut down: the
    /// relay restarted (stop with ``stop(relay:)``).
    func relayAgain() async throws -> RelayServer {
        try await RelayServer.startForTest(in: directory.path) { $0.port = relay.port }
    }

    /// Closes both sessions, then shuts down `relay` (by default the first one).
    func stop(relay running: RelayServer? = nil) async {
        await phone.close()
        await watch.close()
        await (running ?? relay).shutdown()
    }
}

/// Waits until `delegate` recorded `count` calls named `name`.
func waitForCalls(_ delegate: RecordingDelegate, _ name: String, count: Int = 1, within seconds: Double = 10) async throws {
    let calls = delegate.calls
    try await eventually(seconds, "\(count) × \(name)") { calls.withLock { $0.filter { $0.name == name }.count >= count } }
}
