// The watch app's WatchConnectivity code, as a watchOS developer writes it from Apple's
// documentation and sample ("Transferring data with Watch Connectivity"): persist what arrives,
// then ask WidgetKit to reload the complication; talk to the phone live when it is reachable
// and fall back to a background transfer when it is not.
import Foundation
import WatchConnectivity
import WidgetKit

/// The watch side: keeps the phone's summary in the shared store and the complication fresh.
///
/// `@unchecked Sendable`: delegate methods run on WatchConnectivity's queue, the app's calls
/// anywhere; the mutable state is behind `lock`.
public final class WatchSessionManager: NSObject, WCSessionDelegate, @unchecked Sendable {
    public let session: WCSession
    public let store: WorkoutStore
    private let events = EventLog()
    private let lock = NSLock()
    private var _currentMinutes = 0

    /// What the delegate was told, in order.
    public var log: [String] { events.all }

    private func note(_ event: String) { events.note(event) }

    /// Asks WidgetKit for new timelines of the complication (tests give their own).
    private let reloadComplication: @Sendable () -> Void

    /// A watch needs no `WCSession.isSupported()` check ("Session is always available on WatchOS").
    public init(
        session: WCSession = .default, store: WorkoutStore,
        reloadComplication: @escaping @Sendable () -> Void = {
            WidgetCenter.shared.reloadTimelines(ofKind: WorkoutWidgetKind.kind)
        }
    ) {
        self.session = session
        self.store = store
        self.reloadComplication = reloadComplication
        super.init()
    }

    /// Sets the delegate, then activates.
    public func start() {
        session.delegate = self
        session.activate()
    }

    /// The running workout's minutes (what the phone's `progress` request reads).
    public var currentMinutes: Int {
        get { lock.withLock { _currentMinutes } }
        set { lock.withLock { _currentMinutes = newValue } }
    }

    // MARK: - Sending

    /// Asks the phone for today's summary when it is reachable; otherwise queues the request
    /// as userInfo, which the phone gets in the background (Apple: send immediate messages when
    /// reachable, fall back to background transfers otherwise).
    public func refreshSummary(_ completion: @escaping @Sendable (String) -> Void) {
        guard session.activationState == .activated else {
            completion("not activated")
            return
        }
        guard session.isReachable else {
            session.transferUserInfo(["lap": 0, "wants": "summary"])
            completion("queued")
            return
        }
        session.sendMessage(["request": "summary"], replyHandler: { [store, reloadComplication] reply in
            let minutes = reply["minutes"] as? Int ?? 0
            store.save(minutes: minutes, goal: reply["goal"] as? Int)
            reloadComplication()
            completion("replied \(minutes)")
        }, errorHandler: { error in
            switch error {
            case WCError.notReachable: completion("notReachable")
            case WCError.messageReplyTimedOut: completion("timedOut")
            default: completion("error \((error as NSError).code)")
            }
        })
    }

    /// Sends a heart-rate sample as data and waits for the phone's echo.
    public func echo(_ data: Data, _ completion: @escaping @Sendable (Data?) -> Void) {
        session.sendMessageData(data, replyHandler: { completion($0) }, errorHandler: { _ in completion(nil) })
    }

    /// Tells the phone the latest heart rate (latest wins).
    public func publish(heartRate: Int) throws {
        try session.updateApplicationContext(["heartRate": heartRate])
    }

    /// Sends a lap (delivered in order, even if the phone app is not running).
    @discardableResult
    public func send(lap: Int) -> WCSessionUserInfoTransfer {
        session.transferUserInfo(["lap": lap])
    }

    /// Sends a recorded file with its name as metadata.
    @discardableResult
    public func send(recording: URL) -> WCSessionFileTransfer {
        session.transferFile(recording, metadata: ["name": recording.lastPathComponent])
    }

    // MARK: - WCSessionDelegate (watchOS: no sessionDidBecomeInactive, sessionDidDeactivate
    // or sessionWatchStateDidChange, which are iOS only)

    public func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?
    ) {
        if let error {
            note("activation failed \((error as NSError).code)")
            return
        }
        note("activated \(activationState == .activated) companion=\(session.isCompanionAppInstalled)")
        // A context that arrived while the app was not running is already here after activation.
        let context = session.receivedApplicationContext
        if let minutes = context["minutes"] as? Int {
            store.save(minutes: minutes, goal: context["goal"] as? Int)
            reloadComplication()
        }
    }

    public func sessionCompanionAppInstalledDidChange(_ session: WCSession) {
        note("companion \(session.isCompanionAppInstalled)")
    }

    public func sessionReachabilityDidChange(_ session: WCSession) {
        note("reachable \(session.isReachable) unlock=\(session.iOSDeviceNeedsUnlockAfterRebootForReachability)")
    }

    public func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        guard let minutes = applicationContext["minutes"] as? Int else { return }
        store.save(minutes: minutes, goal: applicationContext["goal"] as? Int)
        note("context \(minutes) main=\(Thread.isMainThread) pending=\(session.hasContentPending)")
        // Persist first, then reload: the fix for "the widget didn't update".
        reloadComplication()
    }

    public func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        if let minutes = userInfo["complicationMinutes"] as? Int {
            store.save(minutes: minutes)
            note("complication \(minutes)")
            reloadComplication()
        } else if let workout = userInfo["workout"] as? String {
            store.append(workout: workout)
            note("workout \(workout)")
        }
    }

    public func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        note("message \(message.keys.sorted().joined(separator: ","))")
    }

    public func session(
        _ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void
    ) {
        let minutes = currentMinutes
        // A reply from another queue, later, is fine. The handler's type is not `Sendable` (as in
        // Apple's SDK), so Swift 6 asks for this to carry it to another queue.
        nonisolated(unsafe) let reply = replyHandler
        DispatchQueue.global().async {
            reply(["minutes": minutes])
        }
    }

    public func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        note("data \(messageData.count)")
    }

    public func session(
        _ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void
    ) {
        replyHandler(messageData)
    }

    public func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        note("didFinish lap \(userInfoTransfer.userInfo["lap"] as? Int ?? -1) \((error as? WCError)?.code.rawValue ?? 0)")
    }

    public func session(_ session: WCSession, didReceive file: WCSessionFile) {
        note("file \(file.fileURL.lastPathComponent)")
    }

    public func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        let progress = fileTransfer.progress
        note("fileFinished \(error == nil) \(progress.completedUnitCount)/\(progress.totalUnitCount)")
    }
}
