import Foundation

/// `WCSessionActivationState`, with Apple's raw values.
public enum WCSessionActivationState: Int, Sendable, Hashable {
    /// Not activated: nothing is sent or received.
    case notActivated = 0
    /// Was activated and is moving to deactivated: data may still arrive, sending is an error.
    case inactive = 1
    /// Activated: the two apps may communicate.
    case activated = 2
}

/// `WCSessionDelegate`: what a ``WCSession`` tells its app, with Apple's method names.
///
/// Every method is called **serially on one non-main serial queue** of the session, never on
/// the main thread or the main actor, as in WatchConnectivity. Hop to the main actor yourself
/// with values that are `Sendable` (a login `String`, not the whole dictionary). A delegate
/// whose conformance is isolated to the main actor (a class compiled with
/// `defaultIsolation(MainActor.self)` and not marked `nonisolated`) cannot be called there:
/// the session then stops the process with Swift's own isolation check, as an iOS app dies in
/// `_dispatch_assert_queue_fail` (README, "The MainActor delegate crash").
///
/// Only ``session(_:activationDidCompleteWith:error:)`` is required. The rest have empty
/// default implementations, like Apple's optional methods; `sessionDidBecomeInactive` and
/// `sessionDidDeactivate`, required on iOS, are optional here because one source file serves
/// both sides. A message sent with a reply handler goes only to the `replyHandler:` variant:
/// when the delegate does not implement it the sender gets ``WCError/Code/deliveryFailed``.
public protocol WCSessionDelegate: NSObjectProtocol {
    /// Activation finished: `activationState` is `.activated`, or `.notActivated` with `error`.
    func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState,
        error: (any Error)?)
    /// The session is inactive (phone: the user is switching watches); pending data still arrives.
    func sessionDidBecomeInactive(_ session: WCSession)
    /// The session is deactivated: call `activate()` again to talk to the new watch.
    func sessionDidDeactivate(_ session: WCSession)
    /// Phone: `isPaired`, `isWatchAppInstalled`, `isComplicationEnabled` or `watchDirectoryURL` changed.
    func sessionWatchStateDidChange(_ session: WCSession)
    /// Watch: `isCompanionAppInstalled` changed.
    func sessionCompanionAppInstalledDidChange(_ session: WCSession)
    /// `isReachable` changed: read it again.
    func sessionReachabilityDidChange(_ session: WCSession)
    /// A live message sent without a reply handler.
    func session(_ session: WCSession, didReceiveMessage message: [String: Any])
    /// A live message whose sender waits for `replyHandler` (call it once).
    func session(
        _ session: WCSession, didReceiveMessage message: [String: Any],
        replyHandler: @escaping ([String: Any]) -> Void)
    /// Live message data sent without a reply handler.
    func session(_ session: WCSession, didReceiveMessageData messageData: Data)
    /// Live message data whose sender waits for `replyHandler` (call it once).
    func session(
        _ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void)
    /// The counterpart's latest application context (also on launch, if one waited).
    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any])
    /// A `transferUserInfo` (or complication) dictionary, in the order sent.
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any])
    /// Sender: a user info transfer was received by the counterpart, or failed with `error`.
    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?)
    /// A file: move `file.fileURL` before returning, or it is deleted.
    func session(_ session: WCSession, didReceive file: WCSessionFile)
    /// Sender: a file transfer was received by the counterpart, or failed with `error`.
    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?)
}

extension WCSessionDelegate {
    public func sessionDidBecomeInactive(_ session: WCSession) {}
    public func sessionDidDeactivate(_ session: WCSession) {}
    public func sessionWatchStateDidChange(_ session: WCSession) {}
    public func sessionCompanionAppInstalledDidChange(_ session: WCSession) {}
    public func sessionReachabilityDidChange(_ session: WCSession) {}
    public func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        session.plainVariantMissing("session(_:didReceiveMessage:)")
    }
    public func session(
        _ session: WCSession, didReceiveMessage message: [String: Any],
        replyHandler: @escaping ([String: Any]) -> Void
    ) {
        session.replyVariantMissing()
    }
    public func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        session.plainVariantMissing("session(_:didReceiveMessageData:)")
    }
    public func session(
        _ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void
    ) {
        session.replyVariantMissing()
    }
    public func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {}
    public func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {}
    public func session(
        _ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?
    ) {}
    public func session(_ session: WCSession, didReceive file: WCSessionFile) {}
    public func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {}
}
