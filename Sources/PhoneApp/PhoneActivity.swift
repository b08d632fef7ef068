import GitExplorerPayloads
import RelayProtocol

/// What became of a favorites snapshot after a change.
public enum SnapshotSync: Sendable, Hashable, CustomStringConvertible {
    /// The relay accepted (stored) the snapshot with this revision, or a later one that includes the change.
    case pushed(revision: Int64)
    /// The relay accepted this revision without the last `omitted` favorites: the whole list
    /// would not fit the relay's `contextBytes` (reported on ``PhoneCompanion/errors``; see
    /// ``SnapshotFit``). The watch shows the first ones and knows how many it lacks.
    case partial(revision: Int64, omitted: Int)
    /// Persisted with this revision, not sent yet: the session is offline or not paired, or the
    /// push failed (reported on ``PhoneCompanion/errors``, and ``PhoneStatus/pushError`` says
    /// why). It goes out when the session is activated and paired again.
    case queued(revision: Int64)
    /// The snapshot's content did not change, so no revision was made and nothing was sent.
    case unchanged

    /// `pushed`, `partial`, `queued` or `unchanged`.
    public var name: String {
        switch self {
        case .pushed: "pushed"
        case .partial: "partial"
        case .queued: "queued"
        case .unchanged: "unchanged"
        }
    }

    /// The revision pushed or queued; `nil` when unchanged.
    public var revision: Int64? {
        switch self {
        case .pushed(let r), .partial(let r, _), .queued(let r): r
        case .unchanged: nil
        }
    }

    /// The favorites left out of a `partial` push; 0 otherwise.
    public var omitted: Int {
        if case .partial(_, let omitted) = self { omitted } else { 0 }
    }

    /// `pushed(3)`, `partial(3, omitted: 2)`, `queued(3)` or `unchanged`.
    public var description: String {
        if case .partial(let r, let omitted) = self { return "partial(\(r), omitted: \(omitted))" }
        return revision.map { "\(name)(\($0))" } ?? name
    }
}

/// The result of adding, removing or moving a favorite.
public struct FavoriteChange: Sendable, Hashable {
    /// Whether the favorites list itself changed (false: already a favorite, not a favorite, same place).
    public var listChanged: Bool
    /// What became of the snapshot.
    public var sync: SnapshotSync
    /// For a move: where the favorite is now (the index asked for, clamped to the list).
    public var index: Int?

    /// Creates a result.
    public init(listChanged: Bool, sync: SnapshotSync, index: Int? = nil) {
        self.listChanged = listChanged
        self.sync = sync
        self.index = index
    }
}

/// Where a moved favorite is now, and whether it moved (``PhoneStore/moveFavorite(_:to:)``).
public struct FavoriteMove: Sendable, Hashable {
    /// False when it already was at that place.
    public var moved: Bool
    /// Its index now: the one asked for, clamped to the list.
    public var index: Int

    /// Creates a result.
    public init(moved: Bool, index: Int) {
        self.moved = moved
        self.index = index
    }
}

/// Who asked for a refresh.
public struct RefreshTrigger: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name in logs, e.g. `manual`.
    public var rawValue: String
    /// Creates a trigger from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name.
    public var description: String { rawValue }

    /// The periodic timer (not throttled).
    public static let periodic = RefreshTrigger(rawValue: "periodic")
    /// The user on the phone (throttled).
    public static let manual = RefreshTrigger(rawValue: "manual")
    /// A `favorites.refresh` message from the watch (throttled).
    public static let watch = RefreshTrigger(rawValue: "watch")
    /// A `refresh` request left by another process (`watchrelay phone refresh --state DIR`; throttled).
    public static let external = RefreshTrigger(rawValue: "external")
}

/// The result of a refresh request.
public enum RefreshResult: Sendable, Hashable {
    /// Dropped by the throttle: another request won the window; the next is allowed after `retryAfter`.
    case throttled(retryAfter: Duration)
    /// The favorites were fetched: `failed` logins kept their last known data.
    case refreshed(fetched: Int, failed: [String], sync: SnapshotSync)
}

/// Something the companion did, for the log and the terminal (errors go to ``PhoneCompanion/errors``).
public enum PhoneActivity: Sendable, Hashable {
    /// The session reached the relay (after every reconnect).
    case activated(paired: Bool)
    /// A watch joined with the pairing code.
    case paired(peerName: String)
    /// The pair ended.
    case unpaired(reason: String)
    /// The watch became reachable or not.
    case reachabilityChanged(Bool)
    /// The relay accepted a snapshot of `users` favorites, `omitted` more left out at the end
    /// (it would not fit the relay's `contextBytes`).
    case snapshotPushed(revision: Int64, users: Int, omitted: Int)
    /// A refresh finished (or was throttled).
    case refreshed(RefreshTrigger, RefreshResult)
    /// The watch deleted a favorite (`removed` false: it was not one; idempotent).
    case deletedByWatch(login: String, removed: Bool)
    /// The watch asked for a user's repos; the answer's repo count or error code (both for an
    /// older list answered stale: the error is why it is not current).
    case answeredRepos(login: String, repos: Int?, error: ReposErrorCode?)
    /// Another process changed the favorites in the state directory.
    case externalChange(favorites: Int)
}

extension PhoneActivity {
    /// A log message and logfmt fields describing the activity.
    public var logLine: (message: String, fields: [(String, String)]) {
        switch self {
        case .activated(let paired): ("session activated", [("paired", "\(paired)")])
        case .paired(let peerName): ("paired", [("peer", peerName)])
        case .unpaired(let reason): ("unpaired", [("reason", reason)])
        case .reachabilityChanged(let reachable): ("watch reachability changed", [("reachable", "\(reachable)")])
        case .snapshotPushed(let revision, let users, let omitted):
            ("snapshot pushed", [("revision", "\(revision)"), ("users", "\(users)")] + (omitted > 0 ? [("omitted", "\(omitted)")] : []))
        case .refreshed(let trigger, .throttled(let retryAfter)):
            ("refresh throttled", [("trigger", trigger.rawValue), ("retry_after_ms", "\(PhoneConsole.milliseconds(retryAfter))")])
        case .refreshed(let trigger, .refreshed(let fetched, let failed, let sync)):
            ("refreshed", [("trigger", trigger.rawValue), ("fetched", "\(fetched)"), ("failed", "\(failed.count)"), ("sync", "\(sync)")])
        case .deletedByWatch(let login, let removed): ("deleted by the watch", [("login", login), ("removed", "\(removed)")])
        case .answeredRepos(let login, let repos, let error):
            ("answered repos request", [("login", login)] + [repos.map { ("repos", "\($0)") }, error.map { ("error", $0.rawValue) }].compactMap { $0 })
        case .externalChange(let favorites): ("favorites changed by another process", [("favorites", "\(favorites)")])
        }
    }
}
