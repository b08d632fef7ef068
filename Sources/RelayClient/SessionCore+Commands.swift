import RelayProtocol

extension SessionCore {
    // MARK: - Commands

    mutating func run(_ command: SessionCommand, _ ticket: SessionTicket) {
        switch command {
        case .activate: activate(ticket)
        case .beginPairing:
            guard settings.role == .phone else { return fail(ticket, .notSupported("only a phone begins pairing")) }
            let id = makeID()
            request(id, .pairBegin, .pairBegin(Request(id: id)), ticket)
        case .pair(let code):
            guard settings.role == .watch else { return fail(ticket, .notSupported("only a watch joins with a code")) }
            let id = makeID()
            request(id, .pairJoin, .pairJoin(PairJoin(id: id, code: code)), ticket)
        case .unpair:
            let id = makeID()
            request(id, .unpair, .unpair(Request(id: id)), ticket)
        case .sendMessage(let payload, let wantsReply):
            guard fits(payload, limits.messageBytes, ticket) else { return }
            // (Unpaired, `request` fails it with notPaired: the relay has no counterpart to ask about.)
            guard !isPaired || !counterpartAway else { return fail(ticket, .notReachable) }
            let id = makeID()
            let frame = ClientFrame.send(
                Send(id: id, mode: .message, payload: payload, wantsReply: wantsReply ? true : nil))
            request(id, .message(wantsReply: wantsReply), frame, ticket)
        case .reply(let delivery, let payload):
            guard fits(payload, limits.messageBytes, ticket) else { return }
            guard phase == .activated else { return fail(ticket, .notReachable) }
            // A second answer, one past the reply timeout, or one to a message of an earlier
            // connection: its sender already had its answer or error, and the relay would
            // refuse it (`unknown_id`, an error against the connection's budget). Dropped, as
            // WatchConnectivity ignores it.
            if owedReplies.take(delivery.id, now: now) {
                send(.reply(ClientReply(id: makeID(), re: delivery.id, payload: payload)))
            }
            complete(ticket, .success(.done))
        case .updateContext(let payload):
            guard fits(payload, limits.contextBytes, ticket) else { return }
            durable(.context, payload, ticket)
        case .transferUserInfo(let payload):
            guard fits(payload, limits.userInfoBytes, ticket) else { return }
            durable(.userInfo, payload, ticket)
        case .transferComplication(let payload):
            guard settings.role == .phone else { return fail(ticket, .notSupported("complications go phone → watch")) }
            guard fits(payload, limits.userInfoBytes, ticket) else { return }
            durable(.complication, payload, ticket)
        case .cancel(let target):
            let id = makeID()
            request(id, .cancel(target: target), .cancel(Cancel(id: id, target: target)), ticket)
        case .setForeground(let foreground):
            isForeground = foreground
            if phase == .activated { send(.state(StateChange(foreground: foreground))) }
            complete(ticket, .success(.done))
        case .publishFaces(let svg):
            if settings.role == .watch, phase == .activated, isPaired { send(.faces(Faces(svg: svg))) }
            complete(ticket, .success(.done))
        case .acknowledge(let delivery):
            acknowledge(delivery)
            complete(ticket, .success(.done))
        case .release(let delivery):
            release(delivery)
            complete(ticket, .success(.done))
        case .synchronize:
            guard isPaired || phase != .activated else { return complete(ticket, .success(.done)) }
            let id = makeID()
            request(id, .outstanding, .outstanding(Request(id: id)), ticket)
        case .close: close(ticket)
        case .uninstallApp:
            // Written before the close frame (the connection sends what it queued first). Not
            // activated, nothing can be said: the peer still sees the app installed, and the
            // caller hears so (the session stops all the same).
            let told = phase == .activated
            if told { send(.state(StateChange(appInstalled: false))) }
            close(ticket, told ? .success(.done) : .failure(.notActivated))
        }
    }

    /// Whether a live message fails with `notReachable` at once, without going out: the relay
    /// said the counterpart is away (it would only refuse the message a round trip later), or
    /// the connection dropped and is being made again (the message would wait for the welcome
    /// and reach the counterpart late; WatchConnectivity fails a message whose counterpart
    /// "becomes unreachable before the message is delivered"). Before the first welcome (a relay
    /// still starting refuses the first connections), messages wait for it.
    var counterpartAway: Bool {
        guard !isReachable else { return false }
        switch phase {
        case .activated: return true
        case .connecting, .helloSent, .backingOff: return welcomedOnce
        case .idle, .replaced, .closed: return false  // `request` fails them with notActivated
        }
    }

