import Foundation
import RelayClient
import RelayProtocol

extension WCSession {
    // MARK: - Live messages

    /// Sends `message` to the counterpart as soon as possible, in order with other messages.
    ///
    /// Fails through `errorHandler` (on the delegate queue) with `notReachable` when the
    /// counterpart is not reachable, `payloadUnsupportedTypes` for a non-property-list value,
    /// `payloadTooLarge` past 64 KiB, `messageReplyTimedOut` when no reply came in time.
    /// Exactly one of `replyHandler` and `errorHandler` runs.
    ///
    /// The handlers have Apple's types (not `Sendable`), so code that captures a non-`Sendable`
    /// object, stores a handler, or declares this signature in a protocol over `WCSession`
    /// compiles as on iOS; they run on the session's background queue (``AppHandler``).
    public func sendMessage(
        _ message: [String: Any], replyHandler: (([String: Any]) -> Void)?,
        errorHandler: ((any Error) -> Void)? = nil
    ) {
        let onError = AppHandler.wrap(errorHandler)
        do {
            let payload = try PropertyListPayload.encode(message, channel: .message)
            try checkLiveSend(payload)
            var onReply: (@Sendable (Payload) -> Void)?
            if let reply = AppHandler.wrap(replyHandler) {
                onReply = { answer in reply.call(PropertyListPayload.dictionary(of: answer)) }
            }
            enqueue(.message(payload, onReply: onReply, onError: onError?.sendable))
        } catch {
            fail(onError, error)
        }
    }

    /// Sends `data` to the counterpart as soon as possible; the rules of ``sendMessage(_:replyHandler:errorHandler:)``.
    public func sendMessageData(
        _ data: Data, replyHandler: ((Data) -> Void)?, errorHandler: ((any Error) -> Void)? = nil
    ) {
        let onError = AppHandler.wrap(errorHandler)
        let payload = PropertyListPayload.encode(data: data, channel: .messageData)
        do {
            try checkLiveSend(payload)
            var onReply: (@Sendable (Payload) -> Void)?
            if let reply = AppHandler.wrap(replyHandler) {
                onReply = { answer in reply.call(PropertyListPayload.data(of: answer) ?? Data()) }
            }
            enqueue(.message(payload, onReply: onReply, onError: onError?.sendable))
        } catch {
            fail(onError, error)
        }
    }

    private func checkLiveSend(_ payload: Payload) throws(WCError) {
        let (activation, paired, installed, reachable, limit) = state.withLock {
            ($0.activationState, $0.isPaired, $0.peerAppInstalled, $0.isReachable, $0.limits.messageBytes)
        }
        guard hasDelegate else { throw WCError(.sessionMissingDelegate) }
        guard activation == .activated else { throw Self.notActivated(activation) }
        guard paired else { throw WCError(.deviceNotPaired) }
        // The relay's order (PROTOCOL.md §4.1): the size, then the counterpart's app.
        try Self.checkSize(payload, limit: limit)
        guard installed else { throw counterpartAppNotInstalled }
        guard reachable else { throw WCError(.notReachable) }
    }

    private func fail(_ errorHandler: AppHandler<any Error>?, _ error: any Error) {
        guard let errorHandler else { return }
        let wcError = Self.wcError(error)
        delegateQueue.async { errorHandler.call(wcError) }
    }

    // MARK: - Application context

    /// Replaces the context the counterpart receives (latest wins); delivered in the background.
    /// A dictionary equal to the last one sent (``applicationContext``) is not sent again.
    ///
    /// - Throws: `sessionNotActivated` before activation, `deviceNotPaired`,
    ///   `payloadUnsupportedTypes`, `payloadTooLarge` (over 256 KiB).
    public func updateApplicationContext(_ applicationContext: [String: Any]) throws {
        let id = Self.newID()
        let payload = try PropertyListPayload.encode(applicationContext, channel: .context, extra: ["tid": .string(id)])
        let (outbox, _) = try readyForDurableSend(payload, \.contextBytes)
        // As on a device, a context identical to the last one sent is not sent again: the
        // counterpart's delegate hears it once (apps add a timestamp to force a delivery).
        let (last, refused) = state.withLock { ($0.applicationContext, $0.lastContextRefused) }
        if let last, !refused, last.members["dict"] == payload.members["dict"] { return }
        do {
            try outbox.enqueue(id: id, channel: .context, payload: payload)
        } catch {
            throw WCError(.insufficientSpace, userInfo: [NSLocalizedDescriptionKey: "Cannot store the context: \(error)"])
        }
        state.withLock { s in
            s.applicationContext = payload
            s.lastContextRefused = false
        }
        wakeDrainer()
    }

    // MARK: - User info

    /// Queues `userInfo` for delivery in order, even after this app exits; failures come
    /// through `session(_:didFinish:error:)`.
    @discardableResult
    public func transferUserInfo(_ userInfo: [String: Any] = [:]) -> WCSessionUserInfoTransfer {
        transfer(userInfo, complication: false)
    }

    /// Phone: sends `userInfo` for the complication ahead of other transfers, within the daily
    /// budget (``remainingComplicationUserInfoTransfers``); with none left it goes as plain userInfo.
    @discardableResult
    public func transferCurrentComplicationUserInfo(_ userInfo: [String: Any] = [:]) -> WCSessionUserInfoTransfer {
        transfer(userInfo, complication: true)
    }

