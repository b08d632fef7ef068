import Foundation
import GitExplorerModels

/// The seed's FavoriteViewModel, reduced to what the watch link needs (main-actor isolated by
/// the target's default isolation). Users are made up locally instead of fetched from GitHub.
final class FavoriteViewModel {
    private(set) var names: [String] = []
    private(set) var users: [GithubUser] = [] {
        didSet {
            printLine("favorites " + users.map(\.login).joined(separator: ","))
            watchConnectivity.sendFavoriteUsers(users)
        }
    }
    private let watchConnectivity: WatchConnectivityService

    init(watchConnectivity: WatchConnectivityService = WatchConnectivityService()) {
        self.watchConnectivity = watchConnectivity
        watchConnectivity.viewModel = self
    }

    func addToFavorite(id login: String) {
        guard !names.contains(login) else { return }
        names.append(login)
        users.append(
            GithubUser(
                login: login, id: abs(login.hashValue % 1_000_000), avatarUrl: "https://avatars.example/\(login)",
                publicRepos: login.count, followers: login.count * 10))
    }

    func removeToFavorite(id login: String) {
        printLine("remove \(login)")
        guard names.contains(login) else { return }
        names.removeAll { $0 == login }
        users.removeAll { $0.login == login }
    }

    /// Activation finished: push the current list (it may have changed before).
    func watchSessionActivated(_ activated: Bool) {
        printLine(activated ? "activated" : "activation failed")
        if activated { watchConnectivity.sendFavoriteUsers(users) }
    }
}
