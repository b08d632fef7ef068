import RelayProtocol

/// The client side of the relay protocol as a value type: inputs and `now` in, actions out.
///
/// It owns everything a device's session decides — hello/welcome/resume with `lastSeq`,
/// pairing, the four send modes, acks only up to the first item the app has not handled,
/// reconciling outstanding transfers after a reconnect, request and reply timeouts and the
/// reconnect back-off (all as deadlines), the complication budget — and does no I/O: the
/// driver (``RelaySession`` over lws, or an in-memory relay in tests) opens connections,
/// sends frames, writes the store and arms one timer. Ids and randomness are injected
/// (``Settings/idPrefix``, ``Settings/seed``), so every run can be replayed.
///
/// Durability rule: an ack goes out only after the write of its `lastSeq` succeeded. When a
/// write fails the app gets ``SessionEvent/error(_:)``, the session forgets what it received
/// past the last durable ack and reconnects, so the relay delivers those items again. An
/// item the app could not handle (``SessionCommand/release(_:)``) goes the same way.
public struct SessionCore: Sendable {
    /// What does not change during a session.
    public struct Settings: Sendable {
        public var role: Role
        public var deviceName: String
        /// Watch only: foreground at start.
        public var foreground: Bool
        /// Reconnect delays in seconds (the last repeats), each with ±20 % jitter.
        public var backoff: [Double]
        /// How long a request (and activation) waits for the relay.
        public var requestTimeout: Duration
        /// Prefix of every frame id this session makes (unique per process run).
        public var idPrefix: String
        /// Seed of the back-off jitter.
        public var seed: UInt64

        public init(
            role: Role, deviceName: String, foreground: Bool = true, backoff: [Double] = [0.05, 0.2, 0.5, 1, 2, 5],
            requestTimeout: Duration = .seconds(10), idPrefix: String, seed: UInt64
        ) {
            self.role = role
            self.deviceName = deviceName
            self.foreground = foreground
            self.backoff = backoff
            self.requestTimeout = requestTimeout
            self.idPrefix = idPrefix
            self.seed = seed
        }
    }

    /// Where the connection is.
    enum Phase: Sendable, Equatable {
        /// `activate` was never asked for.
        case idle
        case connecting
        /// Open, `hello` sent, no `welcome` yet.
        case helloSent
        case activated
        /// Waiting out the back-off before the next `connect`.
        case backingOff(until: ContinuousClock.Instant)
        /// Another connection of this device replaced this one (close 4001): never reconnect.
        case replaced
        case closed
    }

    /// A request frame sent (or waiting to be sent) with its answer still to come.
    struct Pending: Sendable {
        enum Kind: Sendable, Equatable {
            case pairBegin, pairJoin, unpair, cancel(target: String), outstanding
            case message(wantsReply: Bool)
            case durable(DeliveryMode, Payload)
        }
        var id: String
        var ticket: SessionTicket?
        var kind: Kind
        var frame: ClientFrame
        var deadline: ContinuousClock.Instant
        var sent: Bool
        /// It went out on some connection (`sent` is only this connection's): for a durable
        /// send, the relay may hold it, so it is never failed for a timeout (see
        /// `unansweredDurables`); for a cancel, the relay may have cancelled.
        var wentOut = false
        /// Sends that need a pair (messages and durable items).
        var needsPair: Bool {
            switch kind {
            case .message, .durable: return true
            default: return false
            }
        }
    }

    /// Why a write was asked for, so its answer can do the rest.
    enum WritePurpose: Sendable {
        /// Send `ack(through)` once durable.
        case ack(through: Int64)
        /// Finish a command once durable.
        case complete(SessionTicket, SessionOutcome)
        /// Finish a command, then tell the app (what happened at the relay, whether the write
        /// succeeded or not: a transfer accepted after it was already transferred).
        case completeThenEmit(SessionTicket?, SessionOutcome, [SessionEvent])
        /// Nothing waits; a failure is reported.
        case plain
        /// Tell the app once durable (or once the write failed, after the error: what the
        /// events say happened at the relay either way).
        case emit([SessionEvent])
    }

    public let settings: Settings

    // What the app sees (WCSession's properties).
    public internal(set) var isPaired = false
    public internal(set) var isReachable = false
    /// Whether the counterpart's app is installed (`peer.appInstalled`, PROTOCOL.md §7.1): WC's
    /// `isWatchAppInstalled` (phone) and `isCompanionAppInstalled` (watch), with ``isPaired``.
    public internal(set) var isPeerAppInstalled = true
    public internal(set) var peerName: String?
    public internal(set) var pairID: String?
    public internal(set) var limits = Limits.default
    public internal(set) var receivedApplicationContext: Payload?
    public internal(set) var applicationContext: Payload?
    public internal(set) var outstandingUserInfoTransfers: [UserInfoTransfer] = []
    public internal(set) var remainingComplicationUserInfoTransfers = Limits.default.complicationsPerDay
    public internal(set) var isForeground: Bool

