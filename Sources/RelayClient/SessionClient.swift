import RelayProtocol

/// The session as an app sees it, injectable: a `Sendable` struct of closures (like
/// `GitHubClient`). ``live(_:)`` wraps a ``RelaySession`` over lws; the `InMemoryRelay`
/// module wires the same ``SessionCore`` straight to a relay core, with no sockets, for
/// tests and the simulator.
public struct SessionClient: Sendable {
    /// Everything that reaches this device, in order. Iterate it from one task.
    public var events: AsyncStream<SessionEvent>
    /// Connects; returns once the relay's `welcome` arrived.
    public var activate: @Sendable () async throws -> Void
    /// Closes the connection and stops reconnecting; finishes ``events``.
    public var close: @Sendable () async -> Void
    /// Says this device's app was uninstalled (`state` `{appInstalled: false}`, PROTOCOL.md
    /// §7.1), then closes as ``close`` does; the next session on this device's state that
    /// activates is the app installed again (``RelaySession/uninstallApp()``). Returns whether
    /// the relay was told (false when not activated: the peer still sees the app installed).
    public var uninstallApp: @Sendable () async -> Bool
    /// Phone: a pairing code for the watch.
    public var beginPairing: @Sendable () async throws -> PairingCode
    /// Watch: joins the phone showing the code; returns once paired.
    public var pair: @Sendable (_ code: String) async throws -> Void
    /// Leaves the pair.
    public var unpair: @Sendable () async throws -> Void
    /// Watch: foreground or background.
    public var setForeground: @Sendable (_ foreground: Bool) async -> Void
    /// A live message; with `wantsReply`, the counterpart's reply.
    public var sendMessage: @Sendable (_ payload: Payload, _ wantsReply: Bool) async throws -> Payload?
    /// Answers a received message.
    public var reply: @Sendable (_ delivery: Delivery, _ payload: Payload) async throws -> Void
    /// Latest-wins application context; returns once the relay stored it.
    public var updateApplicationContext: @Sendable (_ payload: Payload) async throws -> Void
    /// A durable userInfo transfer; returns once the relay accepted it.
    public var transferUserInfo: @Sendable (_ payload: Payload) async throws -> UserInfoTransfer
    /// Phone: the current complication info.
    public var transferCurrentComplicationUserInfo: @Sendable (_ payload: Payload) async throws -> UserInfoTransfer
    /// Cancels an undelivered transfer.
    public var cancel: @Sendable (_ transfer: UserInfoTransfer) async throws -> Void
    /// The app handled a durable delivery.
    public var acknowledge: @Sendable (_ delivery: Delivery) async -> Void
    /// Returns once every frame the relay sent before now reached ``events``.
    public var synchronize: @Sendable () async throws -> Void
    /// The session's state now.
    public var status: @Sendable () async -> SessionStatus
    /// Hands a durable delivery the app could not handle back, so it comes again and later
    /// acks can pass it (``RelaySession/release(_:)``); nil where the session has no such
    /// command (the in-memory relay), and the delivery then waits for the next connection.
    public var release: (@Sendable (_ delivery: Delivery) async -> Void)?
    /// Watch: the widget faces (SVG) for the relay's console; a no-op unless set (the live
    /// session sends a `faces` frame).
    public var publishFaces: @Sendable (_ svg: String) async -> Void = { _ in }

