import Dispatch
// Re-exported, as Apple's module does (its headers import Foundation and the module exports
// it): a session manager file with only `import WatchConnectivity` sees NSObject, Date, Data.
@_exported import Foundation
import Primitives
import RelayClient
import RelayProtocol

/// `WCSession` on Linux: Apple's API over a ``RelayClient/RelaySession`` to the WatchRelay relay.
///
/// Use it as on iOS and watchOS: set ``delegate``, call ``activate()``, wait for
/// `session(_:activationDidCompleteWith:error:)`, then send. The process's side and relay come
/// from the environment (``WCSessionEnvironment``: `WATCHRELAY_URL`, `WATCHRELAY_ROLE`,
/// `WATCHRELAY_STATE`); the state directory must have been paired with `watchrelay pair`, as a
/// real phone is paired with its watch outside the app.
///
/// The calls are synchronous, as Apple's: durable transfers (`updateApplicationContext`,
/// `transferUserInfo`) are written to the device's store before the call returns and sent to the
/// relay in order by a background task; live messages are sent in order by another. Delegate
/// methods run serially on one non-main serial queue.
public final class WCSession: NSObject, Sendable {
    /// The session of this process, configured from the environment.
    public static let `default` = WCSession(environment: WCSessionEnvironment())

    /// Whether this process can use sessions: true when the environment names a relay, a role
    /// and a state directory (on iOS: false on an iPad). When false, the first call says why on
    /// standard error (a variable missing or misspelled looks like an iPad otherwise).
    public static func isSupported() -> Bool {
        guard WCSessionEnvironment() == nil else { return true }
        sayWhyUnsupported("WCSession.isSupported() is false")
        return false
    }

    /// Says on standard error, once per process, which variable of the environment selects no
    /// device: when ``isSupported()`` is false, or when an app that never asked it (a watch app
    /// may not: sessions are "always available on watchOS") activates and gets
    /// `sessionNotSupported`. Nothing when the environment is complete (a session made with
    /// `environment: nil` on purpose).
    static func sayWhyUnsupported(_ what: String) {
        guard let problem = WCSessionEnvironment.problem(),
            unsupportedSaid.withLock({ said in defer { said = true }; return !said })
        else { return }
        StandardError.write(
            "WatchConnectivity (WatchRelay): \(what): \(problem). Start the app with "
                + "WATCHRELAY_URL=ws://HOST:PORT/v1, WATCHRELAY_ROLE=phone|watch and WATCHRELAY_STATE=<a directory "
                + "`watchrelay pair` paired>.\n")
    }

    /// Whether the environment's problem was said (once per process).
    private static let unsupportedSaid = LockedState(false)

    /// Where the delegate methods run: one serial queue, never the main one.
    let delegateQueue = DispatchQueue(label: "WatchConnectivity.WCSession.delegate")
    let environment: WCSessionEnvironment?
    let state: LockedState<SessionState>
    let delegateReference = LockedState(DelegateReference(nil))
    let parts = LockedState(RunningParts())

    /// A session for `environment` (WatchRelay addition, for running two devices in one
    /// process, as tests do). Apps use ``default``.
    public init(environment: WCSessionEnvironment?) {
        self.environment = environment
        self.state = LockedState(
            SessionState(
                isForeground: environment?.foreground ?? true,
                complicationEnabled: environment?.complicationEnabled ?? false,
                foregroundMatters: environment?.role == .watch))
    }

    // MARK: - Delegate

    /// The delegate (weak). A delegate must be set before ``activate()``: without one, sends
    /// fail with `sessionMissingDelegate`, and received transfers wait for one (unacknowledged).
    public var delegate: (any WCSessionDelegate)? {
        get { delegateReference.withLock { $0 }.object as? any WCSessionDelegate }
        set {
            let reference = DelegateReference(newValue)
            delegateReference.withLock { $0 = reference }
            if newValue != nil { resumeDelegateWaiters() }
        }
    }

    /// Whether the app has a delegate set (without calling it).
    var hasDelegate: Bool { delegateReference.withLock { $0.object != nil } }