    var phase = Phase.idle
    var token: String?
    var tracker: DeliveryTracker
    /// The highest seq whose ack is durable (what `hello.lastSeq` says).
    var durableThrough: Int64
    /// The highest ack sent on this connection.
    var ackSent: Int64 = 0
    /// After a failed write: ignore deliveries until the next connection.
    var resyncing = false
    var lostConnectionOnce = false
    /// A welcome came once: messages no longer wait for one (see `counterpartAway`).
    var welcomedOnce = false
    var attempt = 0
    var helloID = ""
    var nextID: UInt64 = 0
    var nextWriteID = 0
    var random: SessionRandom
    var pending = PendingList()
    /// Durable sends past their deadline that went out at least once: the relay may hold them,
    /// so they are neither failed nor dropped (a caller told "timeout" would send the item again
    /// under a new id, and it would arrive twice). Their callers keep waiting; each goes again
    /// with its id after every welcome, ahead of the requests in `pending`, until the relay
    /// answers (`accepted` again for an id it holds, §8.1). Apart from `pending` because they
    /// have no deadline.
    var unansweredDurables: [Pending] = []
    /// Targets of cancels that went out with no answer yet, in the order asked. The relay may
    /// have cancelled them, so a reconcile never reports them transferred (§8.7: "… and that
    /// it did not cancel"), and each is asked again after every welcome. In memory only: the
    /// store has no place for them, so after a restart an answer lost before it counts as
    /// no cancel.
    var cancelsInFlight: [String] = []
    /// Ids the relay reported transferred before their send's `accepted` came (a retry after a
    /// drop: the pending `transferred` follows the welcome, the retry's `accepted` comes later):
    /// the `accepted` finishes them instead of making them outstanding.
    var finishedBeforeAccepted: Set<String> = []
    var replyWaiters = ReplyWaiters()
    var earlyReplies: [String: Result<Payload, RelaySessionError>] = [:]
    /// Received messages that wait for this device's reply (a second or late one is not sent).
    var owedReplies = OwedReplies()
    var activationWaiters: [(ticket: SessionTicket, deadline: ContinuousClock.Instant)] = []
    var writes: [Int: WritePurpose] = [:]
    var armed: ContinuousClock.Instant?
    var now: ContinuousClock.Instant = .now
    var out: [SessionAction] = []
    /// Why the last connection attempt failed, until one opens.
    var lastConnectFailure: String?

    /// A session restored from `snapshot` (what its store held).
    public init(settings: Settings, restored snapshot: SessionSnapshot = SessionSnapshot()) {
        self.settings = settings
        token = snapshot.token
        pairID = snapshot.pairID
        peerName = snapshot.peerName
        isPaired = snapshot.token != nil
        tracker = DeliveryTracker(lastSeq: snapshot.lastSeq)
        durableThrough = snapshot.lastSeq
        receivedApplicationContext = snapshot.receivedContext
        applicationContext = snapshot.sentContext
        outstandingUserInfoTransfers = snapshot.transfers
        isForeground = settings.foreground
        random = SessionRandom(seed: settings.seed)
    }

    /// `WCSession.activationState`.
    public var activationState: ActivationState {
        if phase == .activated { return .activated }
        return lostConnectionOnce ? .inactive : .notActivated
    }

    /// Whether the session was started and not closed.
    public var isRunning: Bool { phase != .idle && phase != .closed }

    /// The `lastSeq` this device would resume from (its durable ack).
    public var lastSeq: Int64 { durableThrough }

    /// The highest seq of a durable item handed to the app; once ``lastSeq`` reaches it, the
    /// app has handled (and the session durably acked) everything it received. Messages do not
    /// count: they are never acked (the next durable ack covers their seqs).
    public var receivedThrough: Int64 { tracker.highestDurableReceived }

    /// Handles one input at `now`; returns what the driver must do, in order.
    public mutating func handle(_ input: SessionInput, now: ContinuousClock.Instant) -> [SessionAction] {
        self.now = now
        out = []
        switch input {
        case .command(let ticket, let command): run(command, ticket)
        case .connected: connected()
        case .connectFailed(let reason):
            lastConnectFailure = reason
            connectionLost(code: nil)
        case .closed(let code): connectionLost(code: code)
        case .frame(let frame): received(frame)
        case .persisted(let id): writeSucceeded(id)
        case .persistFailed(let id, let reason): writeFailed(id, reason)
        case .tick: expireDeadlines()
        }
        armNextDeadline()
        let actions = out
        out = []
        return actions
    }

    // MARK: - Helpers shared by the extensions

    mutating func makeID() -> String {
        nextID += 1
        return "\(settings.idPrefix)-\(nextID)"
    }

    mutating func emit(_ event: SessionEvent) { out.append(.emit(event)) }

    mutating func send(_ frame: ClientFrame) { out.append(.send(frame)) }

    mutating func complete(_ ticket: SessionTicket?, _ result: Result<SessionOutcome, RelaySessionError>) {
        if let ticket { out.append(.complete(ticket, result)) }
    }

    mutating func persist(_ records: [SessionRecord], _ purpose: WritePurpose) {
        nextWriteID += 1
        writes[nextWriteID] = purpose
        out.append(.persist(SessionWrite(id: nextWriteID, records: records)))
    }

