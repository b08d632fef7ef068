import GitExplorerPayloads
import RelayProtocol

/// A user's repositories as the profile detail shows them: sorted by stars, most first,
/// then by name (case-insensitive, then exact, then id, so the order is total).
///
/// Stars first because a watch shows only a handful of rows: the ones people care about.
public struct RepoList: Sendable, Hashable {
    /// A row as the watch prints it: every field already formatted.
    public struct Row: Sendable, Hashable {
        /// The repository's name.
        public var name: String
        /// Compact star count, e.g. `1.2k`.
        public var stars: String
        /// The language, or `—` when GitHub has none.
        public var language: String
        /// How long ago it was updated, e.g. `3d` (relative to the injected `now`).
        public var updated: String
        /// Whether it is a fork.
        public var isFork: Bool
    }

    /// The owner.
    public var login: String
    /// Sorted (see the type's summary).
    public private(set) var repos: [Repo]
    /// When the phone fetched them from GitHub.
    public var fetchedAt: Timestamp
    /// Why the phone answered with this older list (GitHub failed when it asked); nil when the
    /// list was current when the phone answered.
    public var stale: ReposStaleness?

    /// A list of `repos`, sorted.
    public init(login: String, repos: [Repo], fetchedAt: Timestamp, stale: ReposStaleness? = nil) {
        self.login = login
        self.repos = repos.sorted(by: Self.order)
        self.fetchedAt = fetchedAt
        self.stale = stale
    }

    /// The list in a phone's reply.
    public init(_ reply: ReposReply) {
        self.init(login: reply.login, repos: reply.repos, fetchedAt: reply.fetchedAt, stale: reply.stale)
    }

    /// Stars descending, then name ascending (case-insensitive, then exact), then id.
    public static func order(_ a: Repo, _ b: Repo) -> Bool {
        if a.stargazersCount != b.stargazersCount { return a.stargazersCount > b.stargazersCount }
        let la = a.name.lowercased()
        let lb = b.name.lowercased()
        if la != lb { return la < lb }
        if a.name != b.name { return a.name < b.name }
        return a.id < b.id
    }

    /// The rows, formatted for `now`.
    public func rows(now: Timestamp) -> [Row] {
        repos.map { repo in
            Row(
                name: repo.name, stars: TextMetrics.compact(repo.stargazersCount), language: repo.language ?? "—",
                updated: TimeMath.age(ofISO: repo.updatedAt, now: now), isFork: repo.fork)
        }
    }
}
