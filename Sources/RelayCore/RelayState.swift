import Primitives
import RelayProtocol

/// The relay as a synchronous state machine: events in, actions out.
///
/// No I/O, no clock, no randomness of its own: `now` comes with every event and the
/// ``RelayEnvironment`` makes codes, tokens and ids. The server interprets the actions in
/// order: it commits `.persist` mutations (in groups) before it sends the frames that follow.
public struct RelayState: Sendable {
    /// A connection's progress.
    enum Phase: Sendable, Equatable {
        /// Connected; no `hello` yet.
        case awaitingHello
        /// `hello` accepted.
        case ready
        /// The core asked to close it; further frames are ignored.
        case closing
    }

    /// A device session on one connection.
    struct Session: Sendable {
        var role: Role
        var deviceName: String
        /// Set once the device belongs to a pair.
        var pairID: PairID?
        var deviceID: DeviceID?
        /// Watch only.
        var foreground: Bool

        /// Whether the device takes messages when nothing else stops it: a phone always, a
        /// watch in the foreground (§7).
        var awake: Bool { role == .phone || foreground }
    }

    struct Link: Sendable {
        var id: LinkID
        var address: String
        var phase: Phase = .awaitingHello
        var session: Session?
        /// Where the session's pair was in `pairs` when last looked up (-1: never): a `send`
        /// finds its pair by comparing ids instead of hashing one (``DenseTable/position(of:hint:)``).
        var pairHint = -1
        /// The live pairing code this (phone) connection asked for.
        var pairingCode: String?
        var wrongCodes = 0
        var lockedUntil: Timestamp?
        var errorTimes: [Timestamp] = []
    }

    struct HelloDeadline: Sendable {
        var link: LinkID
        var at: Timestamp
    }

    struct PendingCode: Sendable {
        var link: LinkID
        var expiresAt: Timestamp
    }

    /// A `message` with `wantsReply` waiting for its `reply`.
    struct PendingReply: Sendable {
        var requester: LinkID?
        var replier: LinkID
        var deadline: Timestamp
    }

    struct ReplyKey: Hashable, Sendable {
        var pair: PairID
        var requesterRole: Role
        var sendID: ExactID
    }

    /// Its rules and limits; only the limits change after it starts (``setLimits(_:)``).
    public private(set) var configuration: RelayConfiguration
    let environment: RelayEnvironment
    var links: DenseTable<LinkID, Link> = [:]
    var pairs: DenseTable<PairID, PairState> = [:]
    /// Token hash → device.
    var tokens: [String: DeviceID] = [:]
    /// Device → (pair, role).
    var devices: [DeviceID: (pair: PairID, role: Role)] = [:]
    /// Device → its live connection.
    var deviceLinks: [DeviceID: LinkID] = [:]
    var codes: [String: PendingCode] = [:]
    var addressFailures: [String: [Timestamp]] = [:]
    var addressLockedUntil: [String: Timestamp] = [:]
    /// When `pruneCodes` next walks the codes and address counts (at most once a minute).
    var nextPairingSweep = Timestamp(millisecondsSinceEpoch: .min)
    /// Wrong codes relay-wide within the last code lifetime, oldest first (at most
    /// `wrongCodesPerRelay`): the relay-wide pairing limit (§6.3).
    var relayFailures = FIFOArray<Timestamp>()
    var replies = PendingReplies()
    /// Requests whose reply timed out within the last two reply timeouts (late replies, §4.2).
    var recentTimeouts = RecentTimeouts()
    /// Payload bytes of every durable item held, over all pairs (the relay-wide quota).
    var queuedBytesTotal = 0
    /// Open connections per client address (closing ones included: they still hold a socket).
    var addressConnections: [String: Int] = [:]
    /// When each connection must have said `hello`, in the order they opened (so in deadline order).
    var helloDeadlines = FIFOArray<HelloDeadline>()
    /// Devices a fault reports as not reachable while connected (see `RelayState+Faults`).
    var forcedUnreachable: Set<DeviceID> = []
    /// Complication transfers left, set by a fault, per pair (instead of the rolling count).
    var complicationBudgetLeft: [PairID: Int] = [:]
    /// Client frames decoded, by type (for metrics): `send` and `ack`, every transfer's, are
    /// counted apart, so that a message costs no hash of its type's name.
    private var sendsReceived = 0
    private var acksReceived = 0
    private var otherFramesReceived: [FrameType: Int] = [:]
    /// The actions of the event being handled.
    var actions: [RelayAction] = []
    var now = Timestamp(millisecondsSinceEpoch: 0)

