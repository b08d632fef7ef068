import Foundation
import RelayClient
import RelayProtocol

extension WCSession {
    /// Sends live messages (or replies) one after another, in the order the app asked; a
    /// message's answer comes whenever it comes and holds back none of the later messages.
    func sendOperations(_ operations: AsyncStream<SessionOperation>) async {
        for await operation in operations {
            guard let relay = parts.withLock({ $0.relay }) else { continue }
            switch operation {
            case .message(let payload, let onReply, let onError):
                let activation = state.withLock { $0.activationState }
                guard activation == .activated else {
                    // Switching watches cancels the messages not sent yet.
                    let error = Self.notActivated(activation)
                    delegateQueue.async { onError?(error) }
                    continue
                }
                let delegateQueue = delegateQueue
                await relay.sendMessage(payload, wantsReply: onReply != nil) { result in
                    switch result {
                    case .success(let answer):
                        guard let onReply, let answer else { return }
                        if answer.kind == PropertyListPayload.Channel.replyError.rawValue {
                            let code = answer.members["code"]?.intValue.flatMap { WCError.Code(rawValue: Int($0)) }
                            let error = WCError(code ?? .messageReplyFailed)
                            delegateQueue.async { onError?(error) }
                        } else {
                            delegateQueue.async { onReply(answer) }
                        }
                    case .failure(let error):
                        let wcError = Self.wcError(error)
                        delegateQueue.async { onError?(wcError) }
                    }
                }
            case .reply(let delivery, let payload):
                try? await relay.reply(to: delivery, with: payload)
            case .foreground(let relay, let foreground):
                await relay.setForeground(foreground)
            }
        }
    }

    /// Sends the device's queued durable items to the relay, oldest first, retrying with
    /// backoff while the relay is away; takes cancelled ones back.
    func drainOutbox(relay: RelaySession, outbox: SessionOutbox, wake: AsyncStream<Void>) async {
        var backoff = 0.05
        var wakes = wake.makeAsyncIterator()
        while !Task.isCancelled {
            guard let item = try? outbox.next() else {
                noteProgress()  // nothing left to send
                if await wakes.next() == nil { return }
                continue
            }
            do {
                try await send(item, relay: relay, outbox: outbox)
                backoff = 0.05
                noteProgress()
            } catch let error as RelaySessionError where !Self.isTransient(error) {
                await itemFailed(item, outbox: outbox, error: Self.wcError(error))
                noteProgress()
            } catch {
                // The relay is away: the item is tried again at the back-off deadline.
                try? await Task.sleep(for: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 2)
            }
        }
    }

    private func send(_ item: SessionOutbox.Item, relay: RelaySession, outbox: SessionOutbox) async throws {
        if item.cancelled {
            if let relayID = item.relayID,
                let sent = await relay.outstandingUserInfoTransfers.first(where: { $0.id == relayID })
            {
                try? await relay.cancel(sent)
            }
            try outbox.remove(item.id)
            _ = state.withLock { $0.unacceptedComplications.remove(item.id) }
            return
        }
        switch item.channel {
        case .context:
            try await relay.updateApplicationContext(item.payload)
            try outbox.remove(item.id)
        case .userInfo, .complication, .file:
            let sent =
                item.channel == .complication
                ? try await relay.transferCurrentComplicationUserInfo(item.payload)
                : try await relay.transferUserInfo(item.payload)
            let remaining = await relay.remainingComplicationUserInfoTransfers
            state.withLock { s in
                s.relayRemainingComplications = remaining
                s.unacceptedComplications.remove(item.id)
            }
            guard try outbox.accepted(item.id, relayID: sent.id, keep: true) else {
                // Cancelled while it was on its way.
                try? await relay.cancel(sent)
                return
            }
            if state.withLock({ $0.finishedEarly.remove(sent.id) }) != nil, let finished = try outbox.finished(relayID: sent.id) {
                // As a `transferred` that came after: a transfer's row goes once the delegate heard it.
                await itemFinished(finished, outbox: outbox, error: nil)
            }
        }
    }

    /// Errors after which the same item is sent again (the relay is away, slow, or answered
    /// that the frame had no effect and may be tried later).
    static func isTransient(_ error: RelaySessionError) -> Bool {
        switch error {
        case .disconnected, .timeout, .notActivated: return true
        // The session's own store failed, maybe after the relay accepted the item: sent again
        // (the counterpart drops a repeat by its transfer id), it is not failed while delivered.
        case .persistFailed: return true
        // PROTOCOL.md §11: the frame had no effect, retry later.
        case .relay(let code, _) where code == .internal || code == .rateLimited: return true
        default: return false
        }
    }
}