    /// Waits until the app has set a delegate: WatchConnectivity hands received transfers only
    /// to a delegate, and an item nobody was told of must not be acknowledged. False if the
    /// task is cancelled first (the session stops).
    func waitForDelegate() async -> Bool {
        while !hasDelegate {
            if Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s in
                        // Checked under the state lock: a setter that ran before is seen here,
                        // one that runs after finds this waiter.
                        guard !hasDelegate, !Task.isCancelled else { return true }
                        s.delegateWaiters.append(waiter)
                        return false
                    }
                    if ready { waiter.resume() }
                }
            } onCancel: {
                resumeDelegateWaiters()
            }
        }
        return true
    }

    func resumeDelegateWaiters() {
        let waiters = state.withLock { s in
            defer { s.delegateWaiters = [] }
            return s.delegateWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - State

    /// `notActivated` until activation completed, then `activated`.
    public var activationState: WCSessionActivationState { state.withLock { $0.activationState } }
    /// Whether a received item is with the delegate or waits for one to be set (items the
    /// relay has not sent yet are not counted: it does not announce its backlog).
    public var hasContentPending: Bool { state.withLock { $0.contentPending > 0 } }
    /// Whether the counterpart is available for live messaging (`sendMessage`).
    public var isReachable: Bool { state.withLock { $0.isReachable } }
    /// Phone: whether a watch is paired with this phone (`watchrelay pair` ran for its state).
    public var isPaired: Bool { state.withLock { $0.isPaired } }
    /// Phone: whether the watch app is installed: paired, and the watch did not say its app was
    /// uninstalled (``uninstallApp()``) since it last ran.
    public var isWatchAppInstalled: Bool { state.withLock { $0.isCounterpartAppInstalled } }
    /// Phone: whether the watch app's complication is on the active face
    /// (`WATCHRELAY_COMPLICATION`, default yes, and paired).
    public var isComplicationEnabled: Bool { state.withLock { $0.isPaired && $0.complicationEnabled } }
    /// Watch: whether the phone app is installed: paired, and the phone did not say its app was
    /// uninstalled (``uninstallApp()``) since it last ran.
    public var isCompanionAppInstalled: Bool { state.withLock { $0.isCounterpartAppInstalled } }
    /// Watch: always false here (a relay has no locked phone).
    public var iOSDeviceNeedsUnlockAfterRebootForReachability: Bool { false }
    /// Phone: a directory for data about the active watch, inside that watch's state directory
    /// (one per watch, ``PhoneWatches``), so it changes when the active watch changes; `nil`
    /// until activated and paired.
    public var watchDirectoryURL: URL? {
        guard let environment, environment.role == .phone, activationState == .activated, isPaired,
            let directory = parts.withLock({ $0.deviceDirectory })
        else { return nil }
        let url = URL(fileURLWithPath: directory).appendingPathComponent("WatchDirectory")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
    /// Phone: complication transfers left today (0 when the complication is not enabled).
    public var remainingComplicationUserInfoTransfers: Int {
        state.withLock { $0.isPaired && $0.complicationEnabled ? $0.remainingComplications : 0 }
    }
    /// The last application context this device sent (empty if none).
    public var applicationContext: [String: Any] {
        state.withLock { $0.applicationContext }.map(PropertyListPayload.dictionary(of:)) ?? [:]
    }
    /// The last application context received from the counterpart (empty if none).
    public var receivedApplicationContext: [String: Any] {
        state.withLock { $0.receivedApplicationContext }.map(PropertyListPayload.dictionary(of:)) ?? [:]
    }
    /// userInfo transfers not yet received by the counterpart, in the order sent.
    public var outstandingUserInfoTransfers: [WCSessionUserInfoTransfer] {
        state.withLock { s in s.outstandingOrder.compactMap { s.transfers[$0] } }
    }
    /// File transfers not yet delivered, in the order sent.
    public var outstandingFileTransfers: [WCSessionFileTransfer] { state.withLock { $0.fileTransfers } }

    /// Watch (WatchRelay addition): the app moved to the foreground or the background. A
    /// watch app in the background is not reachable for the phone's messages, and reads
    /// `isReachable` false itself (its `sendMessage` fails with `notReachable`), as on a watch.
    public func setApplicationForeground(_ foreground: Bool) {
        let changed = state.withLock { s in
            let before = s.isReachable
            s.isForeground = foreground
            return s.isReachable != before
        }
        if changed {
            delegateQueue.async { self.delegateOnQueue()?.sessionReachabilityDidChange(self) }
        }
        guard let relay = parts.withLock({ $0.relay }) else { return }
        enqueue(.foreground(relay, foreground))
    }

    func isOutstanding(_ transfer: WCSessionUserInfoTransfer) -> Bool {
        state.withLock { $0.transfers[transfer.id] != nil }
    }

    func isOutstanding(_ transfer: WCSessionFileTransfer) -> Bool {
        state.withLock { s in s.fileTransfers.contains { $0 === transfer } }
    }

    // MARK: - Calling the delegate

    /// Runs `body` with the delegate on the delegate queue and returns after it returned.
    ///
    /// A delegate whose conformance is isolated to the main actor can't be used here (a cast
    /// to `WCSessionDelegate` off the main actor fails for it): the process stops with Swift's
    /// isolation check, as an iOS app does in `_dispatch_assert_queue_fail`.
    /// Returns whether there was a delegate to call (the weak reference may have gone).
    @discardableResult
    func withDelegate(_ body: @escaping @Sendable (WCSession, any WCSessionDelegate) -> Void) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            delegateQueue.async {
                guard let delegate = self.delegateOnQueue() else { return done.resume(returning: false) }
                body(self, delegate)
                done.resume(returning: true)
            }
        }
    }

    func delegateOnQueue() -> (any WCSessionDelegate)? {
        guard let object = delegateReference.withLock({ $0 }).object else { return nil }
        let value: Any = object
        if let delegate = value as? any WCSessionDelegate { return delegate }
        let message = """
            WatchConnectivity: \(type(of: object)) conforms to WCSessionDelegate isolated to the main actor \
            (default isolation MainActor?), but WCSession calls its delegate on a background queue. \
            Declare the class `nonisolated` and send only Sendable values to the main actor.

            """
        StandardError.write(message)
        MainActor.assumeIsolated {}
        fatalError(message)
    }

    /// The default `didReceiveMessage:replyHandler:` ran: the app has no reply variant.
    func replyVariantMissing() {
        state.withLock { $0.replyVariantMissing = true }
    }

    /// The default `didReceiveMessage:` (or `…MessageData:`) ran: a message sent without a
    /// reply handler reached a delegate that implements only the reply variant. It is dropped,
    /// and the sender hears nothing, as on a device, where this is a common "my messages
    /// never arrive"; the developer is told once, on standard error, as the device's console does.
    func plainVariantMissing(_ method: String) {
        let first = state.withLock { s in s.warnedPlainVariantMissing.insert(method).inserted }
        guard first else { return }
        StandardError.write(
            "WatchConnectivity: a message sent without a reply handler arrived, and the delegate does not implement "
                + "\(method); it was dropped. Implement that method, or send with a replyHandler.\n")
    }
}

