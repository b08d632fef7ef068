import Foundation
import GitExplorerModels
import WatchConnectivity

/// The phone's side of GitExplorer's watch link, as in the seed app after its fix.
///
/// `nonisolated`: the app target uses default main-actor isolation, and WCSession calls these
/// methods on its own background queue. Only `Sendable` values (a login `String`, the view
/// model, which is main-actor isolated) cross to the main actor.
nonisolated final class WatchConnectivityService: NSObject, WCSessionDelegate {
    weak var viewModel: FavoriteViewModel?
    private let session: WCSession

    init(session: WCSession = .default) {
        self.session = session
        super.init()
        if WCSession.isSupported() {
            session.delegate = self
            session.activate()
        }
    }

    /// Sends the favorites to the watch as JSON: the latest list wins (application context);
    /// if the context can't be updated, as a queued user info transfer.
    func sendFavoriteUsers(_ users: [GithubUser]) {
        guard session.activationState == .activated else { return }
        guard let data = try? JSONEncoder().encode(users) else { return }
        do {
            try session.updateApplicationContext(["favorites": data])
        } catch {
            session.transferUserInfo(["favorites": data])
        }
    }

    // MARK: - WCSessionDelegate

    func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?
    ) {
        let activated = activationState == .activated
        let viewModel = viewModel
        DispatchQueue.main.async {
            viewModel?.watchSessionActivated(activated)
        }
    }

    #if os(iOS) || WATCHRELAY_IOS
        func sessionDidBecomeInactive(_ session: WCSession) {}

        func sessionDidDeactivate(_ session: WCSession) {
            // The user switched watches: activate again for the new one.
            session.activate()
        }
    #endif

    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        guard let user = message["delete"] as? String else { return }
        let viewModel = viewModel
        DispatchQueue.main.async {
            viewModel?.removeToFavorite(id: user)
        }
    }

    /// The watch falls back to a user info transfer when the phone is not reachable.
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        guard let user = userInfo["delete"] as? String else { return }
        let viewModel = viewModel
        DispatchQueue.main.async {
            viewModel?.removeToFavorite(id: user)
        }
    }
}
