import RelayProtocol

extension SessionCore {
    // MARK: - Connection

    /// The connection is open: say hello, resuming from the durable ack.
    mutating func connected() {
        guard phase == .connecting else { return }
        phase = .helloSent
        lastConnectFailure = nil
        resyncing = false
        ackSent = durableThrough
        helloID = "hello-" + makeID()
        send(
            .hello(
                Hello(
                    id: helloID, role: settings.role, deviceName: settings.deviceName, token: token,
                    foreground: settings.role == .watch ? isForeground : nil,
                    lastSeq: token == nil ? nil : durableThrough)))
    }

    /// The connection is gone (or never opened): fail what waited on it, back off, go again.
    mutating func connectionLost(code: UInt16?) {
        switch phase {
        case .connecting, .helloSent, .activated: break
        default: return
        }
        let wasActive = phase == .activated
        lostConnectionOnce = true
        // Sent requests lose their answer; durable sends go again (same id) after the next welcome.
        var kept: [Pending] = []
        var failures: [(SessionTicket?, RelaySessionError)] = []
        for var p in pending {
            if case .durable = p.kind {
                p.sent = false
                kept.append(p)
            } else if !p.sent {
                kept.append(p)
            } else {
                failures.append((p.ticket, .disconnected))
            }
        }
        pending = PendingList(kept)
        for i in unansweredDurables.indices { unansweredDurables[i].sent = false }
        failures += replyWaiters.removeAll().map { ($0, .notReachable) }
        failInOrder(failures)
        earlyReplies = [:]
        // The relay failed the replies this connection owed (`not_reachable` to their senders).
        owedReplies.removeAll()
        setReachable(false)
        if code == 4001 {
            // Another connection of this device replaced this one: two would only fight. Said
            // as the error it is, not `disconnected` (which promises a reconnection).
            phase = .replaced
            emit(.error(.replaced))
            failWaitingForActivation(.notActivated)
            return
        }
        if wasActive { emit(.disconnected) }
        let delays = settings.backoff.isEmpty ? [1.0] : settings.backoff
        let base = delays[min(attempt, delays.count - 1)]
        attempt += 1
        let jittered = base * (0.8 + 0.4 * random.unit())
        phase = .backingOff(until: now + .milliseconds(Int64((jittered * 1000).rounded())))
    }

    /// Fails every command still waiting for a welcome (the session will not get one).
    mutating func failWaitingForActivation(_ error: RelaySessionError) {
        for w in activationWaiters { complete(w.ticket, .failure(error)) }
        activationWaiters = []
        // No connection will come to hear the relay's answer: it may hold them, as after a drop.
        failInOrder(unansweredDurables.map { ($0.ticket, .disconnected) })
        unansweredDurables = []
        let waiting = pending.filter { !$0.sent }
        pending.removeAll { !$0.sent }
        for p in waiting {
            var reason = error
            if case .durable = p.kind, p.wentOut { reason = .disconnected }  // the relay may hold it
            complete(p.ticket, .failure(reason))
        }
    }

    // MARK: - Frames

    mutating func received(_ frame: RelayFrame) {
        switch frame {
        case .welcome(let w): welcomed(w)
        case .pairCode(let c):
            if let p = takePending(c.re) { complete(p.ticket, .success(.pairingCode(PairingCode(code: c.code, expiresAt: c.expiresAt)))) }
        case .paired(let p): paired(p)
        case .unpaired(let u):
            forgetPair()
            setReachable(false)
            emit(.unpaired(reason: u.reason))
            if let re = u.re, let p = takePending(re) { complete(p.ticket, .success(.done)) }
        case .peer(let p):
            setReachable(p.reachable)
            setPeerAppInstalled(p.appInstalled)
        case .accepted(let a): accepted(a)
        case .deliver(let d): deliver(d)
        case .reply(let r): replied(r.re, .success(r.payload))
        case .transferred(let t): transferred(t.ids)
        case .cancelled(let c):
            if let p = takePending(c.re), case .cancel(let target) = p.kind {
                cancelsInFlight.removeAll { $0 == target }
                outstandingUserInfoTransfers.removeAll { $0.id == target }
                persist([.transfers(outstandingUserInfoTransfers)], p.ticket.map { .complete($0, .done) } ?? .plain)
            }
        case .outstanding(let o):
            if let p = takePending(o.re) {
                reconcile(listed: Set(o.ids))
                complete(p.ticket, .success(.done))
            }
        case .error(let e): failed(e)
        }
    }

    /// Removes and returns the pending request answered by `re`.
    mutating func takePending(_ re: String) -> Pending? {
        pending.take { $0.id == re && $0.sent }
    }

