import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// The headless watch as one value: the favorites list, the widget system and the profile
/// screen, wired the way GitExplorer's watch app should be.
///
/// The wiring is the fix for the seed app's bug: a snapshot is stored *first*, then the
/// `favorites` widgets are asked to reload (``WidgetScheduler/reloadTimelines(ofKind:reason:snapshotSentAt:now:)``),
/// and the next ``flush(now:)`` reads the stored favorites. The live watch process feeds it
/// network events and publishes the returned events; it never mutates the parts directly.
public struct WatchAppState: Sendable {
    /// The favorites list and its pending deletes.
    public private(set) var favorites: FavoritesViewModel
    /// The widget system.
    public private(set) var widgets: WidgetScheduler
    /// The open profile screen, if any.
    public private(set) var profile: ProfileDetail?
    /// The last repo list loaded per login (lowercased), to show stale when the phone is away.
    public private(set) var repoCache: [String: RepoList] = [:]

    /// A watch with these favorites and widgets.
    public init(favorites: FavoritesViewModel = FavoritesViewModel(), widgets: WidgetScheduler) {
        self.favorites = favorites
        self.widgets = widgets
    }

    /// A watch with the standard widgets (``WidgetDescriptor/standard``) placed at `now`.
    public static func standard(
        rules: WidgetRules = WidgetRules(), provider: FavoritesTimelineProvider = FavoritesTimelineProvider(),
        now: Timestamp
    ) -> WatchAppState {
        WatchAppState(
            widgets: WidgetScheduler(widgets: WidgetDescriptor.standard, rules: rules, provider: provider, now: now))
    }

    /// Stores a `favorites.snapshot` sent at `sentAt` (an instant of the watch's clock:
    /// `HeadlessWatch` places the relay's stamp on it) and, if it was newer (or came
    /// `fromNewPair`, whose revisions start again), requests a reload of the `favorites`
    /// widgets; returns whether it was stored.
    @discardableResult
    public mutating func receive(
        _ snapshot: FavoritesSnapshot, sentAt: Timestamp, now: Timestamp, fromNewPair: Bool = false
    ) -> Bool {
        guard favorites.receive(snapshot, fromNewPair: fromNewPair) else { return false }
        widgets.reloadTimelines(ofKind: .favorites, reason: .snapshotReceived, snapshotSentAt: sentAt, now: now)
        return true
    }

    /// `delete <login>`: marks the user pending and returns the `favorites.delete` to send.
    public mutating func delete(_ login: String) -> LoginCommand? {
        favorites.delete(login)
    }

    /// Takes back a `delete` that could not be stored (nothing was sent).
    public mutating func undoDelete(_ login: String) {
        favorites.undoDelete(login)
    }

    /// The app entered or left the foreground; entering it requests a (free) reload.
    public mutating func setForeground(_ foreground: Bool, now: Timestamp) {
        let entering = foreground && !widgets.isAppForeground
        widgets.setAppForeground(foreground)
        if entering { widgets.reloadTimelines(ofKind: .favorites, reason: .foregroundRequest, now: now) }
    }

    /// Changes a widget's selected user (its configuration intent).
    public mutating func configure(_ widgetID: String, selecting login: String?, now: Timestamp) throws(WatchAppError) {
        try widgets.configure(widgetID, SelectedUserIntent(login: login), now: now)
    }

    /// Asks for a reload by hand (`reason: manual`).
    public mutating func requestReload(now: Timestamp) {
        widgets.reloadTimelines(ofKind: .favorites, reason: .manual, now: now)
    }

    /// Turns the `--no-budget` debug switch on or off.
    public mutating func setNoBudget(_ on: Bool) {
        widgets.setNoBudget(on)
    }

    /// `open <login>`: shows the profile screen (with the cached list) and returns the request to send.
    public mutating func openProfile(_ login: String) -> ProfileDetail.Action? {
        var screen = ProfileDetail(login: login, cached: repoCache[login.lowercased()])
        let action = screen.handle(.requested)
        profile = screen
        return action
    }

    /// Feeds the open profile screen; a reply also fills the cache. Returns what to send.
    @discardableResult
    public mutating func handleProfile(_ event: ProfileDetail.Event) -> ProfileDetail.Action? {
        guard var screen = profile else { return nil }
        let action = screen.handle(event)
        profile = screen
        if case .loaded(let list) = screen.phase { repoCache[list.login.lowercased()] = list }
        return action
    }

    /// Closes the profile screen.
    public mutating func closeProfile() {
        profile = nil
    }

    /// Runs the widget system's due work at `now` over the stored favorites.
    public mutating func flush(now: Timestamp) -> WidgetPass {
        widgets.flush(now: now, favorites: favorites.snapshot)
    }

    /// When ``flush(now:)`` has work next.
    public func nextWakeUp(now: Timestamp) -> Timestamp? {
        widgets.nextWakeUp(now: now)
    }
}
