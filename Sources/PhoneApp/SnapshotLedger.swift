import GitExplorerPayloads
import RelayProtocol

/// The revision counter and diff behind `favorites.snapshot`: a new revision only when the content changed.
///
/// Holds the last snapshot made (its revision and users). ``record(_:)`` compares a freshly
/// built user list with it and, when anything differs (order, a login, a count, a name),
/// returns the next snapshot with the revision one above; identical content returns `nil`,
/// so a periodic refresh that found nothing new pushes nothing. Revisions start at 1 and
/// strictly increase; the phone persists the ledger (``PhoneStore``) so they keep increasing
/// across restarts. Pure value type: no store, no session.
public struct SnapshotLedger: Sendable, Hashable {
    /// The revision of the last snapshot made; 0 before the first.
    public private(set) var revision: Int64
    /// The users of the last snapshot made; `nil` before the first.
    public private(set) var users: [User]?

    /// Creates a ledger, e.g. from the persisted revision and users.
    public init(revision: Int64 = 0, users: [User]? = nil) {
        self.revision = max(0, revision)
        self.users = users
    }

    /// The last snapshot made, if any.
    public var latest: FavoritesSnapshot? {
        users.map { FavoritesSnapshot(revision: revision, users: $0) }
    }

    /// Records `users` as the current content: the next snapshot if it differs from the last
    /// one (or there was none), else `nil` and nothing changes.
    public mutating func record(_ users: [User]) -> FavoritesSnapshot? {
        if let current = self.users, current == users { return nil }
        revision += 1
        self.users = users
        return FavoritesSnapshot(revision: revision, users: users)
    }

    /// The last snapshot again under the next revision (`nil` before the first), for a watch
    /// that holds it cut short and must take the whole of it (it skips a revision it holds).
    public mutating func reissue() -> FavoritesSnapshot? {
        guard let users else { return nil }
        revision += 1
        return FavoritesSnapshot(revision: revision, users: users)
    }

    /// Builds a snapshot's user list: the favorites in their order, each login once
    /// (case-insensitively), skipping logins with no known data yet, each in its watch form
    /// (``SnapshotFit/watchForm(_:)``: long names and URLs cut).
    /// - Parameters:
    ///   - favorites: the favorite logins, in the user's order.
    ///   - cached: the last good user per lowercased login.
    public static func users(favorites: [String], cached: [String: User]) -> [User] {
        var seen: Set<String> = []
        var users: [User] = []
        for login in favorites {
            let key = login.lowercased()
            guard seen.insert(key).inserted, let user = cached[key] else { continue }
            users.append(SnapshotFit.watchForm(user))
        }
        return users
    }
}