    private mutating func fail(_ ticket: SessionTicket, _ error: RelaySessionError) {
        complete(ticket, .failure(error))
    }

    /// Whether `payload` is within `limit` and nests no deeper than a frame can carry; fails the
    /// command if not.
    private mutating func fits(_ payload: Payload, _ limit: Int, _ ticket: SessionTicket) -> Bool {
        let size = payload.encodedSize
        guard size <= limit else {
            fail(ticket, .payloadTooLarge(size: size, limit: limit))
            return false
        }
        let depth = payload.nestingDepth
        guard depth <= Payload.maxNestingDepth else {
            fail(ticket, .payloadTooDeep(depth: depth, limit: Payload.maxNestingDepth))
            return false
        }
        return true
    }

    private mutating func activate(_ ticket: SessionTicket) {
        switch phase {
        case .activated:
            complete(ticket, .success(.done))
        case .closed, .replaced:
            fail(ticket, .notActivated)
        case .idle:
            phase = .connecting
            lastConnectFailure = nil  // an old failure says nothing about this attempt
            out.append(.connect)
            activationWaiters.append((ticket, requestDeadline))
        case .connecting, .helloSent, .backingOff:
            activationWaiters.append((ticket, requestDeadline))
        }
    }

    /// Queues a request; it goes out now if activated, else after the next welcome (or times out).
    private mutating func request(
        _ id: String, _ kind: Pending.Kind, _ frame: ClientFrame, _ ticket: SessionTicket
    ) {
        guard isRunning && phase != .replaced else { return fail(ticket, .notActivated) }
        let request = Pending(id: id, ticket: ticket, kind: kind, frame: frame, deadline: requestDeadline, sent: false)
        guard phase == .activated else { return pending.append(request) }
        // Activated, every earlier request went out at the welcome or when asked: this one goes
        // now, behind them (rebuilding the whole list for it made a burst of messages quadratic).
        if let sent = sendNow(request) { pending.append(sent) }
    }

    /// A durable item with one id, sent again with the same id after a reconnect until the
    /// relay accepts it (the relay answers a repeated id with `accepted` again).
    private mutating func durable(_ mode: DeliveryMode, _ payload: Payload, _ ticket: SessionTicket) {
        let id = makeID()
        request(id, .durable(mode, payload), .send(Send(id: id, mode: mode, payload: payload)), ticket)
    }

    /// The app handled `delivery`; durable ones may move the ack (after their write).
    private mutating func acknowledge(_ delivery: Delivery) {
        guard delivery.mode != .message, delivery.seq <= tracker.highestReceived else { return }
        tracker.finish(delivery.seq)
        var records: [SessionRecord] = []
        if delivery.mode == .context {
            receivedApplicationContext = delivery.payload
            records.append(.receivedContext(delivery.payload))
        }
        ackIfNeeded(records: records)
    }

    /// The app could not handle durable `delivery`: nothing at or past it may be acked, and
    /// skipping it as handled when it comes again would hold every later ack below it for
    /// good. One the session no longer waits for (a message, an earlier connection's, or one
    /// released already) changes nothing.
    private mutating func release(_ delivery: Delivery) {
        guard delivery.mode != .message, tracker.isHandling(delivery.seq) else { return }
        resync(reason: "redeliver an item the app could not handle")
    }

    private mutating func close(
        _ ticket: SessionTicket, _ outcome: Result<SessionOutcome, RelaySessionError> = .success(.done)
    ) {
        let wasConnected = phase == .helloSent || phase == .activated || phase == .connecting
        let wasActive = phase == .activated
        phase = .closed
        failInOrder(
            (unansweredDurables + pending).map { ($0.ticket, .disconnected) }
                + replyWaiters.removeAll().map { ($0, .notReachable) })
        pending = []
        unansweredDurables = []
        earlyReplies = [:]
        owedReplies.removeAll()
        for w in activationWaiters { complete(w.ticket, .failure(.notActivated)) }
        activationWaiters = []
        setReachable(false)
        if wasActive {
            lostConnectionOnce = true
            emit(.disconnected)
        }
        if wasConnected { out.append(.disconnect(code: 1000, reason: "app closed")) }
        complete(ticket, outcome)
    }
}