    /// A client from its endpoints.
    public init(
        events: AsyncStream<SessionEvent>,
        activate: @escaping @Sendable () async throws -> Void,
        close: @escaping @Sendable () async -> Void,
        uninstallApp: @escaping @Sendable () async -> Bool,
        beginPairing: @escaping @Sendable () async throws -> PairingCode,
        pair: @escaping @Sendable (_ code: String) async throws -> Void,
        unpair: @escaping @Sendable () async throws -> Void,
        setForeground: @escaping @Sendable (_ foreground: Bool) async -> Void,
        sendMessage: @escaping @Sendable (_ payload: Payload, _ wantsReply: Bool) async throws -> Payload?,
        reply: @escaping @Sendable (_ delivery: Delivery, _ payload: Payload) async throws -> Void,
        updateApplicationContext: @escaping @Sendable (_ payload: Payload) async throws -> Void,
        transferUserInfo: @escaping @Sendable (_ payload: Payload) async throws -> UserInfoTransfer,
        transferCurrentComplicationUserInfo: @escaping @Sendable (_ payload: Payload) async throws -> UserInfoTransfer,
        cancel: @escaping @Sendable (_ transfer: UserInfoTransfer) async throws -> Void,
        acknowledge: @escaping @Sendable (_ delivery: Delivery) async -> Void,
        synchronize: @escaping @Sendable () async throws -> Void,
        status: @escaping @Sendable () async -> SessionStatus
    ) {
        self.events = events
        self.activate = activate
        self.close = close
        self.uninstallApp = uninstallApp
        self.beginPairing = beginPairing
        self.pair = pair
        self.unpair = unpair
        self.setForeground = setForeground
        self.sendMessage = sendMessage
        self.reply = reply
        self.updateApplicationContext = updateApplicationContext
        self.transferUserInfo = transferUserInfo
        self.transferCurrentComplicationUserInfo = transferCurrentComplicationUserInfo
        self.cancel = cancel
        self.acknowledge = acknowledge
        self.synchronize = synchronize
        self.status = status
    }

    /// The client of a live ``RelaySession`` (lws).
    public static func live(_ session: RelaySession) -> SessionClient {
        var client = SessionClient(
            events: session.events,
            activate: { try await session.activate() },
            close: { await session.close() },
            uninstallApp: { await session.uninstallApp() },
            beginPairing: { try await session.beginPairing() },
            pair: { try await session.pair(code: $0) },
            unpair: { try await session.unpair() },
            setForeground: { await session.setForeground($0) },
            sendMessage: { try await session.sendMessage($0, wantsReply: $1) },
            reply: { try await session.reply(to: $0, with: $1) },
            updateApplicationContext: { try await session.updateApplicationContext($0) },
            transferUserInfo: { try await session.transferUserInfo($0) },
            transferCurrentComplicationUserInfo: { try await session.transferCurrentComplicationUserInfo($0) },
            cancel: { try await session.cancel($0) },
            acknowledge: { await session.acknowledge($0) },
            synchronize: { try await session.synchronize() },
            status: { await session.status })
        client.publishFaces = { await session.publishFaces($0) }
        client.release = { await session.release($0) }
        return client
    }
}

/// What a session is now (WCSession's properties, in one value).
public struct SessionStatus: Sendable, Equatable {
    public var activationState: ActivationState
    public var isPaired: Bool
    public var isReachable: Bool
    /// Whether the counterpart's app is installed (PROTOCOL.md §7.1; true while not paired).
    public var isPeerAppInstalled: Bool
    public var peerName: String?
    /// The pair this device is in (the relay's `pairId`); nil while not paired.
    public var pairID: String?
    public var limits: Limits
    public var isForeground: Bool
    public var outstandingUserInfoTransfers: [UserInfoTransfer]
    public var remainingComplicationUserInfoTransfers: Int
    /// The durable ack this device resumes from.
    public var lastSeq: Int64
    /// The last context this device handled (`WCSession.receivedApplicationContext`), kept in
    /// the session's state: what an app starting without its own copy shows.
    public var receivedApplicationContext: Payload?
    /// Whether the app handled (and the session durably acked) everything it received.
    public var handledEverythingReceived: Bool
    /// Why the last connection attempt failed, until one opens (nil before any failed): the
    /// relay can't be reached.
    public var lastConnectFailure: String?

    /// The status a core is in.
    public init(_ core: SessionCore) {
        activationState = core.activationState
        isPaired = core.isPaired
        isReachable = core.isReachable
        isPeerAppInstalled = core.isPeerAppInstalled
        peerName = core.peerName
        pairID = core.pairID
        limits = core.limits
        isForeground = core.isForeground
        outstandingUserInfoTransfers = core.outstandingUserInfoTransfers
        remainingComplicationUserInfoTransfers = core.remainingComplicationUserInfoTransfers
        lastSeq = core.lastSeq
        receivedApplicationContext = core.receivedApplicationContext
        handledEverythingReceived = core.lastSeq >= core.receivedThrough
        lastConnectFailure = core.lastConnectFailure
    }
}
