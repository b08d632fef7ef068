// The iPhone app's WatchConnectivity code as an iOS developer writes it from Apple's
// documentation (WCSession, WCSessionDelegate, WCError): every delegate method with Apple's
// exact signature, the property checks apps make before sending, and the error handling of
// `catch let error as WCError`. Nothing here was adapted to WatchRelay; the only seam is the
// `session` parameter (default `.default`), the usual one for tests. WorkoutCompanionTests
// runs it against a real relay with the watch side (WatchSessionManager).
import Foundation
import WatchConnectivity

/// The iPhone side: publishes the day's workout summary to the watch, queues finished
/// workouts, feeds the complication, and answers the watch's requests.
///
/// `@unchecked Sendable`: WatchConnectivity calls the delegate on its own background queue
/// while the app calls the methods below from anywhere; every mutable property is behind `lock`.
public final class PhoneSessionManager: NSObject, WCSessionDelegate, @unchecked Sendable {
    /// What the app did with a context update.
    public enum PublishResult: Equatable, Sendable {
        case sent
        /// Not sent: the session said why (`WCError.Code`).
        case failed(WCError.Code)
    }

    public let session: WCSession
    private let events = EventLog()
    private let lock = NSLock()
    private var _receivedFiles: [URL] = []
    private var _finished: [(userInfo: [String: Any], error: WCError.Code?)] = []
    private let documents: URL

    /// `WCSession.isSupported()` is checked by whoever makes the manager, as Apple's sample does.
    /// Received files go to `documents` (made if missing).
    public init(session: WCSession = .default, documents: URL) {
        self.session = session
        self.documents = documents
        super.init()
        try? FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
    }

    /// Sets the delegate, then activates ("A delegate must exist before the session will allow sends").
    public func start() {
        session.delegate = self
        session.activate()
    }

    /// What the delegate was told, in order (`"name detail"`).
    public var log: [String] { events.all }
    /// Files the watch sent, moved into the app's documents.
    public var receivedFiles: [URL] { lock.withLock { _receivedFiles } }
    /// `session(_:didFinish:error:)` calls: the transfer's userInfo and the error's code.
    public var finishedTransfers: [(userInfo: [String: Any], error: WCError.Code?)] { lock.withLock { _finished } }

    private func note(_ event: String) { events.note(event) }

    // MARK: - Sending

    /// Whether there is a watch to talk to: the checks Apple's sample makes before a transfer.
    public var canTalkToWatch: Bool {
        session.activationState == .activated && session.isPaired && session.isWatchAppInstalled
    }

    /// Publishes today's summary as the application context (latest wins).
    public func publish(minutes: Int, goal: Int) -> PublishResult {
        do {
            try session.updateApplicationContext(["minutes": minutes, "goal": goal, "sentAt": Date()])
            return .sent
        } catch let error as WCError {
            switch error.code {
            case .sessionNotActivated, .sessionInactive, .deviceNotPaired, .watchAppNotInstalled:
                note("publish not now \(error.code.rawValue)")
            case .payloadTooLarge, .payloadUnsupportedTypes:
                note("publish bad payload \(error.code.rawValue)")
            default:
                note("publish failed \(error.localizedDescription)")
            }
            return .failed(error.code)
        } catch {
            return .failed(.genericError)
        }
    }

    /// Queues a finished workout for the watch's history (delivered in order, even later).
    @discardableResult
    public func queue(workout name: String, minutes: Int) -> WCSessionUserInfoTransfer {
        session.transferUserInfo(["workout": name, "minutes": minutes])
    }

    /// Feeds the complication: urgent while the day's budget lasts, a plain transfer after
    /// (Apple: "If this property is set to 0, any additional calls … use transferUserInfo(_:) instead").
    @discardableResult
    public func pushComplication(minutes: Int) -> WCSessionUserInfoTransfer {
        if session.isComplicationEnabled && session.remainingComplicationUserInfoTransfers > 0 {
            return session.transferCurrentComplicationUserInfo(["complicationMinutes": minutes])
        }
        return session.transferUserInfo(["complicationMinutes": minutes])
    }