    private mutating func welcomed(_ w: Welcome) {
        guard phase == .helloSent else { return }
        welcomedOnce = true
        limits = w.limits
        remainingComplicationUserInfoTransfers = w.limits.complicationsRemaining
        if !w.paired && token != nil { forgetPair() }
        isPaired = w.paired
        if let context = w.context, context.seq <= durableThrough {
            receivedApplicationContext = context.payload
        }
        phase = .activated
        attempt = 0
        setReachable(w.peer?.reachable ?? false)
        setPeerAppInstalled(w.peer?.appInstalled ?? true)
        emit(.activated(paired: w.paired))
        for waiter in activationWaiters { complete(waiter.ticket, .success(.done)) }
        activationWaiters = []
        // Oldest first: durable sends the relay may hold, the requests that waited, cancels
        // whose answer was lost; then the reconcile, which the relay answers after them.
        resendUnansweredDurables()
        sendWaitingRequests()
        resendCancelsInFlight()
        if w.paired && !outstandingUserInfoTransfers.isEmpty { requestOutstanding() }
    }

    /// Sends the requests that waited for a welcome, in the order they were asked for.
    mutating func sendWaitingRequests() {
        guard phase == .activated else { return }
        var kept: [Pending] = []
        for p in pending {
            if p.sent {
                kept.append(p)
            } else if let sent = sendNow(p) {
                kept.append(sent)
            }
        }
        pending = PendingList(kept)
    }

    /// Sends request `p` (activated): returns it as sent, to be kept until its answer, or nil
    /// when it failed at once (a send that needs a pair, unpaired).
    mutating func sendNow(_ p: Pending) -> Pending? {
        if p.needsPair && !isPaired {
            complete(p.ticket, .failure(.notPaired))
            return nil
        }
        if case .message = p.kind, counterpartAway {
            // Asked before the welcome, which says the counterpart is away: as one asked after.
            complete(p.ticket, .failure(.notReachable))
            return nil
        }
        var p = p
        p.sent = true
        p.wentOut = true
        if case .cancel(let target) = p.kind, !cancelsInFlight.contains(target) { cancelsInFlight.append(target) }
        p.deadline = requestDeadline
        if case .message(wantsReply: true) = p.kind { earlyReplies[p.id] = nil }
        send(p.frame)
        return p
    }

    private mutating func paired(_ p: Paired) {
        token = p.token
        pairID = p.pairID
        peerName = p.peer.name
        isPaired = true
        tracker.reset()
        durableThrough = 0
        ackSent = 0
        outstandingUserInfoTransfers = []
        forgetSendsInFlight()
        receivedApplicationContext = nil
        let ticket = p.re.flatMap { takePending($0) }?.ticket
        persist(
            [
                .token(p.token), .pairID(p.pairID), .peerName(p.peer.name), .lastSeq(0), .transfers([]),
                .receivedContext(nil),
            ], ticket.map { .complete($0, .done) } ?? .plain)
        setReachable(p.peer.reachable)
        setPeerAppInstalled(p.peer.appInstalled)
        emit(.paired(pairID: p.pairID, peerName: p.peer.name))
    }

    /// Drops the token and everything of the old pair.
    mutating func forgetPair() {
        token = nil
        pairID = nil
        isPaired = false
        // Said by `unpaired`, not as the peer's app installed again (PROTOCOL.md §7.1): the
        // next pair starts installed.
        isPeerAppInstalled = true
        tracker.reset()
        durableThrough = 0
        ackSent = 0
        outstandingUserInfoTransfers = []
        forgetSendsInFlight()
        persist([.token(nil), .pairID(nil), .lastSeq(0), .transfers([])], .plain)
    }

    private mutating func accepted(_ a: Accepted) {
        guard let p = takePending(a.re) ?? takeUnanswered(a.re) else { return }
        switch p.kind {
        case .message(let wantsReply):
            guard wantsReply else { return complete(p.ticket, .success(.reply(nil))) }
            if let early = earlyReplies.removeValue(forKey: p.id) {
                return complete(p.ticket, early.map { .reply($0) })
            }
            guard let ticket = p.ticket else { return }
            let limit = Duration.milliseconds(limits.replyTimeoutMs) + settings.requestTimeout
            replyWaiters.add(p.id, ticket, deadline: now + limit)
        case .durable(.context, let payload):
            applicationContext = payload
            persist([.sentContext(payload)], p.ticket.map { .complete($0, .done) } ?? .plain)
        case .durable(let mode, let payload):
            if let remaining = a.remaining { remainingComplicationUserInfoTransfers = remaining }
            let t = UserInfoTransfer(
                id: p.id, payload: payload, isCurrentComplicationInfo: mode == .complication,
                fellBackToUserInfo: a.fallback == .userInfo)
            if finishedBeforeAccepted.remove(p.id) != nil {
                // Already transferred: never outstanding. The (unchanged) list is written so the
                // caller hears of it in order with the transfers accepted before it.
                return persist(
                    [.transfers(outstandingUserInfoTransfers)],
                    .completeThenEmit(p.ticket, .transfer(t), [.userInfoTransferFinished(id: p.id)]))
            }
            if !outstandingUserInfoTransfers.contains(where: { $0.id == p.id }) {
                outstandingUserInfoTransfers.append(t)
            }
            persist([.transfers(outstandingUserInfoTransfers)], p.ticket.map { .complete($0, .transfer(t)) } ?? .plain)
        default:
            complete(p.ticket, .success(.done))
        }
    }

