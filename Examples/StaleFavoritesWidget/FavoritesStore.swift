import Foundation
import Primitives

/// The store the watch app and its widget extension share (on a watch: an App Group's
/// `UserDefaults(suiteName:)`). The app writes the favorites it receives from the phone; the
/// widget's provider reads them.
public final class FavoritesStore: Sendable {
    private let logins = LockedState<[String]>([])

    /// An empty store.
    public init() {}

    /// The stored favorites, in the phone's order.
    public var favorites: [String] { logins.withLock { $0 } }

    /// Replaces the stored favorites.
    public func save(_ favorites: [String]) {
        logins.withLock { $0 = favorites }
    }
}
