import Foundation
import GitExplorerModels
import WatchConnectivity

/// The watch's side of GitExplorer's link: favorites in, deletes out (`nonisolated`, as on the phone).
nonisolated final class WatchConnectivityService: NSObject, WCSessionDelegate {
    weak var model: WatchFavoritesModel?
    private let session: WCSession

    init(session: WCSession = .default) {
        self.session = session
        super.init()
        session.delegate = self
        session.activate()
    }

    /// Deletes a favorite on the phone: a live message with the "delete" key, or, when the
    /// phone is not reachable, the same dictionary as a queued user info transfer.
    func deleteFavorite(_ login: String) {
        guard session.activationState == .activated else { return }
        let session = session
        if session.isReachable {
            session.sendMessage(["delete": login], replyHandler: nil) { _ in
                session.transferUserInfo(["delete": login])
            }
        } else {
            session.transferUserInfo(["delete": login])
        }
    }

    // MARK: - WCSessionDelegate

    func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?
    ) {
        let model = model
        let users = Self.favorites(in: session.receivedApplicationContext)
        DispatchQueue.main.async {
            model?.sessionActivated(activationState == .activated, favorites: users)
        }
    }

    #if os(watchOS) || WATCHRELAY_WATCHOS
        func sessionCompanionAppInstalledDidChange(_ session: WCSession) {}
    #endif

    func sessionReachabilityDidChange(_ session: WCSession) {
        let reachable = session.isReachable
        let model = model
        DispatchQueue.main.async {
            model?.phoneReachabilityChanged(reachable)
        }
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        received(applicationContext)
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        received(userInfo)
    }

    private func received(_ dictionary: [String: Any]) {
        guard let users = Self.favorites(in: dictionary) else { return }
        let model = model
        DispatchQueue.main.async {
            model?.update(users)
        }
    }

    private static func favorites(in dictionary: [String: Any]) -> [GithubUser]? {
        guard let data = dictionary["favorites"] as? Data else { return nil }
        return try? JSONDecoder().decode([GithubUser].self, from: data)
    }
}