    /// Cancels every transfer the watch has not received yet.
    public func cancelOutstandingWorkouts() {
        for transfer in session.outstandingUserInfoTransfers where transfer.isTransferring {
            transfer.cancel()
        }
    }

    /// Asks the watch app how far the current workout is; `completion` gets the minutes, or the
    /// error (`.notReachable` when the watch app is not in the foreground).
    public func askWatchForProgress(_ completion: @escaping @Sendable (Result<Int, WCError>) -> Void) {
        guard session.isReachable else {
            completion(.failure(WCError(.notReachable)))
            return
        }
        session.sendMessage(
            ["request": "progress"],
            replyHandler: { reply in
                completion(.success(reply["minutes"] as? Int ?? -1))
            },
            errorHandler: { error in
                completion(.failure(error as? WCError ?? WCError(.genericError)))
            })
    }

    /// Sends a message the watch need not answer, ignoring failures (no handlers at all).
    public func nudgeWatch() {
        session.sendMessage(["nudge": true], replyHandler: nil, errorHandler: nil)
    }

    // MARK: - WCSessionDelegate

    public func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?
    ) {
        switch activationState {
        case .activated:
            note("activated paired=\(session.isPaired) installed=\(session.isWatchAppInstalled) main=\(Thread.isMainThread)")
        case .inactive:
            note("inactive")
        case .notActivated:
            note("notActivated \((error as? WCError)?.code.rawValue ?? 0)")
        @unknown default:
            note("unknown")
        }
    }

    public func sessionDidBecomeInactive(_ session: WCSession) {
        note("didBecomeInactive")
    }

    public func sessionDidDeactivate(_ session: WCSession) {
        note("didDeactivate")
        // Apple: "Call activate() again to talk to the new watch."
        session.activate()
    }

    public func sessionWatchStateDidChange(_ session: WCSession) {
        note(
            "watchState paired=\(session.isPaired) installed=\(session.isWatchAppInstalled) "
                + "complication=\(session.isComplicationEnabled) directory=\(session.watchDirectoryURL != nil)")
    }

    public func sessionReachabilityDidChange(_ session: WCSession) {
        note("reachable \(session.isReachable)")
    }

    public func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        note("message \(message.keys.sorted().joined(separator: ","))")
    }

    public func session(
        _ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void
    ) {
        note("request \(message["request"] as? String ?? "?") main=\(Thread.isMainThread)")
        switch message["request"] as? String {
        case "summary":
            let context = session.applicationContext
            replyHandler(["minutes": context["minutes"] ?? 0, "goal": context["goal"] ?? 0])
        default:
            replyHandler(["error": "unknown request"])
        }
    }

    public func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        note("data \(messageData.count)")
    }

    public func session(
        _ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void
    ) {
        note("dataRequest \(messageData.count)")
        replyHandler(Data(messageData.reversed()))
    }

    public func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        note("context \(applicationContext["heartRate"] as? Int ?? 0)")
    }

    public func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        note("userInfo \(userInfo["lap"] as? Int ?? 0)")
    }

    public func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        let code = (error as? WCError)?.code
        lock.withLock { _finished.append((userInfoTransfer.userInfo, code)) }
        note("didFinish \(userInfoTransfer.userInfo["workout"] as? String ?? "-") \(code?.rawValue ?? 0)")
    }

    public func session(_ session: WCSession, didReceive file: WCSessionFile) {
        // Apple: the file is deleted when this method returns; move it first.
        let name = file.metadata?["name"] as? String ?? file.fileURL.lastPathComponent
        let destination = documents.appendingPathComponent(name)
        do {
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: file.fileURL, to: destination)
            lock.withLock { _receivedFiles.append(destination) }
            note("file \(name)")
        } catch {
            note("file not moved \(error)")
        }
    }

    public func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        note("fileFinished \((error as? WCError)?.code.rawValue ?? 0)")
    }
}
