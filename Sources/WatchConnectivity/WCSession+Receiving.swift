import Foundation
import Primitives
import RelayClient
import RelayProtocol

extension WCSession {
    /// Hands everything the relay delivers to the delegate, one at a time, in relay order.
    /// A durable item is acknowledged only after the delegate method returned, so an app
    /// killed during the call gets the item again at its next launch.
    func receive(from relay: RelaySession, outbox: SessionOutbox) async {
        // A chunk was released (it comes again on a new connection): the durable items this
        // connection delivered after it come again too, after it, so they wait for the next
        // welcome (their acks would be ignored; handed out now, they would pass the file).
        var released = false
        for await event in relay.events {
            switch event {
            case .applicationContext, .userInfo:
                if released { continue }
            case .activated, .paired, .unpaired:
                released = false
            default:
                break
            }
            switch event {
            case .message(let delivery):
                await receiveMessage(delivery)
            case .applicationContext(let delivery):
                // The same context sent again (its sender was killed between the relay's
                // `accepted` and noting it) is handled once, as a userInfo is.
                await receivedOnce(delivery, relay: relay, outbox: outbox) {
                    // As on Apple's: `receivedApplicationContext` is already the new one when the
                    // delegate hears of it (set after the call, a reader woken by the call could
                    // still see the old one).
                    self.state.withLock { $0.receivedApplicationContext = delivery.payload }
                } _: { session, delegate in
                    delegate.session(session, didReceiveApplicationContext: PropertyListPayload.dictionary(of: delivery.payload))
                }
            case .userInfo(let delivery) where delivery.payload.kind == PropertyListPayload.Channel.fileChunk.rawValue:
                released = await !receiveFileChunk(delivery, relay: relay, outbox: outbox)
            case .userInfo(let delivery) where delivery.payload.kind == PropertyListPayload.Channel.fileCancel.rawValue:
                await discardFile(delivery, relay: relay)
            case .userInfo(let delivery):
                await receivedOnce(delivery, relay: relay, outbox: outbox) {} _: { session, delegate in
                    delegate.session(session, didReceiveUserInfo: PropertyListPayload.dictionary(of: delivery.payload))
                }
            case .userInfoTransferFinished(let relayID):
                await transferFinished(relayID: relayID, outbox: outbox)
            case .reachabilityChanged(let reachable):
                let changed = state.withLock { s in
                    let before = s.isReachable
                    s.peerReachable = reachable
                    return s.isReachable != before
                }
                if changed { await withDelegate { s, d in d.sessionReachabilityDidChange(s) } }
            case .peerAppInstalledChanged(let installed):
                let changed = state.withLock { s in
                    let before = s.isCounterpartAppInstalled
                    s.peerAppInstalled = installed
                    return s.isCounterpartAppInstalled != before
                }
                if changed { await announceCounterpartAppInstalled() }
            case .paired, .unpaired:
                let reachabilityChanged = await refresh(from: relay)
                if await !notePair(relay, outbox: outbox) { await failTransfersLostWithPair(outbox: outbox) }
                await announceCounterpartAppInstalled()
                if reachabilityChanged { await withDelegate { s, d in d.sessionReachabilityDidChange(s) } }
            case .activated:
                // The counterpart may have come (or gone) since activation read `isReachable`:
                // an app that keeps what activation said needs this call to hear of it.
                if await refresh(from: relay) { await withDelegate { s, d in d.sessionReachabilityDidChange(s) } }
                // A token revoked while away: the welcome said unpaired.
                if !state.withLock({ $0.isPaired }) { await failTransfersLostWithPair(outbox: outbox) }
                wakeDrainer()
            case .disconnected:
                break
            case .error(.replaced):
                sayReplaced()
            case .error:
                // The session could not store something it received (its item is delivered
                // again, unacknowledged); WCSessionDelegate has no method for that, and the
                // app gets the item itself when it comes again.
                break
            }
        }
    }

    /// Another process connected with this device's identity and the relay closed this
    /// session's connection for it; the session does not connect again (two would take turns
    /// replacing each other), so nothing more is sent or received. Without a word the app just
    /// went unreachable, its transfers queueing for ever.
    private func sayReplaced() {
        let directory = parts.withLock { $0.deviceDirectory } ?? environment?.stateDirectory ?? "?"
        StandardError.write(
            "WatchConnectivity: another process connected to the relay as this device (its state directory \(directory): "
                + "a second copy of the app, `watchrelay pair` run again, or `watchrelay phone`/`watch` on it), and the relay "
                + "closed this session's connection for it; this session does not connect again: nothing is sent or "
                + "received until the app is started again\n")
    }

