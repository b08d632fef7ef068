import RelayCore
import RelayProtocol
import Testing

/// A relay core with a manual clock, a deterministic environment and an in-memory store:
/// events in, decoded effects out. No sockets, no sleeping.
struct RelayHarness {
    static let start = Timestamp(iso8601: "2026-11-30T04:14:17.123Z")!
    static let phoneName = "Jiwoo's iPhone"
    static let watchName = "Jiwoo's Apple Watch"
    static let address = "203.0.113.7"

    let source: TestEnvironment
    let configuration: RelayConfiguration
    var state: RelayState
    var now = RelayHarness.start
    var store = MemoryStore()
    /// Each role's token from the last `paired` it got.
    var tokens: [Role: String] = [:]
    /// The pair of the last `paired`.
    var pairID = PairID("none")
    private var linkCount: UInt64 = 0
    private var frameCount = 0

    /// Whether every seq reservation is reported committed as soon as the core asks for it
    /// (a store that commits at once); when false, ``commitReservations()`` reports them.
    var commitsReservations = true
    /// Actions whose seq reservations are not yet reported committed (``commitsReservations`` false).
    var pendingReservations: [RelayAction] = []

    /// Whether `.loadPayloads` is answered from ``store`` within the same ``handle(_:sourceLocation:)``
    /// (its output then includes what the answer made the core do).
    var answersPayloadLoads = true

    /// A relay with `configuration`; payloads load on demand from ``store`` as in `watchrelay serve`
    /// unless `payloadsOnDemand` is false (so every core test also runs the windowed queue).
    ///
    /// The hot budget is cut to one delivery window unless `defaultHotBudget`, so that tests with
    /// a few dozen items still go through the store reads (with the default 1,024 they rarely would).
    init(
        configuration: RelayConfiguration = .init(), codes: [String] = [], payloadsOnDemand: Bool = true,
        defaultHotBudget: Bool = false
    ) {
        var configuration = configuration
        configuration.loadsPayloadsOnDemand = payloadsOnDemand
        if !defaultHotBudget {
            configuration.hotPayloadItems = min(configuration.hotPayloadItems, configuration.inFlightItems)
            configuration.hotPayloadBytes = min(configuration.hotPayloadBytes, configuration.inFlightBytes)
        }
        self.source = TestEnvironment(codes: codes)
        self.configuration = configuration
        self.state = RelayState(configuration: configuration, environment: source.environment)
    }

    // MARK: - Events

    /// Moves the clock on.
    mutating func advance(ms: Int64) { now = now.adding(milliseconds: ms) }

    @discardableResult
    mutating func handle(_ event: RelayEvent, sourceLocation: SourceLocation = #_sourceLocation) -> Output {
        var actions = state.handle(event, now: now)
        store.apply(actions)
        var answered = 0
        while answersPayloadLoads, let read = actions[answered...].firstIndex(where: \.isPayloadLoad) {
            answered = read + 1
            guard case .loadPayloads(let pair, let sender, let ids) = actions[read] else { continue }
            let more = state.handle(.payloadsLoaded(pair, direction: sender, store.payloads(pair, sender, ids)), now: now)
            store.apply(more)
            actions += more
        }
        pendingReservations += actions
        if commitsReservations { commitReservations() }
        let out = Output(actions, sourceLocation: sourceLocation)
        for (_, frame) in out.sends {
            if let p = frame.paired {
                pairID = PairID(p.pairID)
                tokens[p.re == nil ? .phone : .watch] = p.token
            }
        }
        return out
    }

    /// Reports every pending seq reservation committed, in order.
    mutating func commitReservations() {
        state.seqReservationsCommitted(in: pendingReservations)
        pendingReservations.removeAll()
    }

    /// A new connection from `address`.
    mutating func open(address: String = RelayHarness.address) -> LinkID {
        linkCount += 1
        let link = LinkID(linkCount)
        let out = handle(.opened(link, address: address))
        #expect(out.effects.isEmpty, "opening a connection sends nothing")
        return link
    }