    /// A reply (or its error) for a sent message: to the waiting caller, or kept until it waits.
    private mutating func replied(_ re: String, _ result: Result<Payload, RelaySessionError>) {
        if let ticket = replyWaiters.remove(re) {
            complete(ticket, result.map { .reply($0) })
        } else if pending.contains(where: { $0.id == re && $0.kind == .message(wantsReply: true) }) {
            earlyReplies[re] = result
        }
    }

    private mutating func failed(_ e: ErrorFrame) {
        if e.re == helloID && e.code == .unauthorized {
            // The token was revoked while this device was away: it is no longer paired.
            forgetPair()
            setReachable(false)
            emit(.unpaired(reason: "token revoked"))
            return
        }
        guard let re = e.re else { return }
        if let p = takePending(re) ?? takeUnanswered(re) {
            if case .cancel(let target) = p.kind { cancelRefused(target, e.code, resent: p.ticket == nil) }
            complete(p.ticket, .failure(RelaySessionError(e)))
        } else {
            replied(re, .failure(RelaySessionError(e)))
        }
    }

    private mutating func deliver(_ d: Deliver) {
        guard !resyncing else { return }
        let durable = d.mode != .message
        guard tracker.isNew(d.seq) else {
            // A redelivery of something handled: make sure the relay hears the ack.
            if durable && d.seq <= durableThrough && durableThrough > 0 { send(.ack(Ack(seq: durableThrough))) }
            return
        }
        tracker.received(d.seq, durable: durable)
        let delivery = Delivery(d)
        switch d.mode {
        case .message:
            if delivery.wantsReply {
                owedReplies.insert(d.id, deadline: now + .milliseconds(limits.replyTimeoutMs), now: now)
            }
            // Nothing to ack or store: messages are never acked (PROTOCOL.md §8.6), and any
            // durable item below this seq was acked when the app finished it. The next durable
            // ack covers this seq, and `lastSeq` catches up with it then. (An ack and a write
            // per message made a receiver's store and the relay do a message's work twice.)
            emit(.message(delivery))
        case .context: emit(.applicationContext(delivery))
        default: emit(.userInfo(delivery))
        }
    }

    /// Persists `records` and, if the cumulative ack moved, the new `lastSeq`; the ack itself
    /// goes out only once that write succeeded.
    mutating func ackIfNeeded(records: [SessionRecord]) {
        if let through = tracker.ackToSend() {
            persist(records + [.lastSeq(through)], .ack(through: through))
        } else if !records.isEmpty {
            persist(records, .plain)
        }
    }

    private mutating func transferred(_ ids: [String]) {
        // A send whose `accepted` has not come yet finishes when it comes.
        let early = Set(ids.filter(awaitsAccepted))
        finishedBeforeAccepted.formUnion(early)
        let finished = ids.filter { !early.contains($0) }
        let done = Set(finished)
        cancelsInFlight.removeAll { done.contains($0) }
        outstandingUserInfoTransfers.removeAll { done.contains($0.id) }
        guard !finished.isEmpty else { return }
        // The app hears of it once the shorter list is stored, so a crash in between can't
        // leave a finished transfer outstanding after the app was told it finished.
        persist([.transfers(outstandingUserInfoTransfers)], .emit(finished.map { .userInfoTransferFinished(id: $0) }))
    }

    /// After a reconnect: transfers the relay no longer lists were delivered while away, unless
    /// a cancel of theirs went out and its answer has not come (the relay may have cancelled
    /// them; the cancel goes again and its answer decides).
    private mutating func reconcile(listed: Set<String>) {
        let finished = outstandingUserInfoTransfers.filter { !listed.contains($0.id) && !cancelsInFlight.contains($0.id) }
            .map(\.id)
        if !finished.isEmpty { transferred(finished) }
    }
}
