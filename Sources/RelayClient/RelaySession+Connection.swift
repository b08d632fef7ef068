import Foundation
import RelayProtocol
import WebSocketTransport

extension RelaySession {
    // MARK: - Connection loop

    /// Connects, says hello, reads frames; on a drop waits (backoff with jitter) and goes again.
    func runConnectionLoop() async {
        var attempt = 0
        while !closing && !Task.isCancelled {
            var closeCode: UInt16?
            do {
                let conn = try await clients.connect(
                    to: configuration.url, allowSelfSigned: configuration.allowSelfSigned)
                connection = conn
                attempt = 0
                sayHello(on: conn)
                for await event in conn.events {
                    switch event {
                    case .message(let bytes): handle(bytes)
                    case .closed(let code, _): closeCode = code
                    case .binary, .tooLarge: break
                    }
                }
            } catch {
                // Refused or failed connect: retry after the backoff.
            }
            connectionLost()
            if closing || Task.isCancelled { break }
            if closeCode == 4001 {
                // Another connection of this device replaced us: two would only fight.
                break
            }
            let delays = configuration.backoff.isEmpty ? [1.0] : configuration.backoff
            let base = delays[min(attempt, delays.count - 1)]
            attempt += 1
            let jittered = base * Double.random(in: 0.8...1.2)
            try? await Task.sleep(for: .milliseconds(Int(jittered * 1000)))
        }
    }

    private func sayHello(on conn: ClientConnection) {
        helloID = "hello-" + Self.newID()
        let hello = Hello(
            id: helloID, role: configuration.role, deviceName: configuration.deviceName, token: token,
            foreground: configuration.role == .watch ? isForeground : nil,
            lastSeq: token == nil ? nil : tracker.ackedThrough)
        conn.send(FrameCodec.encode(.hello(hello)))
    }

    /// The connection is gone: fail what waited on it, report the drop.
    private func connectionLost() {
        connection = nil
        let wasActive = activationState == .activated
        activationState = .inactive
        for id in Array(pending.keys) { resolve(id, .failure(RelaySessionError.disconnected)) }
        for id in Array(replyWaiters.keys) + Array(expectingReplies) { failReply(id, RelaySessionError.notReachable) }
        setReachable(false)
        if wasActive { eventSink.yield(.disconnected) }
    }

    func setReachable(_ reachable: Bool) {
        guard reachable != isReachable else { return }
        isReachable = reachable
        eventSink.yield(.reachabilityChanged(reachable))
        reachabilitySink.yield(reachable)
    }

    // MARK: - Frames

    func handle(_ bytes: [UInt8]) {
        guard let frame = try? FrameCodec.decodeRelayFrame(bytes) else { return }
        switch frame {
        case .welcome(let w): welcomed(w)
        case .pairCode(let c): resolve(c.re, .success(frame))
        case .paired(let p): paired(p, frame)
        case .unpaired(let u): unpaired(u.reason, re: u.re, frame)
        case .peer(let p): setReachable(p.reachable)
        case .accepted(let a): resolve(a.re, .success(frame))
        case .deliver(let d): deliver(d)
        case .reply(let r): completeReply(r.re, .success(r.payload))
        case .transferred(let t): transferred(t.ids)
        case .cancelled(let c): resolve(c.re, .success(frame))
        case .outstanding(let o): resolve(o.re, .success(frame))
        case .error(let e): failed(e, frame)
        }
    }

    private func welcomed(_ w: Welcome) {
        limits = w.limits
        remainingComplicationUserInfoTransfers = w.limits.complicationsRemaining
        if !w.paired && token != nil { forgetPair() }
        isPaired = w.paired
        if let context = w.context, context.seq <= tracker.ackedThrough {
            receivedApplicationContext = context.payload
        }
        activationState = .activated
        setReachable(w.peer?.reachable ?? false)
        eventSink.yield(.activated(paired: w.paired))
        releaseActivationWaiters()
        if w.paired && !outstandingUserInfoTransfers.isEmpty {
            reconcileTask?.cancel()
            reconcileTask = Task { await self.reconcileOutstanding() }
        }
    }

    private func paired(_ p: Paired, _ frame: RelayFrame) {
        token = p.token
        pairID = p.pairID
        peerName = p.peer.name
        isPaired = true
        tracker.reset()
        outstandingUserInfoTransfers = []
        try? store.set([
            ("token", p.token), ("pairId", p.pairID), ("peerName", p.peer.name), ("lastSeq", "0"),
            ("transfers", nil), ("receivedContext", nil),
        ])
        receivedApplicationContext = nil
        setReachable(p.peer.reachable)
        eventSink.yield(.paired(pairID: p.pairID, peerName: p.peer.name))
        if let re = p.re { resolve(re, .success(frame)) }
    }

    private func unpaired(_ reason: String, re: String?, _ frame: RelayFrame?) {
        forgetPair()
        setReachable(false)
        eventSink.yield(.unpaired(reason: reason))
        if let re, let frame { resolve(re, .success(frame)) }
    }

    /// Drops the token and everything of the old pair.
    private func forgetPair() {
        token = nil
        pairID = nil
        isPaired = false
        tracker.reset()
        outstandingUserInfoTransfers = []
        try? store.set([("token", nil), ("pairId", nil), ("lastSeq", "0"), ("transfers", nil)])
    }

    private func deliver(_ d: Deliver) {
        let durable = d.mode != .message
        guard tracker.isNew(d.seq) else {
            // A redelivery of something handled: make sure the relay hears the ack.
            if durable && d.seq <= tracker.ackedThrough {
                connection?.send(FrameCodec.encode(.ack(Ack(seq: tracker.ackedThrough))))
            }
            return
        }
        tracker.received(d.seq, durable: durable)
        let delivery = Delivery(d)
        switch d.mode {
        case .message:
            eventSink.yield(.message(delivery))
            sendAckIfNeeded()
        case .context: eventSink.yield(.applicationContext(delivery))
        default: eventSink.yield(.userInfo(delivery))
        }
    }

    private func transferred(_ ids: [String]) {
        let done = Set(ids)
        outstandingUserInfoTransfers.removeAll { done.contains($0.id) }
        try? store.setTransfers(outstandingUserInfoTransfers)
        for id in ids { eventSink.yield(.userInfoTransferFinished(id: id)) }
    }

    private func failed(_ e: ErrorFrame, _ frame: RelayFrame) {
        if let re = e.re, re == helloID, e.code == .unauthorized {
            // The token was revoked while this device was away: it is no longer paired.
            unpaired("token revoked", re: nil, nil)
            return
        }
        guard let re = e.re else { return }
        if pending[re] != nil {
            resolve(re, .success(frame))
        } else {
            completeReply(re, .failure(RelaySessionError(e)))
        }
    }

    /// After a reconnect: transfers the relay no longer lists were delivered while away.
    func reconcileOutstanding() async {
        let id = Self.newID()
        guard case .outstanding(let list)? = try? await request(.outstanding(Request(id: id)), id: id) else { return }
        let listed = Set(list.ids)
        let finished = outstandingUserInfoTransfers.filter { !listed.contains($0.id) }.map(\.id)
        if !finished.isEmpty { transferred(finished) }
    }
}