    @discardableResult
    mutating func send(_ link: LinkID, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> Output {
        handle(.frame(link, Array(json.utf8)), sourceLocation: sourceLocation)
    }

    @discardableResult
    mutating func send(_ link: LinkID, _ frame: ClientFrame, sourceLocation: SourceLocation = #_sourceLocation) -> Output {
        handle(.frame(link, FrameCodec.encode(frame)), sourceLocation: sourceLocation)
    }

    /// The transport reports the connection gone.
    @discardableResult
    mutating func close(_ link: LinkID) -> Output { handle(.closed(link)) }

    @discardableResult
    mutating func tick() -> Output { handle(.tick) }

    /// A relay restarted from what the store holds (every connection is gone).
    mutating func restart() {
        let pairs = configuration.loadsPayloadsOnDemand ? store.index : store.snapshots
        state = RelayState(
            configuration: configuration, environment: source.environment, pairs: pairs,
            wrongPairingCodes: store.wrongPairingCodes(at: now))
    }

    /// The store effect of a wrong pairing code from `address` now that locked nothing.
    func wrongCodeCounted(from address: String = RelayHarness.address) -> Effect {
        let counted = max(60_000, configuration.pairingCodeTTLms)
        return .persist(.recordWrongPairingCode(WrongPairingCode(address: address, at: now, countsUntil: now.adding(milliseconds: counted))))
    }

    // MARK: - Frames

    /// A fresh frame id.
    mutating func nextID(_ prefix: String = "f") -> String {
        frameCount += 1
        return "\(prefix)-\(frameCount)"
    }

    /// Sends `send` and returns the output.
    @discardableResult
    mutating func send(
        _ link: LinkID, id: String, mode: DeliveryMode, _ payload: Payload = Payload(kind: "test.item"),
        wantsReply: Bool? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Output {
        send(link, .send(Send(id: id, mode: mode, payload: payload, wantsReply: wantsReply)), sourceLocation: sourceLocation)
    }

    @discardableResult
    mutating func ack(_ link: LinkID, _ seq: Int64) -> Output { send(link, .ack(Ack(seq: seq))) }

    /// The ids `outstanding` lists for the device on `link`.
    mutating func outstanding(_ link: LinkID, sourceLocation: SourceLocation = #_sourceLocation) -> [String]? {
        let id = nextID("o")
        let out = send(link, .outstanding(Request(id: id)), sourceLocation: sourceLocation)
        guard case .outstanding(let list)? = out.frames(to: link).first, list.re == id else {
            Issue.record("no outstanding answer: \(out.trace)", sourceLocation: sourceLocation)
            return nil
        }
        return list.ids
    }

    // MARK: - Sessions

    /// Says `hello` on `link`.
    @discardableResult
    mutating func hello(
        _ link: LinkID, _ role: Role, token: String? = nil, foreground: Bool? = nil, lastSeq: Int64? = nil,
        id: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Output {
        let name = role == .phone ? Self.phoneName : Self.watchName
        let hello = Hello(
            id: id ?? nextID("hello"), role: role, deviceName: name, token: token, foreground: foreground,
            lastSeq: lastSeq)
        return send(link, .hello(hello), sourceLocation: sourceLocation)
    }

    /// Opens a connection and says `hello`.
    mutating func connect(
        _ role: Role, token: String? = nil, foreground: Bool? = nil, lastSeq: Int64? = nil,
        address: String = RelayHarness.address, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (LinkID, Output) {
        let link = open(address: address)
        let out = hello(link, role, token: token, foreground: foreground, lastSeq: lastSeq, sourceLocation: sourceLocation)
        return (link, out)
    }

    /// Reconnects a paired device with its token.
    mutating func reconnect(
        _ role: Role, foreground: Bool? = nil, lastSeq: Int64? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (LinkID, Output) {
        connect(role, token: tokens[role], foreground: foreground, lastSeq: lastSeq, sourceLocation: sourceLocation)
    }

    /// `pair.begin` on a phone's link; the code it got.
    mutating func beginPairing(_ phone: LinkID, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let out = send(phone, .pairBegin(Request(id: nextID("begin"))), sourceLocation: sourceLocation)
        guard let code = out.frames(to: phone).first?.pairCode?.code else {
            Issue.record("no pair.code: \(out.trace)", sourceLocation: sourceLocation)
            return ""
        }
        return code
    }

    /// `pair.join` on a watch's link.
    @discardableResult
    mutating func join(_ watch: LinkID, _ code: String, id: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Output {
        send(watch, .pairJoin(PairJoin(id: id ?? nextID("join"), code: code)), sourceLocation: sourceLocation)
    }

    /// A phone and a watch, both connected and paired (the watch in the foreground unless told).
    mutating func pairDevices(
        watchForeground: Bool? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (phone: LinkID, watch: LinkID) {
        let (phone, _) = connect(.phone, sourceLocation: sourceLocation)
        let code = beginPairing(phone, sourceLocation: sourceLocation)
        let (watch, _) = connect(.watch, foreground: watchForeground, sourceLocation: sourceLocation)
        let out = join(watch, code, sourceLocation: sourceLocation)
        #expect(out.frames(to: phone).first?.paired != nil, "phone paired", sourceLocation: sourceLocation)
        #expect(out.frames(to: watch).first?.paired != nil, "watch paired", sourceLocation: sourceLocation)
        return (phone, watch)
    }

    // MARK: - Expected values

    /// The limits `welcome` announces with `remaining` complications left.
    func limits(remaining: Int? = nil) -> Limits {
        var l = configuration.limits
        l.complicationsRemaining = remaining ?? l.complicationsPerDay
        return l
    }

    /// The item the core stores for a `send` accepted now.
    func item(_ id: String, _ mode: DeliveryMode, _ payload: Payload = Payload(kind: "test.item"), seq: Int64? = nil) -> QueuedItem {
        QueuedItem(sendID: id, mode: mode, payload: payload, acceptedAt: now, seq: seq)
    }

    /// The `deliver` of an item sent by `from`.
    func deliver(
        _ seq: Int64, _ id: String, _ mode: DeliveryMode, from: Role, _ payload: Payload = Payload(kind: "test.item"),
        sentAt: Timestamp? = nil, wantsReply: Bool? = nil
    ) -> Deliver {
        Deliver(seq: seq, mode: mode, id: id, from: from, sentAt: sentAt ?? now, payload: payload, wantsReply: wantsReply)
    }
}

extension RelayAction {
    /// Whether this asks for payloads from the store.
    var isPayloadLoad: Bool {
        if case .loadPayloads = self { return true }
        return false
    }
}
