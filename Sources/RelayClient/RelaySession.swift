import Foundation
import RelayProtocol
import WebSocketTransport

/// A WatchConnectivity-shaped session with the relay: what `WCSession` is to an iOS app.
///
/// Call ``activate()`` first; it returns once the relay's `welcome` arrived. Incoming
/// traffic comes as one ``events`` stream, in relay order. Sends are honest: each `async`
/// call returns after the relay answered (`transferUserInfo` once the relay *accepted*
/// — stored durably — the transfer). The session reconnects by itself with backoff and
/// jitter and resumes with `lastSeq`; the device token and last seq live in
/// `stateDirectory/session.db`, so a killed app comes back paired.
public actor RelaySession {
    public nonisolated let configuration: RelaySessionConfiguration
    /// Everything that reaches this device, in order. Iterate it from one task.
    public nonisolated let events: AsyncStream<SessionEvent>
    /// `isReachable` changes (the newest value is kept if nobody reads).
    public nonisolated let reachabilityUpdates: AsyncStream<Bool>

    let eventSink: AsyncStream<SessionEvent>.Continuation
    let reachabilitySink: AsyncStream<Bool>.Continuation
    let clients: WebSocketClientContext
    let store: SessionStateStore

    /// `WCSession.activationState`.
    public internal(set) var activationState = ActivationState.notActivated
    /// `WCSession.isPaired`.
    public internal(set) var isPaired = false
    /// `WCSession.isReachable`: the counterpart is available for live messaging.
    public internal(set) var isReachable = false
    /// The counterpart's device name, once paired.
    public internal(set) var peerName: String?
    /// The relay's limits from the last `welcome`.
    public internal(set) var limits = Limits.default
    /// `WCSession.receivedApplicationContext`: the last context this device handled.
    public internal(set) var receivedApplicationContext: Payload?
    /// `WCSession.applicationContext`: the last context this device sent.
    public internal(set) var applicationContext: Payload?
    /// `WCSession.outstandingUserInfoTransfers`, in the order sent.
    public internal(set) var outstandingUserInfoTransfers: [UserInfoTransfer] = []
    /// `WCSession.remainingComplicationUserInfoTransfers` (phone only).
    public internal(set) var remainingComplicationUserInfoTransfers = Limits.default.complicationsPerDay
    /// Whether the watch app is in the foreground (watch only).
    public internal(set) var isForeground: Bool

    var token: String?
    var pairID: String?
    var tracker: DeliveryTracker
    var connection: ClientConnection?
    var loopTask: Task<Void, Never>?
    var reconcileTask: Task<Void, Never>?
    var pending: [String: CheckedContinuation<RelayFrame, any Error>] = [:]
    var pendingTimeouts: [String: Task<Void, Never>] = [:]
    var replyWaiters: [String: CheckedContinuation<Payload, any Error>] = [:]
    var expectingReplies: Set<String> = []
    var earlyReplies: [String: Result<Payload, any Error>] = [:]
    var activationWaiters: [CheckedContinuation<Void, Never>] = []
    var helloID = ""
    var closing = false

    /// Opens the state directory (creating it) and restores the token and last seq.
    public init(configuration: RelaySessionConfiguration) throws {
        self.configuration = configuration
        try FileManager.default.createDirectory(atPath: configuration.stateDirectory, withIntermediateDirectories: true)
        store = try SessionStateStore(directory: configuration.stateDirectory)
        clients = try WebSocketClientContext(
            configuration: ClientConfiguration(enablesTLS: configuration.url.hasPrefix("wss")))
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self)
        (reachabilityUpdates, reachabilitySink) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
        token = try store.get("token")
        pairID = try store.get("pairId")
        peerName = try store.get("peerName")
        isPaired = token != nil
        tracker = DeliveryTracker(lastSeq: Int64(try store.get("lastSeq") ?? "0") ?? 0)
        receivedApplicationContext = try store.payload("receivedContext")
        applicationContext = try store.payload("sentContext")
        outstandingUserInfoTransfers = try store.transfers()
        isForeground = configuration.foreground
    }

    // MARK: - Activation

    /// Connects and says hello; returns once the relay's `welcome` arrived.
    ///
    /// - Throws: ``RelaySessionError/timeout(_:)`` if no welcome came within the request timeout
    ///   (the session keeps trying in the background).
    public func activate() async throws {
        if loopTask == nil {
            closing = false
            loopTask = Task { await self.runConnectionLoop() }
        }
        try await waitUntilActivated()
    }

    /// Waits until a `welcome` arrived on the current connection.
    func waitUntilActivated() async throws {
        if activationState == .activated { return }
        guard loopTask != nil, !closing else { throw RelaySessionError.notActivated }
        let timeout = configuration.requestTimeoutSeconds
        let activated = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.activationSignal(); return true }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            if !first { self.releaseActivationWaiters() }
            return first
        }
        if !activated || activationState != .activated { throw RelaySessionError.timeout("the relay's welcome") }
    }

    private func activationSignal() async {
        if activationState == .activated { return }
        await withCheckedContinuation { activationWaiters.append($0) }
    }

    func releaseActivationWaiters() {
        let waiters = activationWaiters
        activationWaiters = []
        for w in waiters { w.resume() }
    }

    /// Closes the connection and stops reconnecting.
    public func close() async {
        closing = true
        connection?.close(code: 1000, reason: "app closed")
        loopTask?.cancel()
        await loopTask?.value
        loopTask = nil
        reconcileTask?.cancel()
        await clients.shutdown()
        eventSink.finish()
        reachabilitySink.finish()
    }

    // MARK: - Pairing

    /// Phone: asks the relay for a pairing code to type on the watch.
    public func beginPairing() async throws -> PairingCode {
        guard configuration.role == .phone else { throw RelaySessionError.notSupported("only a phone begins pairing") }
        let id = Self.newID()
        guard case .pairCode(let c) = try await request(.pairBegin(Request(id: id)), id: id) else {
            throw RelaySessionError.relay(code: .internal, message: "unexpected answer to pair.begin")
        }
        return PairingCode(code: c.code, expiresAt: c.expiresAt)
    }

    /// Watch: joins the phone showing `code`; returns once paired.
    public func pair(code: String) async throws {
        guard configuration.role == .watch else { throw RelaySessionError.notSupported("only a watch joins with a code") }
        let id = Self.newID()
        guard case .paired = try await request(.pairJoin(PairJoin(id: id, code: code)), id: id) else {
            throw RelaySessionError.relay(code: .internal, message: "unexpected answer to pair.join")
        }
    }

    /// Leaves the pair (both tokens are revoked).
    public func unpair() async throws {
        let id = Self.newID()
        _ = try await request(.unpair(Request(id: id)), id: id)
    }

    // MARK: - Presence

    /// Watch: the app moved to the foreground or background (reachability follows).
    public func setForeground(_ foreground: Bool) {
        isForeground = foreground
        if activationState == .activated {
            connection?.send(FrameCodec.encode(.state(StateChange(foreground: foreground))))
        }
    }

    static func newID() -> String { UUID().uuidString.lowercased() }
}