/// The delegate, held weakly.
///
/// `@unchecked Sendable`: a delegate is an app object that is not `Sendable` (Apple's API). The
/// reference is written once, in `init`, and only read after; the session calls the object
/// only on its delegate queue, which is WatchConnectivity's contract with the app.
final class DelegateReference: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject?) { self.object = object }
}

/// A reply or error handler of the app's, carried to the delegate queue.
///
/// `@unchecked Sendable`: Apple's handler types are not `Sendable` and WatchConnectivity calls
/// them on its own background queue; the session calls each handler at most once, only on its
/// delegate queue. A handler isolated to the main actor (a closure written in a `@MainActor`
/// type) is the app's mistake there as here: iOS stops the app when it runs (the isolation
/// check of its Objective-C import); Swift on Linux compiles such a closure with no check, and
/// the `@isolated(any)` type that would let the session see its isolation is not Apple's
/// signature, so protocols over `WCSession` would no longer match (README, "Test your own app").
struct AppHandler<Argument>: @unchecked Sendable {
    let call: (Argument) -> Void

    static func wrap(_ handler: ((Argument) -> Void)?) -> AppHandler? {
        handler.map(AppHandler.init(call:))
    }

    /// The handler as the session's queue holds it.
    var sendable: @Sendable (Argument) -> Void {
        { [self] argument in call(argument) }
    }
}