    /// The counterpart's app was installed or uninstalled (or the pair changed): phone
    /// `sessionWatchStateDidChange(_:)`, watch `sessionCompanionAppInstalledDidChange(_:)`.
    private func announceCounterpartAppInstalled() async {
        let role = environment?.role
        await withDelegate { s, d in
            if role == .phone { d.sessionWatchStateDidChange(s) } else { d.sessionCompanionAppInstalledDidChange(s) }
        }
    }

    /// ``received(_:relay:_:before:)`` for an item with a transfer id (`tid`): one the delegate
    /// already handled (its sender sent it again) is only acknowledged; else `prepare` runs and
    /// the id is recorded before the ack.
    private func receivedOnce(
        _ delivery: Delivery, relay: RelaySession, outbox: SessionOutbox, _ prepare: () -> Void,
        _ body: @escaping @Sendable (WCSession, any WCSessionDelegate) -> Void
    ) async {
        let tid = delivery.payload.members["tid"]?.stringValue
        if let tid, (try? outbox.wasReceived(tid)) == true {
            await relay.acknowledge(delivery)
            return
        }
        prepare()
        await received(delivery, relay: relay, body) {
            if let tid { try? outbox.markReceived(tid) }
        }
    }

    /// Calls the delegate for a durable delivery, runs `before`, then acknowledges it. With no
    /// delegate set it waits for one (the item, and every later one, stays unacknowledged).
    private func received(
        _ delivery: Delivery, relay: RelaySession,
        _ body: @escaping @Sendable (WCSession, any WCSessionDelegate) -> Void,
        before acknowledging: () -> Void = {}
    ) async {
        state.withLock { $0.contentPending += 1 }
        // Waits again if the delegate went away between the wait and the call (a weak
        // reference): an item the app was not told of is never acknowledged.
        var delivered = false
        while !delivered {
            guard await waitForDelegate() else {
                state.withLock { $0.contentPending -= 1 }
                return
            }
            delivered = await withDelegate(body)
        }
        acknowledging()
        await relay.acknowledge(delivery)
        state.withLock { $0.contentPending -= 1 }
        noteProgress()
    }

    private func transferFinished(relayID: String, outbox: SessionOutbox) async {
        if let item = try? outbox.finished(relayID: relayID) {
            await itemFinished(item, outbox: outbox, error: nil)
            return
        }
        // The drainer has not written the relay's id down yet: it finishes the transfer. It may
        // have written it and looked at the set between the look above and this insert, so look
        // again: whoever takes the id out of the set finishes the transfer (a review found it
        // left outstanding until the next launch).
        state.withLock { _ = $0.finishedEarly.insert(relayID) }
        guard (try? outbox.holds(relayID: relayID)) == true, state.withLock({ $0.finishedEarly.remove(relayID) }) != nil,
            let item = try? outbox.finished(relayID: relayID)
        else { return }
        await itemFinished(item, outbox: outbox, error: nil)
    }

    /// A durable item reached the counterpart (or failed with `error`): tell the delegate.
    func itemFinished(_ item: SessionOutbox.Item, outbox: SessionOutbox, error: WCError?) async {
        switch item.channel {
        case .file: await fileItemFinished(item, outbox: outbox)
        case .userInfo, .complication:
            await finishTransfer(item.id, error: error)
            // Heard: the row kept for a launch after a kill goes (SessionOutbox.finished).
            try? outbox.remove(item.id)
        case .context: break
        }
    }

    /// The relay refused a durable item for good (`error`): it is not sent again, and the
    /// delegate hears `didFinish(error)`. The store remembers the failure until the delegate
    /// heard it, so an app killed in between hears it at its next launch.
    func itemFailed(_ item: SessionOutbox.Item, outbox: SessionOutbox, error: WCError) async {
        switch item.channel {
        case .context:
            try? outbox.remove(item.id)
            // Refused (a full queue): it was not sent, so the same dictionary may go again.
            state.withLock { s in
                if s.applicationContext?.members["tid"] == item.payload.members["tid"] { s.lastContextRefused = true }
            }
        case .userInfo, .complication:
            // Refused: the relay never counted it, so it spent nothing.
            _ = state.withLock { $0.unacceptedComplications.remove(item.id) }
            try? outbox.failed(item.id, code: error.code.rawValue)
            await finishTransfer(item.id, error: error)
            try? outbox.remove(item.id)
        case .file:
            guard let fileID = item.id.split(separator: ":").first.map(String.init),
                let transfer = state.withLock({ s in s.fileTransfers.first { $0.id == fileID } })
            else {
                // A cancel notice, or a chunk of a file already cancelled or failed.
                try? outbox.remove(item.id)
                return
            }
            let notice = Payload(kind: PropertyListPayload.Channel.fileCancel.rawValue, ["fid": .string(fileID)])
            try? outbox.failFile(fileID, chunk: item.id, code: error.code.rawValue, notice: notice)
            await finishFile(transfer, error: error)
            try? outbox.forgetFile(fileID)
        }
    }

