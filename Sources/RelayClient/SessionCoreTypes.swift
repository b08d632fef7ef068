import RelayProtocol

/// Names one caller waiting for a ``SessionCore`` command; the driver picks it, the core
/// answers with ``SessionAction/complete(_:_:)`` carrying the same ticket.
public struct SessionTicket: Sendable, Hashable {
    public var value: UInt64
    public init(_ value: UInt64) { self.value = value }
}

/// What an app asks of the session (one per public ``RelaySession`` call).
public enum SessionCommand: Sendable, Equatable {
    /// Start connecting (if not yet); completes once a `welcome` arrived.
    case activate
    /// Phone: ask for a pairing code.
    case beginPairing
    /// Watch: join the phone showing `code`.
    case pair(code: String)
    /// Leave the pair.
    case unpair
    /// A live message; with `wantsReply`, completes with the reply.
    case sendMessage(Payload, wantsReply: Bool)
    /// Answer a received message.
    case reply(to: Delivery, Payload)
    /// Latest-wins application context.
    case updateContext(Payload)
    /// A durable FIFO userInfo transfer.
    case transferUserInfo(Payload)
    /// Phone: the current complication info.
    case transferComplication(Payload)
    /// Cancel an outstanding transfer by its send id.
    case cancel(transferID: String)
    /// Watch: the app moved to the foreground or the background.
    case setForeground(Bool)
    /// Watch: the widget faces as SVG for the relay's console (`faces`; sent only while
    /// activated and paired, never queued: the next change sends the next picture).
    case publishFaces(String)
    /// The app handled a delivery (durably, for context and userInfo).
    case acknowledge(Delivery)
    /// The app could not handle a durable delivery (its store failed): not handled, deliver it
    /// again. The session forgets what it received past its durable ack and reconnects, as
    /// after a failed save, so the relay sends it (and everything after it) again.
    case release(Delivery)
    /// A round trip (`outstanding`): completes once every frame the relay sent before its
    /// answer was handled — after a `welcome`, the whole backlog (§5.3).
    case synchronize
    /// Stop: close the connection and never reconnect.
    case close
    /// The app was uninstalled: tell the relay (`state` `{appInstalled: false}`), then stop as
    /// ``close``; fails with ``RelaySessionError/notActivated`` (stopped all the same) when not
    /// activated, as nothing could be said.
    case uninstallApp
}

/// What a finished command yields.
public enum SessionOutcome: Sendable, Equatable {
    case done
    case pairingCode(PairingCode)
    /// `sendMessage`: the reply (nil when none was wanted).
    case reply(Payload?)
    case transfer(UserInfoTransfer)
}

/// Everything that can happen to a session: the driver feeds these in with `now`.
public enum SessionInput: Sendable, Equatable {
    case command(SessionTicket, SessionCommand)
    /// The WebSocket connection asked for by ``SessionAction/connect`` is open.
    case connected
    /// It could not be opened (refused, TLS, timeout): `reason` in words, when known (a
    /// request that times out waiting for the welcome names it).
    case connectFailed(reason: String? = nil)
    /// The open connection closed (`code` from the close frame, if any).
    case closed(code: UInt16?)
    /// A frame from the relay.
    case frame(RelayFrame)
    /// The write ``SessionAction/persist(_:)`` asked for is durable.
    case persisted(id: Int)
    /// That write failed: nothing it stood for may be acked.
    case persistFailed(id: Int, reason: String)
    /// The deadline armed last is due (early or spurious ticks are harmless).
    case tick
}

/// One piece of durable session state.
public enum SessionRecord: Sendable, Equatable {
    case token(String?)
    case pairID(String?)
    case peerName(String?)
    case lastSeq(Int64)
    case receivedContext(Payload?)
    case sentContext(Payload?)
    case transfers([UserInfoTransfer])
}

/// Writes to make durable together (one transaction); answer with `persisted` or `persistFailed`.
public struct SessionWrite: Sendable, Equatable {
    public var id: Int
    public var records: [SessionRecord]
}

/// What the driver must do, in order.
public enum SessionAction: Sendable, Equatable {
    /// Open a WebSocket connection to the relay; answer with `connected` or `connectFailed`.
    case connect
    /// Close the open connection; answer with `closed` when it is gone.
    case disconnect(code: UInt16, reason: String)
    /// Send a frame on the open connection.
    case send(ClientFrame)
    /// Make these records durable, then answer.
    case persist(SessionWrite)
    /// Hand an event to the app.
    case emit(SessionEvent)
    /// Finish the command with this ticket.
    case complete(SessionTicket, Result<SessionOutcome, RelaySessionError>)
    /// Feed `tick` at this instant (replaces the previous deadline; nil: none).
    case armDeadline(ContinuousClock.Instant?)
}

/// What a session restores from its store at start.
public struct SessionSnapshot: Sendable, Equatable {
    public var token: String?
    public var pairID: String?
    public var peerName: String?
    public var lastSeq: Int64
    public var receivedContext: Payload?
    public var sentContext: Payload?
    public var transfers: [UserInfoTransfer]

    public init(
        token: String? = nil, pairID: String? = nil, peerName: String? = nil, lastSeq: Int64 = 0,
        receivedContext: Payload? = nil, sentContext: Payload? = nil, transfers: [UserInfoTransfer] = []
    ) {
        self.token = token
        self.pairID = pairID
        self.peerName = peerName
        self.lastSeq = lastSeq
        self.receivedContext = receivedContext
        self.sentContext = sentContext
        self.transfers = transfers
    }
}

/// SplitMix64: the core's own seeded randomness (back-off jitter), so a test replays it.
struct SessionRandom: Sendable, Equatable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A uniform value in 0..<1.
    mutating func unit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}
