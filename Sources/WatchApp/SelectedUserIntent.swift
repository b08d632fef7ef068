import AppIntents
import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// The widget's configuration intent (an `AppIntentConfiguration` parameter): which favorite
/// the widget shows; `nil` rotates through all of them.
///
/// Resolution against the current favorites, in order:
/// 1. no favorites → ``Resolution/empty``;
/// 2. no selection → ``Resolution/rotate(_:)`` through every favorite;
/// 3. the selected login is a favorite (compared case-insensitively, as GitHub logins are)
///    → ``Resolution/user(_:position:fellBack:)`` with `fellBack == false`;
/// 4. the selected user was deleted → the first favorite, with `fellBack == true`.
public struct SelectedUserIntent: WidgetConfigurationIntent, Sendable, Hashable {
    /// The chosen favorite's login, or `nil` to rotate.
    public var login: String?

    /// An intent selecting `login` (`nil`: rotate).
    public init(login: String?) {
        self.login = login
    }

    /// The default configuration: rotate through every favorite.
    public init() {
        login = nil
    }

    /// What the intent means against a list of favorites.
    public enum Resolution: Sendable, Hashable {
        /// There are no favorites: the widget shows its empty state.
        case empty
        /// No user selected: rotate through these favorites, in the phone's order.
        case rotate([User])
        /// Show one user; `position` is 1-based among the favorites. `fellBack` is true when
        /// the selected user was deleted and this is the first favorite instead.
        case user(User, position: Int, fellBack: Bool)
    }

    /// Resolves the intent against `favorites` (in the phone's order).
    public func resolve(in favorites: [User]) -> Resolution {
        guard let first = favorites.first else { return .empty }
        guard let login else { return .rotate(favorites) }
        let wanted = login.lowercased()
        if let i = favorites.firstIndex(where: { $0.login.lowercased() == wanted }) {
            return .user(favorites[i], position: i + 1, fellBack: false)
        }
        return .user(first, position: 1, fellBack: true)
    }
}
