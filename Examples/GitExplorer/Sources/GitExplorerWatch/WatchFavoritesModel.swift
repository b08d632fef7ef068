import Foundation
import GitExplorerModels

/// The watch app's favorites list (main-actor isolated by the target's default isolation).
final class WatchFavoritesModel {
    private(set) var users: [GithubUser] = []
    private let connectivity: WatchConnectivityService

    init(connectivity: WatchConnectivityService = WatchConnectivityService()) {
        self.connectivity = connectivity
        connectivity.model = self
    }

    func sessionActivated(_ activated: Bool, favorites: [GithubUser]?) {
        printLine(activated ? "activated" : "activation failed")
        if let favorites { update(favorites) }
    }

    func update(_ users: [GithubUser]) {
        self.users = users
        printLine("favorites " + users.map(\.login).joined(separator: ","))
    }

    /// Shown as the phone indicator.
    func phoneReachabilityChanged(_ reachable: Bool) {
        printLine("phone reachable: \(reachable)")
    }

    /// Swipe to delete: ask the phone; the list changes when the phone's new list arrives.
    func delete(_ login: String) {
        connectivity.deleteFavorite(login)
    }
}
