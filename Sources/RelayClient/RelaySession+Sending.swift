import Foundation
import RelayProtocol

extension RelaySession {
    // MARK: - The four modes

    /// `sendMessage(_:replyHandler:errorHandler:)`: a live message; with `wantsReply`, returns
    /// the counterpart's reply.
    ///
    /// - Throws: ``RelaySessionError/notReachable`` (at once, or if the counterpart leaves
    ///   before replying), ``RelaySessionError/replyTimeout``, ``RelaySessionError/payloadTooLarge(size:limit:)``.
    public func sendMessage(_ payload: Payload, wantsReply: Bool = true) async throws -> Payload? {
        try checkSize(payload, limit: limits.messageBytes)
        try await waitUntilActivated()
        guard isPaired else { throw RelaySessionError.notPaired }
        let id = Self.newID()
        let send = ClientFrame.send(Send(id: id, mode: .message, payload: payload, wantsReply: wantsReply ? true : nil))
        guard wantsReply else {
            try expectAccepted(try await request(send, id: id))
            return nil
        }
        // Expect the reply before sending: it can arrive right after `accepted`.
        expectingReplies.insert(id)
        defer { expectingReplies.remove(id) }
        try expectAccepted(try await request(send, id: id))
        return try await awaitReply(id)
    }

    private func awaitReply(_ id: String) async throws -> Payload {
        if let early = earlyReplies.removeValue(forKey: id) { return try early.get() }
        let limit = Double(limits.replyTimeoutMs) / 1000 + configuration.requestTimeoutSeconds
        let timeout = Task {
            try? await Task.sleep(for: .milliseconds(Int(limit * 1000)))
            self.failReply(id, RelaySessionError.replyTimeout)
        }
        defer { timeout.cancel() }
        return try await withCheckedThrowingContinuation { replyWaiters[id] = $0 }
    }

    func failReply(_ id: String, _ error: any Error) {
        completeReply(id, .failure(error))
    }

    /// Hands a reply (or its error) to the waiting `sendMessage`, or keeps it until it waits.
    /// Returns whether `id` was a message waiting for a reply.
    @discardableResult
    func completeReply(_ id: String, _ result: Result<Payload, any Error>) -> Bool {
        if let waiter = replyWaiters.removeValue(forKey: id) {
            waiter.resume(with: result)
            return true
        }
        if expectingReplies.contains(id) {
            earlyReplies[id] = result
            return true
        }
        return false
    }

    /// Answers a received message that wants a reply.
    public func reply(to delivery: Delivery, with payload: Payload) throws {
        try checkSize(payload, limit: limits.messageBytes)
        guard activationState == .activated, let connection else { throw RelaySessionError.notReachable }
        connection.send(FrameCodec.encode(.reply(ClientReply(id: Self.newID(), re: delivery.id, payload: payload))))
    }

    /// `updateApplicationContext(_:)`: latest wins; returns once the relay stored it.
    public func updateApplicationContext(_ payload: Payload) async throws {
        try checkSize(payload, limit: limits.contextBytes)
        _ = try await sendDurable(.context, payload)
        applicationContext = payload
        try store.setPayload("sentContext", payload)
    }

    /// `transferUserInfo(_:)`: a durable FIFO transfer; returns once the relay accepted it.
    @discardableResult
    public func transferUserInfo(_ payload: Payload) async throws -> UserInfoTransfer {
        try checkSize(payload, limit: limits.userInfoBytes)
        return try await transfer(.userInfo, payload)
    }

    /// `transferCurrentComplicationUserInfo(_:)` (phone only): jumps the queue, within the
    /// daily budget; past it, it goes as plain userInfo.
    @discardableResult
    public func transferCurrentComplicationUserInfo(_ payload: Payload) async throws -> UserInfoTransfer {
        guard configuration.role == .phone else { throw RelaySessionError.notSupported("complications go phone → watch") }
        try checkSize(payload, limit: limits.userInfoBytes)
        return try await transfer(.complication, payload)
    }