    private func transfer(_ userInfo: [String: Any], complication: Bool) -> WCSessionUserInfoTransfer {
        let id = Self.newID()
        var payload = Payload(kind: PropertyListPayload.Channel.userInfo.rawValue, ["tid": .string(id)])
        var isCurrent = false
        do {
            if complication && environment?.role != .phone {
                throw WCError(.sessionNotSupported, userInfo: [NSLocalizedDescriptionKey: "Complications go phone → watch."])
            }
            payload = try PropertyListPayload.encode(userInfo, channel: .userInfo, extra: ["tid": .string(id)])
            let (outbox, _) = try readyForDurableSend(payload, \.userInfoBytes)
            // The budget is taken only for a transfer that goes: a refused one spends nothing
            // (the relay never counts it), and nothing can overwrite the count in between.
            isCurrent =
                complication
                && state.withLock { s in
                    guard s.isPaired, s.complicationEnabled, s.remainingComplications > 0 else { return false }
                    s.unacceptedComplications.insert(id)
                    return true
                }
            let transfer = WCSessionUserInfoTransfer(id: id, payload: payload, sentAsComplication: isCurrent, session: self)
            try outbox.enqueue(id: id, channel: isCurrent ? .complication : .userInfo, payload: payload)
            state.withLock { s in
                s.addTransfer(transfer)
                if isCurrent { s.currentComplicationID = id }
            }
            wakeDrainer()
            return transfer
        } catch {
            // Only a failed save gets here with the budget taken.
            if isCurrent { _ = state.withLock { $0.unacceptedComplications.remove(id) } }
            let transfer = WCSessionUserInfoTransfer(id: id, payload: payload, sentAsComplication: false, session: self, unsent: userInfo)
            let wcError = Self.wcError(error)
            delegateQueue.async {
                self.delegateOnQueue()?.session(self, didFinish: transfer, error: wcError)
            }
            return transfer
        }
    }

    /// Whether `id` is the complication transfer tagged current (the newest one sent as such).
    func isCurrentComplication(_ id: String) -> Bool {
        state.withLock { $0.currentComplicationID == id }
    }

    /// `cancel()` of a user info transfer.
    func cancel(_ transfer: WCSessionUserInfoTransfer) {
        guard state.withLock({ s in
            s.unacceptedComplications.remove(transfer.id)
            return s.removeTransfer(transfer.id)
        }) != nil else { return }
        _ = try? parts.withLock { $0.outbox }?.cancel(transfer.id)
        wakeDrainer()
    }

    // MARK: - Checks

    /// The outbox, once the session may send `payload` (nil: a file, whose chunks are sized
    /// apart) within `limit`: activated, paired, the size (PROTOCOL.md §4.1's order), and the
    /// counterpart's app installed; with the limit in force.
    func readyForDurableSend(_ payload: Payload?, _ limit: KeyPath<Limits, Int>) throws(WCError) -> (SessionOutbox, Int) {
        let (activation, paired, installed, bytes) = state.withLock {
            ($0.activationState, $0.isPaired, $0.peerAppInstalled, $0.limits[keyPath: limit])
        }
        // "A delegate must exist before the session will allow sends" (WCSession.h).
        guard hasDelegate else { throw WCError(.sessionMissingDelegate) }
        guard activation == .activated, let outbox = parts.withLock({ $0.outbox }) else {
            throw Self.notActivated(activation)
        }
        guard paired else { throw WCError(.deviceNotPaired) }
        if let payload { try Self.checkSize(payload, limit: bytes) }
        guard installed else { throw counterpartAppNotInstalled }
        return (outbox, bytes)
    }

    /// `watchAppNotInstalled` (7006) on the phone, `companionAppNotInstalled` (7018) on the
    /// watch: the counterpart said its app was uninstalled (PROTOCOL.md §7.1).
    var counterpartAppNotInstalled: WCError {
        WCError(environment?.role == .watch ? .companionAppNotInstalled : .watchAppNotInstalled)
    }

    /// `sessionInactive` while the phone switches watches (``switchWatch(to:)``), else `sessionNotActivated`.
    static func notActivated(_ activation: WCSessionActivationState) -> WCError {
        WCError(activation == .inactive ? .sessionInactive : .sessionNotActivated)
    }

    static func checkSize(_ payload: Payload, limit: Int) throws(WCError) {
        guard payload.encodedSize <= limit else {
            throw WCError(
                .payloadTooLarge,
                userInfo: [NSLocalizedDescriptionKey: "Payload is too large (\(payload.encodedSize) bytes; the limit is \(limit))."])
        }
    }

    /// The `WCError` a WatchConnectivity app expects for a failure of the relay session.
    static func wcError(_ error: any Error) -> WCError {
        if let error = error as? WCError { return error }
        guard let error = error as? RelaySessionError else {
            return WCError(.genericError, userInfo: [NSLocalizedDescriptionKey: "\(error)"])
        }
        let code: WCError.Code
        switch error {
        case .disconnected, .timeout: code = .notReachable
        default: code = error.wcCode.flatMap(WCError.Code.init(rawValue:)) ?? .genericError
        }
        return WCError(code, userInfo: [NSLocalizedDescriptionKey: error.description])
    }
}
