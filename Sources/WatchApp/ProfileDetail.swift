import GitExplorerPayloads
import RelayProtocol

/// The profile detail screen as a state machine: `open <login>` → loading → loaded | failed |
/// phone unreachable. Events come from the network side; actions say what to send.
///
/// - ``Event/requested`` starts (or restarts) loading and returns the request to send; a
///   second `requested` while loading returns nothing (one request in flight).
/// - ``Event/replied(_:)`` → ``Phase/loaded(_:)`` (also after a timeout: late data is still
///   data) and becomes the cache. A reply the phone marked stale (GitHub failed, the phone
///   answered with the list it had) is loaded too, shown stale, with GitHub's failure in words.
/// - ``Event/failed(_:)`` → ``Phase/failed(_:message:)`` with the code in words.
/// - ``Event/unreachable`` / ``Event/timeout`` → ``Phase/offline(_:cached:)``: the cached list
///   marked stale, or just "Phone not reachable" / "Phone did not answer" when none is cached.
/// - A reply or error for another login (an older screen's answer) is ignored.
public struct ProfileDetail: Sendable, Hashable {
    /// Input from the network side.
    public enum Event: Sendable, Hashable {
        /// The screen asks the phone for the repos.
        case requested
        /// The phone answered with the repos.
        case replied(ReposReply)
        /// The phone answered with an error.
        case failed(ReposError)
        /// The phone is not reachable (`not_reachable`, no session).
        case unreachable
        /// The phone did not answer in time (`reply_timeout`).
        case timeout
    }

    /// What to do for the screen.
    public enum Action: Sendable, Hashable {
        /// Send `profile.repos.request` by `message` with `wantsReply`.
        case sendRequest(LoginCommand)
    }

    /// Why the list could not be loaded from the phone.
    public enum OfflineReason: String, Sendable, Hashable {
        /// The phone is not connected or not reachable.
        case notReachable
        /// The phone did not answer in time.
        case timedOut

        /// In words, for the screen.
        public var message: String {
            switch self {
            case .notReachable: "Phone not reachable"
            case .timedOut: "Phone did not answer"
            }
        }
    }

    /// The screen's state.
    public enum Phase: Sendable, Hashable {
        /// Opened, nothing requested yet.
        case idle
        /// Waiting for the phone; a cached list, if any, shows meanwhile.
        case loading(cached: RepoList?)
        /// The phone's list, sorted (stale when the phone says so: ``RepoList/stale``).
        case loaded(RepoList)
        /// The phone answered with an error; `message` is the code in words.
        case failed(ReposErrorCode, message: String)
        /// No answer from the phone: the cached list, stale, if any.
        case offline(OfflineReason, cached: RepoList?)

        /// `idle`, `loading`, `loaded`, `failed` or `offline`.
        public var name: String {
            switch self {
            case .idle: "idle"
            case .loading: "loading"
            case .loaded: "loaded"
            case .failed: "failed"
            case .offline: "offline"
            }
        }
    }

    /// The user whose repos the screen shows.
    public let login: String
    /// Where the screen is.
    public private(set) var phase: Phase = .idle
    /// The last list loaded for ``login`` (from this screen or the watch's store).
    public private(set) var cached: RepoList?

    /// A screen for `login`, with the list the watch stored earlier, if any.
    public init(login: String, cached: RepoList? = nil) {
        self.login = login
        self.cached = cached
    }

    /// The error code in words.
    public static func message(for code: ReposErrorCode, fallback: String = "Something went wrong") -> String {
        switch code {
        case .userNotFound: "User not found"
        case .rateLimited: "GitHub rate limit reached, try later"
        case .githubUnavailable: "GitHub is unavailable"
        default: fallback
        }
    }

    /// The list on screen, if any, and whether it is stale (cached, not confirmed by the phone
    /// now, or one the phone answered with because GitHub failed).
    public var visibleList: (list: RepoList, isStale: Bool)? {
        switch phase {
        case .loaded(let list): (list, list.stale != nil)
        case .loading(let cached?), .offline(_, let cached?): (cached, true)
        case .idle, .loading, .failed, .offline: nil
        }
    }

    /// The one-line status for the screen: `Loading…`, the error in words, the offline
    /// message, why a loaded list is stale (GitHub's failure in words); `nil` when the list is
    /// loaded and current.
    public var statusMessage: String? {
        switch phase {
        case .idle: nil
        case .loading: "Loading…"
        case .loaded(let list): list.stale.map { Self.message(for: $0.code, fallback: $0.message) }
        case .failed(_, let message): message
        case .offline(let reason, _): reason.message
        }
    }

    /// Applies `event`; returns what to send, if anything.
    @discardableResult
    public mutating func handle(_ event: Event) -> Action? {
        switch event {
        case .requested:
            if case .loading = phase { return nil }
            phase = .loading(cached: cached)
            return .sendRequest(.reposRequest(login))
        case .replied(let reply):
            guard same(reply.login) else { return nil }
            let list = RepoList(reply)
            cached = list
            phase = .loaded(list)
        case .failed(let error):
            guard same(error.login) else { return nil }
            phase = .failed(error.code, message: Self.message(for: error.code, fallback: error.message))
        case .unreachable:
            guard case .loading = phase else { return nil }
            phase = .offline(.notReachable, cached: cached)
        case .timeout:
            guard case .loading = phase else { return nil }
            phase = .offline(.timedOut, cached: cached)
        }
        return nil
    }

    private func same(_ other: String) -> Bool { other.lowercased() == login.lowercased() }
}
