import Foundation
import WidgetKit

/// The watch app's side of the seed's bug: what it does when a new favorites list arrives
/// from the phone (in `session(_:didReceiveApplicationContext:)`).
public protocol FavoritesReceiver {
    /// Handles a favorites list from the phone.
    func receive(_ favorites: [String])
}

/// The seed app as it shipped: it stores the favorites and updates its own screen, but never
/// tells WidgetKit. The complication keeps showing the old list ("the widget did not refresh
/// after the favorites changed").
public struct StoringWatchApp: FavoritesReceiver {
    let store: FavoritesStore

    /// An app writing to `store`.
    public init(store: FavoritesStore) {
        self.store = store
    }

    public func receive(_ favorites: [String]) {
        store.save(favorites)
    }
}

/// The seed's fix: store first, then ask WidgetKit to reload the favorites widget, whose
/// provider then reads the new list.
public struct ReloadingWatchApp: FavoritesReceiver {
    let store: FavoritesStore

    /// An app writing to `store`.
    public init(store: FavoritesStore) {
        self.store = store
    }

    public func receive(_ favorites: [String]) {
        store.save(favorites)
        WidgetCenter.shared.reloadTimelines(ofKind: FavoritesProvider.kind)
    }
}
