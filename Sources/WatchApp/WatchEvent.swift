import RelayProtocol

/// Something the headless watch did or saw, for the terminal view, scenarios and tests.
public enum WatchEvent: Sendable, Hashable {
    /// The session with the relay is up (after every reconnect).
    case activated(paired: Bool)
    /// The watch joined a pair.
    case paired(peer: String)
    /// The connection to the relay dropped (the session reconnects by itself; ``activated`` follows).
    case disconnected
    /// The phone became reachable or not.
    case reachability(Bool)
    /// The iPhone app was uninstalled (false: deletes fail with `companion_app_not_installed`)
    /// or runs again (true), PROTOCOL.md §7.1: WatchConnectivity's `isCompanionAppInstalled`.
    case companionAppInstalled(Bool)
    /// A favorites snapshot was stored (before the widget reload it requests): the users it
    /// lists and how many more the phone has but left out to fit the relay's limit (its
    /// `omitted`, PROTOCOL.md §12.2; 0 for a whole list).
    case snapshotStored(revision: Int64, logins: [String], omitted: Int)
    /// The relay accepted a `favorites.delete` sent by userInfo.
    case deleteAccepted(login: String)
    /// A snapshot without a pending-delete user arrived: the delete is done.
    case deleteCompleted(login: String)
    /// The profile screen changed (loading, loaded, failed, offline).
    case profile(ProfileDetail)
    /// A widget reloaded, went stale, or rendered an entry.
    case widget(WidgetEvent)
    /// Something failed (shown to the user): its source, code and message.
    case error(WatchFailure)
}