    /// The pair is gone, and the transfers and files the relay held of it with it: each fails
    /// with `deviceNotPaired`, heard by the delegate (kept in the store until then).
    /// Whether this device is paired, in the pair its accepted transfers went to (or one not
    /// recorded yet); records the pair. False after an unpair or a new pair (`watchrelay pair`
    /// again, while the app was away or not): the old pair's transfers went with it (a review
    /// found them reported received at the next launch).
    func notePair(_ relay: RelaySession, outbox: SessionOutbox) async -> Bool {
        guard state.withLock({ $0.isPaired }), let pairID = await relay.pairID else { return false }
        let before: String?
        do { before = try outbox.recordPair(pairID) } catch { return true }  // the store's own failures say so elsewhere
        return before == nil || before == pairID
    }

    func failTransfersLostWithPair(outbox: SessionOutbox) async {
        let code = WCError.Code.deviceNotPaired
        guard let (transfers, files) = try? outbox.failLostWithPair(code: code.rawValue) else { return }
        for item in transfers {
            await finishTransfer(item.id, error: WCError(code))
            try? outbox.remove(item.id)
        }
        for id in files {
            if let transfer = state.withLock({ s in s.fileTransfers.first { $0.id == id } }) {
                await finishFile(transfer, error: WCError(code))
            }
            try? outbox.forgetFile(id)
        }
        if !files.isEmpty { wakeDrainer() }
    }

    /// Removes transfer `id` from the outstanding ones and tells the delegate.
    func finishTransfer(_ id: String, error: WCError?) async {
        guard let transfer = state.withLock({ $0.removeTransfer(id) }) else { return }
        await withDelegate { session, delegate in
            delegate.session(session, didFinish: transfer, error: error)
        }
    }

    // MARK: - Live messages

    private func receiveMessage(_ delivery: Delivery) async {
        state.withLock { $0.replyVariantMissing = false }
        let isData = delivery.payload.kind == PropertyListPayload.Channel.messageData.rawValue
        switch (isData, delivery.wantsReply) {
        case (false, false):
            await withDelegate { s, d in
                d.session(s, didReceiveMessage: PropertyListPayload.dictionary(of: delivery.payload))
            }
        case (false, true):
            await withDelegate { s, d in
                d.session(s, didReceiveMessage: PropertyListPayload.dictionary(of: delivery.payload)) { reply in
                    s.enqueue(.reply(delivery, s.replyPayload { () throws(WCError) in try PropertyListPayload.encode(reply, channel: .reply) }))
                }
            }
        case (true, false):
            await withDelegate { s, d in
                d.session(s, didReceiveMessageData: PropertyListPayload.data(of: delivery.payload) ?? Data())
            }
        case (true, true):
            await withDelegate { s, d in
                d.session(s, didReceiveMessageData: PropertyListPayload.data(of: delivery.payload) ?? Data()) { reply in
                    s.enqueue(.reply(delivery, s.replyPayload { PropertyListPayload.encode(data: reply, channel: .replyData) }))
                }
            }
        }
        if delivery.wantsReply, state.withLock({ $0.replyVariantMissing }) {
            // WatchConnectivity fails such a send: the app did not implement the reply variant.
            enqueue(.reply(delivery, Self.replyError(.deliveryFailed)))
        }
    }

    /// What a reply handler's answer becomes on the wire: the reply, or the error the sender's
    /// `errorHandler` gets when it is not a property list (`payloadUnsupportedTypes`) or is
    /// larger than a message may be (`payloadTooLarge`; the relay would refuse it, and the sender
    /// would wait for its reply timeout).
    func replyPayload(_ encode: () throws(WCError) -> Payload) -> Payload {
        do {
            let payload = try encode()
            try Self.checkSize(payload, limit: state.withLock { $0.limits.messageBytes })
            return payload
        } catch {
            return Self.replyError(error.code)
        }
    }

    /// A reply that makes the sender's `errorHandler` run with `code`.
    static func replyError(_ code: WCError.Code) -> Payload {
        Payload(kind: PropertyListPayload.Channel.replyError.rawValue, ["code": .int(Int64(code.rawValue))])
    }
}