    /// A relay with the durable state loaded from the store.
    ///
    /// - Parameter wrongPairingCodes: the stored wrong codes (``RelayStorage/loadWrongPairingCodes(now:)``),
    ///   in the order they were recorded: they bring back the address and relay-wide pairing locks.
    public init(
        configuration: RelayConfiguration = .init(), environment: RelayEnvironment, pairs: [PairSnapshot] = [],
        wrongPairingCodes: [WrongPairingCode] = []
    ) {
        self.configuration = configuration
        self.environment = environment
        for p in pairs {
            let state = PairState(snapshot: p)
            self.pairs[p.record.id] = state
            queuedBytesTotal += state.toWatch.queuedBytes + state.toPhone.queuedBytes
            register(p.record)
        }
        for wrong in wrongPairingCodes { countWrongCode(wrong) }
    }

    /// Sets the limits it announces in `welcome` and checks sends against from now on, as a
    /// relay restarted with other settings (`serve --context-bytes`…) has them: for a relay that
    /// keeps its state in memory across such a restart (`InMemoryRelay`). A device connected now
    /// keeps the limits it was welcomed with until it connects again.
    public mutating func setLimits(_ limits: Limits) {
        configuration.limits = limits
    }

    mutating func register(_ record: PairRecord) {
        for d in [record.phone, record.watch] {
            tokens[d.tokenHash] = d.id
            devices[d.id] = (record.id, d.role)
        }
    }

    // MARK: - Entry point

    /// Handles one event at `now` and returns what the relay must do, in order.
    public mutating func handle(_ event: RelayEvent, now: Timestamp) -> [RelayAction] {
        self.now = now
        // Room for a message's answers (`accepted`, `deliver`) and a seq reservation in one
        // allocation; growing from empty took two.
        actions = []
        actions.reserveCapacity(4)
        // Deadlines that passed come first: a reply arriving after its request timed out is
        // late even if no `.tick` ran in between (the requester gets one answer, not two).
        expireReplies()
        expireHellos()
        switch event {
        case .opened(let link, let address):
            opened(link, address: address)
        case .frame(let link, let bytes):
            guard let phase = links.read(link, { $0.phase }), phase != .closing else { break }
            do {
                let frame = try FrameCodec.decodeClientFrame(bytes)
                switch frame {
                case .send: sendsReceived += 1
                case .ack: acksReceived += 1
                default: otherFramesReceived[frame.type, default: 0] += 1
                }
                try handle(frame, on: link)
            } catch {
                fail(link, error)
            }
        case .binary(let link):
            guard let phase = links.read(link, { $0.phase }), phase != .closing else { break }
            fail(link, ProtocolError(.unsupportedFrame, "binary messages are not supported; send text JSON"))
        case .tooLarge(let link, let size):
            guard let phase = links.read(link, { $0.phase }), phase != .closing else { break }
            fail(link, ProtocolError(.payloadTooLarge, "message of \(size)+ bytes is over the relay's hard cap"))
        case .closed(let link):
            linkClosed(link)
        case .tick:
            break  // expired above
        case .payloadsLoaded(let pairID, let sender, let payloads):
            payloadsLoaded(pairID, sender: sender, payloads)

        }
        // Deadlines of connections that said hello (or left) go, so the first one is live.
        while let first = helloDeadlines.first, links[first.link]?.phase != .awaitingHello {
            _ = helloDeadlines.removeFirst()
        }
        let out = actions
        actions = []
        return out
    }

    /// The earliest time a `.tick` has work to do, if any.
    ///
    /// Reply timeouts and `hello` deadlines: pairing codes need no tick (`pair.join` checks
    /// expiry itself), and an expired code stays remembered, so its time would stay due and
    /// tick forever. (A `hello` deadline is dropped once due, whether or not it closed anything.)
    public var nextDeadline: Timestamp? {
        // The relay asks once per service-loop turn: the top of the requests' heap, no walk.
        let reply = replies.nextDeadline
        guard let hello = helloDeadlines.first?.at else { return reply }
        return min(hello, reply ?? hello)
    }

    /// Closes every connection that did not say `hello` in time: `hello_required`, then 1008.
    private mutating func expireHellos() {
        while let due = helloDeadlines.first, due.at <= now {
            _ = helloDeadlines.removeFirst()
            guard links[due.link]?.phase == .awaitingHello else { continue }
            let ms = configuration.helloTimeoutMs
            let seconds = ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
            close(
                due.link, after: ProtocolError(.helloRequired, "no hello within \(seconds) s of connecting"),
                reason: "no hello in time")
        }
    }

