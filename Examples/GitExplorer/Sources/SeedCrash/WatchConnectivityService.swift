import Foundation
import GitExplorerModels
import WatchConnectivity

/// The seed's service BEFORE its fix: no `nonisolated`. With the target's default main-actor
/// isolation the class, and so its delegate methods, are silently main-actor isolated, and
/// its conformance to WCSessionDelegate is isolated to the main actor. WCSession calls the
/// delegate on its background queue: the first call stops the process, as the iOS app died in
/// `_dispatch_assert_queue_fail` inside `session(_:activationDidCompleteWith:error:)`.
final class WatchConnectivityService: NSObject, WCSessionDelegate {
    var removed: [String] = []
    private let session: WCSession

    init(session: WCSession = .default) {
        self.session = session
        super.init()
        session.delegate = self
        session.activate()
    }

    func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?
    ) {
        printLine("activation reached the delegate")
    }

    #if os(iOS) || WATCHRELAY_IOS
        func sessionDidBecomeInactive(_ session: WCSession) {}
        func sessionDidDeactivate(_ session: WCSession) {}
    #endif

    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        DispatchQueue.main.async { [weak self] in
            guard let self else { return }
            guard let user = message["delete"] as? String else { return }
            removed.append(user)
        }
    }
}
