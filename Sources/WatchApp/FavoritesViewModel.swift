import GitExplorerPayloads
import RelayProtocol

/// The watch's favorites list (GitExplorer's `FavoriteViewModel`, watch side): the stored
/// snapshot plus the deletes sent from the watch that the phone has not confirmed yet.
///
/// A delete shows the user as *pending* until a snapshot without them arrives; a snapshot
/// that still lists them keeps the mark (the delete is still in flight: it travels by
/// `userInfo` and may wait for the phone). Snapshots apply only if their revision is newer
/// than the stored one (the phone's context is "latest wins").
public struct FavoritesViewModel: Sendable, Hashable {
    /// A row of the list.
    public struct Row: Sendable, Hashable {
        /// The favorite.
        public var user: User
        /// Deleted from the watch; the phone has not sent a snapshot without them yet.
        public var isPendingDelete: Bool
    }

    /// The newest snapshot received; `nil` before the first.
    public private(set) var snapshot: FavoritesSnapshot?
    /// Logins deleted from the watch and not yet gone from a snapshot, in the order deleted.
    public private(set) var pendingDeletes: [String] = []

    /// A list holding `snapshot` (the watch's stored one, if any), with nothing pending.
    public init(snapshot: FavoritesSnapshot? = nil) {
        self.snapshot = snapshot
    }

    /// The favorites in the phone's order, with their pending marks.
    public var rows: [Row] {
        (snapshot?.users ?? []).map { Row(user: $0, isPendingDelete: isPendingDelete($0.login)) }
    }

    /// The favorites' users, in the phone's order.
    public var users: [User] { snapshot?.users ?? [] }

    /// The favorites the phone left out after ``users`` because its whole list did not fit
    /// the relay's `contextBytes` (the snapshot's `omitted`, PROTOCOL.md §12.2): the list goes
    /// on on the phone. 0 when the watch has the whole list.
    public var omitted: Int { snapshot?.omitted ?? 0 }

    /// How many favorites the phone has: ``users`` and the ``omitted`` ones.
    public var total: Int { users.count + omitted }

    /// What the list shows after its rows when it goes on on the phone (`+9 more on iPhone`,
    /// or `9 on iPhone` when the watch got none of them), as the repo list's `+N more`; nil
    /// when the watch has the whole list.
    public var omittedNote: String? { Self.omittedNote(omitted: omitted, shown: users.count) }

    /// ``omittedNote`` for a list showing `shown` users of which the phone left `omitted` out.
    static func omittedNote(omitted: Int, shown: Int) -> String? {
        guard omitted > 0 else { return nil }
        return shown == 0 ? "\(omitted) on iPhone" : "+\(omitted) more on iPhone"
    }

    /// Whether `login` is a favorite (logins compare case-insensitively, as GitHub's do).
    public func contains(_ login: String) -> Bool {
        users.contains { Self.same($0.login, login) }
    }

    /// Whether `login` is awaiting the phone's confirmation of a delete.
    public func isPendingDelete(_ login: String) -> Bool {
        pendingDeletes.contains { Self.same($0, login) }
    }

    /// Marks `login` pending and returns the `favorites.delete` command to send by `userInfo`;
    /// `nil` when `login` is not a favorite or is already pending (nothing new to send).
    public mutating func delete(_ login: String) -> LoginCommand? {
        guard let user = users.first(where: { Self.same($0.login, login) }), !isPendingDelete(login) else {
            return nil
        }
        pendingDeletes.append(user.login)
        return .favoritesDelete(user.login)
    }

    /// Takes back the pending mark ``delete(_:)`` set, for a delete that could not be written
    /// down (nothing was sent: the user is as before and can be deleted again).
    public mutating func undoDelete(_ login: String) {
        pendingDeletes.removeAll { Self.same($0, login) }
    }

    /// Whether ``receive(_:)`` would store `snapshot`: its revision is above the stored one's.
    public func isNewer(_ snapshot: FavoritesSnapshot) -> Bool {
        self.snapshot.map { snapshot.revision > $0.revision } ?? true
    }

    /// Stores `snapshot` if it is newer than the stored one (or whatever its revision, with
    /// `fromNewPair`: a new phone's revisions start again) and clears the pending mark of every
    /// user it no longer lists; returns whether it was stored.
    @discardableResult
    public mutating func receive(_ snapshot: FavoritesSnapshot, fromNewPair: Bool = false) -> Bool {
        guard fromNewPair || isNewer(snapshot) else { return false }
        self.snapshot = snapshot
        pendingDeletes.removeAll { login in !snapshot.users.contains { Self.same($0.login, login) } }
        return true
    }

    /// GitHub logins are case-insensitive.
    private static func same(_ a: String, _ b: String) -> Bool {
        a.lowercased() == b.lowercased()
    }
}
