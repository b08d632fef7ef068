import RelayClient
import RelayProtocol

/// The session's mutable state, behind the session's lock.
struct SessionState: Sendable {
    var activationState = WCSessionActivationState.notActivated
    /// Whether `activationDidCompleteWith` has returned (or found no delegate to call):
    /// ``activationState`` is set before the call, so it alone does not say the delegate ran.
    var activationReported = false
    var isPaired = false
    /// Whether the relay sees the counterpart app reachable.
    var peerReachable = false
    /// Whether the relay says the counterpart's app is installed (PROTOCOL.md §7.1).
    var peerAppInstalled = true
    var isForeground: Bool
    /// Watch: its own app must be in the foreground to message the phone.
    let foregroundMatters: Bool
    var complicationEnabled: Bool
    /// The complication budget left as the relay last said it (it counts a transfer when it
    /// accepts one).
    var relayRemainingComplications = Limits.default.complicationsPerDay
    /// Complication transfers the app made that the relay has not accepted yet (outbox ids):
    /// spent already, though the relay's count does not show them.
    var unacceptedComplications: Set<String> = []
    /// `remainingComplicationUserInfoTransfers`: the relay's count less what it has not seen yet,
    /// so that neither a relaunch nor a reconnection gives back a transfer still queued here.
    var remainingComplications: Int { max(0, relayRemainingComplications - unacceptedComplications.count) }
    var limits = Limits.default
    var applicationContext: Payload?
    /// The relay refused ``applicationContext`` for good: it was not sent, so an equal one goes.
    var lastContextRefused = false
    var receivedApplicationContext: Payload?
    /// Outstanding userInfo transfers by id, and their order.
    var transfers: [String: WCSessionUserInfoTransfer] = [:]
    var outstandingOrder: [String] = []
    /// The complication transfer tagged current: the newest sent within the budget.
    var currentComplicationID: String?
    /// Relay send ids whose `transferred` came before the drainer wrote them down.
    var finishedEarly: Set<String> = []
    var fileTransfers: [WCSessionFileTransfer] = []
    /// Received items being handed to the delegate.
    var contentPending = 0
    /// Bumped when a received item reached the delegate or the outbox drainer handled an item
    /// or ran out of them; who waits for that (a watch switch draining what is pending).
    var progress: UInt64 = 0
    var progressWaiters: [CheckedContinuation<Void, Never>] = []
    /// Durable deliveries waiting for the app to set a delegate.
    var delegateWaiters: [CheckedContinuation<Void, Never>] = []
    /// Set by the default reply-variant delegate methods during a delegate call.
    var replyVariantMissing = false
    /// The plain (no reply) delegate methods found missing and already reported on standard error.
    var warnedPlainVariantMissing: Set<String> = []

    init(isForeground: Bool, complicationEnabled: Bool, foregroundMatters: Bool = false) {
        self.isForeground = isForeground
        self.foregroundMatters = foregroundMatters
        self.complicationEnabled = complicationEnabled
    }

    /// `isReachable`: on the watch, true only while its app is in the foreground too ("the
    /// WatchKit extension is running in the foreground", Apple's `isReachable`).
    var isReachable: Bool { peerReachable && (isForeground || !foregroundMatters) }

    /// `isWatchAppInstalled` (phone), `isCompanionAppInstalled` (watch): paired, and the
    /// counterpart's app not uninstalled.
    var isCounterpartAppInstalled: Bool { isPaired && peerAppInstalled }

    mutating func addTransfer(_ transfer: WCSessionUserInfoTransfer) {
        guard transfers[transfer.id] == nil else { return }
        transfers[transfer.id] = transfer
        outstandingOrder.append(transfer.id)
    }

    /// Forgets what belongs to the watch the phone switched away from (its transfers stay in
    /// that watch's store and come back when it is active again).
    mutating func forgetWatch() {
        isPaired = false
        peerReachable = false
        peerAppInstalled = true
        relayRemainingComplications = Limits.default.complicationsPerDay
        unacceptedComplications = []
        limits = Limits.default
        applicationContext = nil
        receivedApplicationContext = nil
        transfers = [:]
        outstandingOrder = []
        currentComplicationID = nil
        finishedEarly = []
        fileTransfers = []
    }

    mutating func removeTransfer(_ id: String) -> WCSessionUserInfoTransfer? {
        outstandingOrder.removeAll { $0 == id }
        return transfers.removeValue(forKey: id)
    }
}

/// What runs once ``WCSession/activate()`` was called.
struct RunningParts: Sendable {
    var started = false
    var relay: RelaySession?
    var outbox: SessionOutbox?
    var tasks: [Task<Void, Never>] = []
    var messages: AsyncStream<SessionOperation>.Continuation?
    var replies: AsyncStream<SessionOperation>.Continuation?
    var drainWake: AsyncStream<Void>.Continuation?
    /// The device state directory of the last activation (phone: the active watch's).
    var lastWatchDirectory: String?
    /// The device state directory of this activation.
    var deviceDirectory: String?
    /// A switch another process asked for (`watchrelay switch-watch`), while it runs.
    var switching: Task<Void, Never>?
}

/// Work for the session's sending tasks, in the order the app asked for it.
enum SessionOperation: Sendable {
    /// A live message; `onReply` gets the answer payload, `onError` the failure.
    case message(
        Payload, onReply: (@Sendable (Payload) -> Void)?, onError: (@Sendable (any Error) -> Void)?)
    /// The app's answer to a received message.
    case reply(Delivery, Payload)
    /// Watch: the app's foreground state changed.
    case foreground(RelaySession, Bool)
}