    private func transfer(_ mode: DeliveryMode, _ payload: Payload) async throws -> UserInfoTransfer {
        let (id, accepted) = try await sendDurable(mode, payload)
        if let remaining = accepted.remaining { remainingComplicationUserInfoTransfers = remaining }
        let t = UserInfoTransfer(
            id: id, payload: payload, isCurrentComplicationInfo: mode == .complication,
            fellBackToUserInfo: accepted.fallback == .userInfo)
        if !outstandingUserInfoTransfers.contains(where: { $0.id == id }) {
            outstandingUserInfoTransfers.append(t)
            try store.setTransfers(outstandingUserInfoTransfers)
        }
        return t
    }

    /// `WCSessionUserInfoTransfer.cancel()`: removes an undelivered transfer.
    ///
    /// - Throws: `relay(already_delivered)` if it was already delivered.
    public func cancel(_ transfer: UserInfoTransfer) async throws {
        try await waitUntilActivated()
        let id = Self.newID()
        let answer = try await request(.cancel(Cancel(id: id, target: transfer.id)), id: id)
        if case .error(let e) = answer { throw RelaySessionError(e) }
        outstandingUserInfoTransfers.removeAll { $0.id == transfer.id }
        try store.setTransfers(outstandingUserInfoTransfers)
    }

    /// Sends a durable item with one id, retrying with the same id across reconnects until
    /// the relay accepts it (the relay answers a repeated id with `accepted` again).
    private func sendDurable(_ mode: DeliveryMode, _ payload: Payload) async throws -> (String, Accepted) {
        let id = Self.newID()
        while true {
            try await waitUntilActivated()
            guard isPaired else { throw RelaySessionError.notPaired }
            do {
                let answer = try await request(.send(Send(id: id, mode: mode, payload: payload)), id: id)
                return (id, try expectAccepted(answer))
            } catch RelaySessionError.disconnected {
                continue
            }
        }
    }

    @discardableResult
    private func expectAccepted(_ frame: RelayFrame) throws -> Accepted {
        switch frame {
        case .accepted(let a): return a
        case .error(let e): throw RelaySessionError(e)
        default: throw RelaySessionError.relay(code: .internal, message: "unexpected answer \(frame.type)")
        }
    }

    private func checkSize(_ payload: Payload, limit: Int) throws {
        let size = payload.encodedSize
        if size > limit { throw RelaySessionError.payloadTooLarge(size: size, limit: limit) }
    }

    // MARK: - Requests

    /// Sends a frame with `id` and waits for the frame that answers it (`re` = id).
    func request(_ frame: ClientFrame, id: String) async throws -> RelayFrame {
        guard activationState == .activated, let connection else { throw RelaySessionError.disconnected }
        let seconds = configuration.requestTimeoutSeconds
        let answer = try await withCheckedThrowingContinuation { (c: CheckedContinuation<RelayFrame, any Error>) in
            pending[id] = c
            pendingTimeouts[id] = Task {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                if !Task.isCancelled { self.resolve(id, .failure(RelaySessionError.timeout("the answer to \(frame.type)"))) }
            }
            connection.send(FrameCodec.encode(frame))
        }
        if case .error(let e) = answer { throw RelaySessionError(e) }
        return answer
    }

    /// Completes the request `id`, if it is still waiting.
    func resolve(_ id: String, _ result: Result<RelayFrame, any Error>) {
        pendingTimeouts.removeValue(forKey: id)?.cancel()
        pending.removeValue(forKey: id)?.resume(with: result)
    }

    /// Acknowledges a durable delivery the app has handled (WC: the delegate method returned).
    public func acknowledge(_ delivery: Delivery) {
        guard delivery.mode != .message else { return }
        tracker.finish(delivery.seq)
        if delivery.mode == .context {
            receivedApplicationContext = delivery.payload
            try? store.setPayload("receivedContext", delivery.payload)
        }
        sendAckIfNeeded()
    }

    func sendAckIfNeeded() {
        guard let through = tracker.ackToSend() else { return }
        try? store.set("lastSeq", String(through))
        connection?.send(FrameCodec.encode(.ack(Ack(seq: through))))
    }
}
