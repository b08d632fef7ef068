import Foundation
import RelayProtocol
import SQLite
import WebSocketTransport

/// A WatchConnectivity-shaped session with the relay: what `WCSession` is to an iOS app.
///
/// Call ``activate()`` first; it returns once the relay's `welcome` arrived. Incoming
/// traffic comes as one ``events`` stream, in relay order. Sends are honest: each `async`
/// call returns after the relay answered (`transferUserInfo` once the relay *accepted*
/// — stored durably — the transfer). The session reconnects by itself with backoff and
/// jitter and resumes with `lastSeq`; the device token and last seq live in
/// `stateDirectory/session.db`, so a killed app comes back paired.
///
/// Every decision is ``SessionCore``'s; this actor only drives it over lws: it opens the
/// connection, passes frames in, writes the store, and keeps one timer for the core's next
/// deadline. A failed write is never followed by an ack: the app gets
/// ``SessionEvent/error(_:)`` and the item comes again.
public actor RelaySession {
    public nonisolated let configuration: RelaySessionConfiguration
    /// Everything that reaches this device, in order. Iterate it from one task.
    public nonisolated let events: AsyncStream<SessionEvent>
    /// `isReachable` changes (the newest value is kept if nobody reads).
    public nonisolated let reachabilityUpdates: AsyncStream<Bool>

    let eventSink: AsyncStream<SessionEvent>.Continuation
    let reachabilitySink: AsyncStream<Bool>.Continuation
    let clients: WebSocketClientContext
    let store: any SessionPersistence
    var core: SessionCore
    var connection: ClientConnection?
    /// Which `connect` the current connection task belongs to (older ones are ignored).
    var generation = 0
    var connectionTask: Task<Void, Never>?
    /// The one timer: feeds `tick` at the core's next deadline.
    var timer: Task<Void, Never>?
    var waiters: [SessionTicket: CheckedContinuation<SessionOutcome, any Error>] = [:]
    var finished: [SessionTicket: Result<SessionOutcome, RelaySessionError>] = [:]
    /// Commands handed in with a completion handler (``submit(_:completion:)``) and not finished.
    var completions: [SessionTicket: @Sendable (Result<SessionOutcome, RelaySessionError>) -> Void] = [:]
    var nextTicket: UInt64 = 0

    /// Opens the state directory (creating it) and restores the token and last seq.
    public init(configuration: RelaySessionConfiguration) throws {
        try DirectoryError.create(configuration.stateDirectory, option: "--state")
        try self.init(configuration: configuration, store: SQLiteSessionStore(directory: configuration.stateDirectory, role: configuration.role))
    }

    /// A session keeping its state in `store` instead of `stateDirectory/session.db`.
    public init(configuration: RelaySessionConfiguration, store: sending any SessionPersistence) throws {
        self.configuration = configuration
        self.store = store
        clients = try WebSocketClientContext(
            configuration: ClientConfiguration(enablesTLS: configuration.url.hasPrefix("wss")))
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self)
        (reachabilityUpdates, reachabilitySink) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
        core = SessionCore(settings: configuration.coreSettings(), restored: try store.load())
    }

    // MARK: - State (WCSession's properties)

    /// `WCSession.activationState`.
    public var activationState: ActivationState { core.activationState }
    /// `WCSession.isPaired`.
    public var isPaired: Bool { core.isPaired }
    /// `WCSession.isReachable`: the counterpart is available for live messaging.
    public var isReachable: Bool { core.isReachable }
    /// Whether the counterpart's app is installed (PROTOCOL.md §7.1); WC's
    /// `isWatchAppInstalled` / `isCompanionAppInstalled` while paired.
    public var isPeerAppInstalled: Bool { core.isPeerAppInstalled }
    /// The counterpart's device name, once paired.
    public var peerName: String? { core.peerName }
    /// The relay's id of this device's pair, once paired (a new one each time it pairs).
    public var pairID: String? { core.pairID }
    /// The relay's limits from the last `welcome`.
    public var limits: Limits { core.limits }
    /// `WCSession.receivedApplicationContext`: the last context this device handled.
    public var receivedApplicationContext: Payload? { core.receivedApplicationContext }
    /// `WCSession.applicationContext`: the last context this device sent.
    public var applicationContext: Payload? { core.applicationContext }
    /// `WCSession.outstandingUserInfoTransfers`, in the order sent.
    public var outstandingUserInfoTransfers: [UserInfoTransfer] { core.outstandingUserInfoTransfers }
    /// `WCSession.remainingComplicationUserInfoTransfers` (phone only).
    public var remainingComplicationUserInfoTransfers: Int { core.remainingComplicationUserInfoTransfers }
    /// Whether the watch app is in the foreground (watch only).
    public var isForeground: Bool { core.isForeground }
    /// The seq this device resumes from: everything up to it was handled and acked durably.
    public var lastSeq: Int64 { core.lastSeq }
    /// Whether the app handled (and the session durably acked) everything it received.
    public var handledEverythingReceived: Bool { core.lastSeq >= core.receivedThrough }
    /// All of the above in one value.
    public var status: SessionStatus { SessionStatus(core) }

    // MARK: - Activation

    /// Connects and says hello; returns once the relay's `welcome` arrived.
    ///
    /// - Throws: ``RelaySessionError/timeout(_:)`` if no welcome came within the request timeout
    ///   (the session keeps trying in the background).
    public func activate() async throws {
        _ = try await perform(.activate)
    }

    /// Closes the connection and stops reconnecting.
    public func close() async {
        _ = await stop(with: .close)
    }

    /// Says this device's app was uninstalled (`state` `{appInstalled: false}`, PROTOCOL.md
    /// §7.1), then closes as ``close()`` does: the peer sees the app uninstalled until this
    /// device's next `hello` (a new session with the same state), which installs it again.
    /// - Returns: whether the relay was told: false when the session was not activated (the
    ///   relay away), and the peer still sees the app installed. The session stops either way.
    @discardableResult
    public func uninstallApp() async -> Bool {
        await stop(with: .uninstallApp)
    }

    /// Performs `command` (one that closes the connection) and waits for the session to stop;
    /// returns whether the command succeeded.
    private func stop(with command: SessionCommand) async -> Bool {
        let result = performNow(command)
        await connectionTask?.value
        connectionTask = nil
        timer?.cancel()
        timer = nil
        await clients.shutdown()
        eventSink.finish()
        reachabilitySink.finish()
        return (try? result.get()) != nil
    }

    // MARK: - Pairing

    /// Phone: asks the relay for a pairing code to type on the watch.
    public func beginPairing() async throws -> PairingCode {
        guard case .pairingCode(let code) = try await perform(.beginPairing) else {
            throw RelaySessionError.relay(code: .internal, message: "unexpected answer to pair.begin")
        }
        return code
    }

    /// Watch: joins the phone showing `code`; returns once paired (and the token saved).
    public func pair(code: String) async throws {
        _ = try await perform(.pair(code: code))
    }

    /// Leaves the pair (both tokens are revoked).
    public func unpair() async throws {
        _ = try await perform(.unpair)
    }

    /// Returns once every frame the relay sent before now reached ``events`` (one round trip;
    /// after activation that includes the relay's whole backlog for this device).
    public func synchronize() async throws {
        _ = try await perform(.synchronize)
    }

    // MARK: - Presence

    /// Watch: the app moved to the foreground or background (reachability follows).
    public func setForeground(_ foreground: Bool) {
        _ = performNow(.setForeground(foreground))
    }

    /// Watch: sends the widget faces (SVG) for the relay's console; dropped while not
    /// activated or not paired (see PROTOCOL.md, `faces`).
    public func publishFaces(_ svg: String) {
        _ = performNow(.publishFaces(svg))
    }

    // MARK: - The four modes

    /// `sendMessage(_:replyHandler:errorHandler:)`: a live message; with `wantsReply`, returns
    /// the counterpart's reply.
    ///
    /// - Throws: ``RelaySessionError/notReachable`` (at once, without sending, when the relay
    ///   last said the counterpart is not reachable or the connection is being made again after
    ///   a drop; or if the counterpart leaves before replying), ``RelaySessionError/replyTimeout``, ``RelaySessionError/payloadTooLarge(size:limit:)``.
    public func sendMessage(_ payload: Payload, wantsReply: Bool = true) async throws -> Payload? {
        guard case .reply(let reply) = try await perform(.sendMessage(payload, wantsReply: wantsReply)) else { return nil }
        return reply
    }

    /// The same message, without waiting for its answer: returns once the session has it, so
    /// messages handed in one after another go out in that order, none held back by an earlier
    /// one's pending reply (as WatchConnectivity's). `answer` runs on this actor when the message is
    /// done: later, or before this returns when it fails at once (too large, not activated; keep it
    /// short: hand the result on), with the reply (nil when none was asked for), or the error
    /// ``sendMessage(_:wantsReply:)`` would throw.
    public func sendMessage(
        _ payload: Payload, wantsReply: Bool, answer: @escaping @Sendable (Result<Payload?, RelaySessionError>) -> Void
    ) {
        submit(.sendMessage(payload, wantsReply: wantsReply)) { result in
            answer(
                result.map { outcome in
                    guard case .reply(let reply) = outcome else { return nil }
                    return reply
                })
        }
    }

    /// Answers a received message that wants a reply.
    ///
    /// Only the first answer goes out, and only within the relay's reply timeout of the
    /// message's arrival on the current connection: a later one is dropped (its sender already
    /// had a reply or an error; the relay would refuse it with `unknown_id`), as
    /// WatchConnectivity ignores a reply handler called twice or too late.
    public func reply(to delivery: Delivery, with payload: Payload) throws {
        _ = try performNow(.reply(to: delivery, payload)).get()
    }

    /// `updateApplicationContext(_:)`: latest wins; returns once the relay stored it.
    ///
    /// Returned means stored. A durable send that went out and got no answer within the request
    /// timeout may be held by the relay: the call throws ``RelaySessionError/timeout(_:)``, and
    /// the session keeps the item and sends it again with the same id after each reconnect (the
    /// relay stores an id once), so it is never lost nor stored twice; a late `accepted` records
    /// it (``outstandingUserInfoTransfers`` for a userInfo). Sending it again yourself makes a
    /// second item (WatchConnectivity's receiver drops it by its transfer id).
    ///
    /// - Throws: ``RelaySessionError/timeout(_:)`` (it never went out, or went out and the relay
    ///   may hold it: see above); the relay's refusal; ``RelaySessionError/disconnected`` if the
    ///   session is closed (or replaced) first, when the relay may hold it too.
    public func updateApplicationContext(_ payload: Payload) async throws {
        _ = try await perform(.updateContext(payload))
    }

    /// `transferUserInfo(_:)`: a durable FIFO transfer; returns once the relay accepted it.
    ///
    /// Returns when the relay accepted it: the transfer is then in
    /// ``outstandingUserInfoTransfers``, or already finished if the relay reported it
    /// transferred first (``SessionEvent/userInfoTransferFinished(id:)`` follows the return). A
    /// timeout after it went out leaves it with the session, sent again with its id (see
    /// ``updateApplicationContext(_:)``).
    @discardableResult
    public func transferUserInfo(_ payload: Payload) async throws -> UserInfoTransfer {
        try Self.transfer(try await perform(.transferUserInfo(payload)))
    }

    /// `transferCurrentComplicationUserInfo(_:)` (phone only): jumps the queue, within the
    /// daily budget; past it, it goes as plain userInfo. Waits and throws as
    /// ``transferUserInfo(_:)``.
    @discardableResult
    public func transferCurrentComplicationUserInfo(_ payload: Payload) async throws -> UserInfoTransfer {
        try Self.transfer(try await perform(.transferComplication(payload)))
    }

    /// `WCSessionUserInfoTransfer.cancel()`: removes an undelivered transfer.
    ///
    /// When the answer is lost (``RelaySessionError/disconnected``, or ``RelaySessionError/timeout(_:)``
    /// after the cancel went out) the relay may have cancelled it: the session asks again after
    /// each reconnect until the relay answers, and meanwhile never reports the transfer finished
    /// from an `outstanding` list (only a `transferred` does). If it was cancelled it leaves
    /// ``outstandingUserInfoTransfers`` with no finished event. That memory is not stored: after a
    /// restart a transfer the relay no longer lists counts as finished.
    ///
    /// - Throws: `relay(already_delivered)` if it was already delivered.
    public func cancel(_ transfer: UserInfoTransfer) async throws {
        _ = try await perform(.cancel(transferID: transfer.id))
    }

    /// Acknowledges a durable delivery the app has handled (WC: the delegate method returned).
    /// The ack goes out once the new `lastSeq` is saved; if saving fails, ``events`` carries
    /// ``SessionEvent/error(_:)`` and the item is delivered again.
    public func acknowledge(_ delivery: Delivery) {
        _ = performNow(.acknowledge(delivery))
    }

    /// The app could not handle a durable delivery (e.g. its store failed): it is not
    /// acknowledged, and the relay delivers it again, with everything after it, on a new
    /// connection (the session reconnects). Without this, an item left unacknowledged
    /// counts as handled when it comes again, and no later ack passes it.
    public func release(_ delivery: Delivery) {
        _ = performNow(.release(delivery))
    }

    private static func transfer(_ outcome: SessionOutcome) throws -> UserInfoTransfer {
        guard case .transfer(let t) = outcome else {
            throw RelaySessionError.relay(code: .internal, message: "unexpected answer to a transfer")
        }
        return t
    }
}

extension RelaySessionConfiguration {
    /// The core's settings, with a fresh id prefix and jitter seed for this run.
    func coreSettings() -> SessionCore.Settings {
        SessionCore.Settings(
            role: role, deviceName: deviceName, foreground: foreground, backoff: backoff,
            requestTimeout: .milliseconds(Int64(Self.clampedTimeout(requestTimeoutSeconds) * 1000)),
            idPrefix: UUID().uuidString.lowercased(), seed: UInt64.random(in: .min ... .max))
    }
}