    mutating func setReachable(_ reachable: Bool) {
        guard reachable != isReachable else { return }
        isReachable = reachable
        emit(.reachabilityChanged(reachable))
    }

    /// Records whether the counterpart's app is installed; a change is an event.
    mutating func setPeerAppInstalled(_ installed: Bool) {
        guard installed != isPeerAppInstalled else { return }
        isPeerAppInstalled = installed
        emit(.peerAppInstalledChanged(installed))
    }

    var requestDeadline: ContinuousClock.Instant { now + settings.requestTimeout }

    // MARK: - Writes

    private mutating func writeSucceeded(_ id: Int) {
        switch writes.removeValue(forKey: id) {
        case .ack(let through)?:
            durableThrough = max(durableThrough, through)
            if phase == .activated && through > ackSent {
                ackSent = through
                send(.ack(Ack(seq: through)))
            }
        case .complete(let ticket, let outcome)?:
            complete(ticket, .success(outcome))
        case .completeThenEmit(let ticket, let outcome, let events)?:
            complete(ticket, .success(outcome))
            for event in events { emit(event) }
        case .emit(let events)?:
            for event in events { emit(event) }
        case .plain?, nil:
            break
        }
    }

    private mutating func writeFailed(_ id: Int, _ reason: String) {
        let error = RelaySessionError.persistFailed(reason)
        emit(.error(error))
        switch writes.removeValue(forKey: id) {
        case .ack?:
            // Nothing past the durable ack may be acked: forget it and let the relay send it again.
            resync(reason: "resync after a failed save")
        case .complete(let ticket, _)?:
            complete(ticket, .failure(error))
        case .completeThenEmit(let ticket, let outcome, let events)?:
            complete(ticket, .success(outcome))
            for event in events { emit(event) }
        case .emit(let events)?:
            for event in events { emit(event) }
        case .plain?, nil:
            break
        }
    }

    /// Forgets every delivery past the durable ack and, if connected, drops the connection
    /// (ignoring the rest of its deliveries): the next hello resumes from the durable ack, so
    /// the relay delivers those items again and they count as new. A redelivery on the same
    /// connection would be skipped as handled, and no ack would ever pass it.
    mutating func resync(reason: String) {
        tracker = DeliveryTracker(lastSeq: durableThrough)
        if phase == .activated || phase == .helloSent {
            resyncing = true
            out.append(.disconnect(code: 1000, reason: reason))
        }
    }

    // MARK: - Deadlines

    /// The earliest instant something is due. Asked after every input, and WatchConnectivity
    /// may have thousands of messages waiting for replies: one pass, nothing copied.
    var nextDeadline: ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        func consider(_ instant: ContinuousClock.Instant) {
            if earliest.map({ instant < $0 }) ?? true { earliest = instant }
        }
        if let oldest = pending.first { consider(oldest.deadline) }
        if let earliest = replyWaiters.earliestDeadline { consider(earliest) }
        for w in activationWaiters { consider(w.deadline) }
        if case .backingOff(let until) = phase { consider(until) }
        return earliest
    }

    private mutating func armNextDeadline() {
        let next = nextDeadline
        if next != armed {
            armed = next
            out.append(.armDeadline(next))
        }
    }

    private mutating func expireDeadlines() {
        if case .backingOff(let until) = phase, until <= now {
            phase = .connecting
            out.append(.connect)
        }
        let welcome = "the relay's welcome" + (lastConnectFailure.map { " (the last connection attempt: \($0))" } ?? "")
        for w in activationWaiters where w.deadline <= now {
            complete(w.ticket, .failure(.timeout(welcome)))
        }
        activationWaiters.removeAll { $0.deadline <= now }
        let due = pending.filter { $0.deadline <= now }
        pending.removeAll { $0.deadline <= now }
        var failures: [(SessionTicket?, RelaySessionError)] = []
        for p in due {
            if case .durable = p.kind, p.wentOut {
                // The relay may hold it: it stays, goes again with its id after each welcome, and
                // a late `accepted` records it. Its caller is told `timeout` now: a call that
                // waited for the relay to come back left the phone's `add` without an answer
                // while the relay was down.
                failures.append((p.ticket, .timeout("the answer to \(p.frame.type) (it goes again with its id)")))
                var kept = p
                kept.ticket = nil
                unansweredDurables.append(kept)
            } else {
                failures.append((p.ticket, .timeout(p.sent ? "the answer to \(p.frame.type)" : welcome)))
            }
        }
        failures += replyWaiters.removeDue(at: now).map { ($0, .replyTimeout) }
        failInOrder(failures)
    }

    /// Fails commands in the order they were given (tickets grow with each): requests not yet
    /// answered and messages waiting for their reply end together in a drop, a close or a
    /// timeout, and a burst of messages holds both; their ids say nothing of the order
    /// (WatchConnectivity's are UUIDs).
    mutating func failInOrder(_ failures: [(SessionTicket?, RelaySessionError)]) {
        for (ticket, error) in failures.sorted(by: { ($0.0?.value ?? 0) < ($1.0?.value ?? 0) }) {
            complete(ticket, .failure(error))
        }
    }
}