    private mutating func handle(_ frame: ClientFrame, on link: LinkID) throws(ProtocolError) {
        guard links.read(link, { $0.phase }) == .ready else {
            if case .hello(let hello) = frame { return try self.hello(hello, on: link) }
            close(
                link, after: ProtocolError(.helloRequired, "the first frame must be 'hello'", re: frame.id),
                reason: "hello required")
            return
        }
        switch frame {
        case .hello(let f): throw ProtocolError(.alreadyHello, "this connection already said hello", re: f.id)
        case .pairBegin(let f): try pairBegin(f, on: link)
        case .pairJoin(let f): try pairJoin(f, on: link)
        case .unpair(let f): try unpair(f, on: link)
        case .state(let f): try stateChange(f, on: link)
        case .send(let f): try send(f, on: link)
        case .reply(let f): try reply(f, on: link)
        case .ack(let f): try ack(f, on: link)
        case .cancel(let f): try cancel(f, on: link)
        case .outstanding(let f): try outstanding(f, on: link)
        case .faces(let f): try faces(f, on: link)
        }
    }

    // MARK: - Output helpers

    mutating func emit(_ frame: RelayFrame, to link: LinkID) {
        actions.append(.send(link, frame))
    }

    mutating func persist(_ mutation: StoreMutation) {
        actions.append(.persist(mutation))
    }

    mutating func close(_ link: LinkID, code: CloseCode, reason: String) {
        guard links[link] != nil, links[link]?.phase != .closing else { return }
        actions.append(.close(link, code, reason: reason))
        detach(link)
        links[link]?.phase = .closing
    }

    /// Sends `error` and closes with 1008.
    mutating func close(_ link: LinkID, after error: ProtocolError, reason: String) {
        emit(.error(error.frame), to: link)
        close(link, code: .policy, reason: reason)
    }

    /// Answers a bad frame with `error`; closes a connection that errs too often. `not_reachable`,
    /// `quota_exceeded` and the two app-not-installed codes do not count: they say the peer is
    /// away (or its app gone) or the relay is full, not
    /// that the frame was wrong, and an app that keeps sending through them (a phone polling an
    /// absent watch with `sendMessage`, messages sent faster than their replies come) is not
    /// misbehaving (PROTOCOL.md §4.2).
    mutating func fail(_ link: LinkID, _ error: any Error) {
        let e = (error as? ProtocolError) ?? ProtocolError(.internal, "internal error")
        emit(.error(e.frame), to: link)
        guard !e.code.reportsPeerOrRoom, var l = links[link] else { return }
        let minuteAgo = now.adding(milliseconds: -60_000)
        l.errorTimes.removeAll { $0 <= minuteAgo }
        l.errorTimes.append(now)
        links[link] = l
        if l.errorTimes.count > configuration.maxErrorsPerMinute {
            close(link, code: .policy, reason: "too many errors")
        }
    }

    // MARK: - Introspection (metrics, tests)

    /// Client frames decoded, by type.
    public var framesReceived: [FrameType: Int] {
        var all = otherFramesReceived
        if sendsReceived > 0 { all[.send] = sendsReceived }
        if acksReceived > 0 { all[.ack] = acksReceived }
        return all
    }

    /// Live connections, by phase.
    public var connectionCount: Int { links.values.filter { $0.phase != .closing }.count }
    /// Pairs that exist.
    public var pairCount: Int { pairs.count }
    /// Durable items not yet acked, over all pairs.
    public var queuedItemCount: Int { pairs.values.reduce(0) { $0 + $1.toWatch.queuedCount + $1.toPhone.queuedCount } }
    /// Pending replies.
    public var pendingReplyCount: Int { replies.count }
    /// Entries in the pending replies' deadline heap, answered ones included (for tests).
    public var pendingReplyHeapCount: Int { replies.heapCount }
    /// Pairing codes remembered: live ones, and those expired within the last 10 minutes.
    public var pairingCodeCount: Int { codes.count }
    /// Payload bytes of the durable items held, over all pairs (what the relay-wide quota counts).
    public var queuedBytes: Int { queuedBytesTotal }
    /// ``queuedBytes`` counted again from every queue (for tests: the two must agree).
    public var queuedBytesRecounted: Int { pairs.values.reduce(0) { $0 + $1.toWatch.queuedBytes + $1.toPhone.queuedBytes } }
}

extension ErrorCode {
    /// Whether the code reports the peer's state or the relay's room, not a wrong frame: such
    /// errors do not count towards the error limit (PROTOCOL.md §4.2).
    var reportsPeerOrRoom: Bool {
        self == .notReachable || self == .quotaExceeded || self == .watchAppNotInstalled
            || self == .companionAppNotInstalled
    }
}
