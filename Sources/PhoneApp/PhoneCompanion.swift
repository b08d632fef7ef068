import Foundation
import GitExplorerPayloads
import GitHubAPI
import Primitives
import RelayClient
import RelayProtocol
import SQLite

/// The phone side of GitExplorer's watch companion: the favorites, kept in SQLite, fetched
/// from GitHub and pushed to the watch as `favorites.snapshot` application contexts.
///
/// GitExplorer's `FavoriteViewModel` made real and honest:
/// - the favorites are an ordered list in ``PhoneStore`` (survives restarts and `kill -9`);
/// - every change (add, remove, move, a user's data) is persisted together with a new
///   snapshot revision, in one transaction, and then pushed with
///   `updateApplicationContext`;
/// - refreshing fetches every favorite in parallel, at most ``PhoneConfiguration/concurrency``
///   at a time, with the order kept (``OrderedConcurrentFetch``); a user whose fetch fails
///   keeps the last good data;
/// - a periodic refresh pushes only when something changed (``SnapshotLedger``); manual and
///   watch-requested refreshes are throttled, the first request winning (``RefreshThrottle``);
/// - `favorites.delete` from the watch is persisted, a new snapshot sent, and only then the
///   delivery acknowledged; `profile.repos.request` is answered with the repos or the error;
/// - errors nobody awaited go to ``errors``, what it did to ``activity``.
///
/// The mutating calls are honest about completion: ``add(_:)`` returns after the change is
/// persisted *and* the relay accepted the new snapshot (``SnapshotSync/pushed(revision:)``),
/// or, when the session is offline or not paired, after the change is persisted and the
/// snapshot queued (``SnapshotSync/queued(revision:)``): it then goes out as soon as the
/// session is activated and paired again, also after a restart.
public actor PhoneCompanion {
    /// How this companion runs.
    public nonisolated let configuration: PhoneConfiguration
    /// The relay session (the companion iterates its events; don't iterate them elsewhere).
    public nonisolated let session: SessionClient
    /// Every error nobody awaited, from GitHub, the relay and the store, merged (the newest 256 are kept if nobody reads).
    public nonisolated let errors: AsyncStream<PhoneError>
    /// What the companion did, for a log (the newest 256 are kept if nobody reads).
    public nonisolated let activity: AsyncStream<PhoneActivity>

    nonisolated let github: GitHubClient
    nonisolated let now: @Sendable () -> Date
    /// The companion runs on a thread of its own: its store's writes wait out another process's
    /// lock (`phone add --state DIR` while it runs: up to the busy timeout, 5 s) and fsync at
    /// checkpoints, which on the cooperative pool would park one of its few threads.
    nonisolated let executor = ThreadExecutor(name: "phone-companion")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let store: PhoneStore
    let errorSink: AsyncStream<PhoneError>.Continuation
    let activitySink: AsyncStream<PhoneActivity>.Continuation
    var ledger: SnapshotLedger
    var sentRevision: Int64
    /// The favorites the snapshot of ``sentRevision`` left out (it did not fit `contextBytes`).
    var sentOmitted: Int
    /// Why the last push failed or was cut, until a whole snapshot is pushed (``PhoneStatus/pushError``).
    var pushError: PhoneError?
    var throttle: RefreshThrottle
    var lastDataVersion: Int64 = 0
    var tasks: [Task<Void, Never>] = []
    var refreshInFlight: Task<RefreshResult, Never>?
    /// Until when GitHub refused requests for its rate limit (see ``askGitHub(_:)``).
    var rateLimitedUntil: Date?
    var pushing = false
    var pushWaiters: [CheckedContinuation<Void, Never>] = []
    var started = false
    var stopped = false

    /// Opens the state (store and session); nothing connects until ``start()``.
    /// - Parameters:
    ///   - configuration: state directory, relay, refresh policy.
    ///   - github: the GitHub dependency (``GitHubClient/live(baseURL:token:session:)`` or a double).
    ///   - now: the wall clock, for `fetchedAt` times.
    ///   - session: the session to use (e.g. an in-memory one); nil: a live ``RelaySession``
    ///     from `configuration.session`.
    /// - Throws: ``PhoneError/store(_:)`` if the state cannot be opened.
    public init(
        configuration: PhoneConfiguration, github: GitHubClient, now: @escaping @Sendable () -> Date = { Date() },
        session: SessionClient? = nil
    ) throws(PhoneError) {
        self.configuration = configuration
        self.github = github
        self.now = now
        // The session first: a directory that holds a watch's session is refused before a
        // phone.db is put in it.
        do {
            self.session = try session ?? .live(RelaySession(configuration: configuration.session))
        } catch {
            // These name the directory and the remedy themselves.
            let said = error is DirectoryError || error is SessionRoleMismatch
            throw .store(said ? "\(error)" : "cannot open the relay session in \(configuration.stateDirectory): \(error)")
        }
        let store = try PhoneStore(directory: configuration.stateDirectory, synchronous: configuration.synchronous)
        ledger = try store.ledger()
        // The revision sent is the phone's, not each watch's: a phone with several watches
        // pushes its latest snapshot to whichever is active (watches skip revisions they hold).
        (sentRevision, sentOmitted) = configuration.watchID == nil ? try store.sentSnapshot() : (0, 0)
        self.store = store
        throttle = RefreshThrottle(interval: configuration.refreshThrottle)
        (errors, errorSink) = AsyncStream.makeStream(of: PhoneError.self, bufferingPolicy: .bufferingNewest(256))
        (activity, activitySink) = AsyncStream.makeStream(of: PhoneActivity.self, bufferingPolicy: .bufferingNewest(256))
    }

    // MARK: - Life cycle

    /// Starts the companion: makes a snapshot of the stored favorites if they changed while it
    /// was stopped, handles the session's events, activates the session, and starts the
    /// periodic refresh (the first one at once) and the watch on the store for other processes.
    ///
    /// Returns once the session is activated, or once activation timed out: that is reported
    /// on ``errors`` and the session keeps trying in the background (the companion works
    /// offline meanwhile and pushes what is queued when it gets through).
    public func start() async {
        guard !started, !stopped else { return }
        started = true
        do {
            lastDataVersion = try store.dataVersion()
            _ = try commit {}
        } catch {
            report(error)
        }
        tasks.append(Task { await self.runSessionEvents() })
        do {
            try await session.activate()
        } catch {
            report(.relay(Self.relayError(error)))
        }
        tasks.append(Task { await self.runPeriodicRefresh() })
        tasks.append(Task { await self.runExternalChanges() })
    }

    /// Stops everything: cancels the refresh loops and any refresh in flight, closes the
    /// session, waits for every task, and finishes the ``errors`` and ``activity`` streams.
    public func shutdown() async {
        let close = session.close
        _ = await shutdown(closing: { await close(); return true })
    }

    /// `uninstall`: the iPhone app is uninstalled. The relay is told (`state`
    /// `{appInstalled: false}`, PROTOCOL.md §7.1: the watch sees `isCompanionAppInstalled`
    /// false and its sends fail with `companion_app_not_installed`), then the companion stops as
    /// ``shutdown()`` does. Its store stays (unlike iOS, which deletes the app's data): an emptied
    /// one would number its snapshots from 1 again, below the revision the watch shows, and the
    /// watch would keep ignoring them. A companion started again on the same state is the app
    /// installed again.
    ///
    /// On a phone with several watches (PROTOCOL.md §6.5) the iPhone app goes for all of them,
    /// as on iOS: after the active watch's session says it, the companion connects as each of
    /// the phone's other watch identities in turn (``PhoneIdentities``), just long enough to say
    /// it; a companion started again installs it again for its `--watch` only.
    /// - Returns: which watches' pairs were told: the active one's not when the session was not
    ///   activated (the relay away) or the companion had stopped (then no other either), another's
    ///   not when the relay did not answer as it; those watches still see the app installed.
    @discardableResult
    public func uninstall() async -> PhoneUninstall {
        let active = configuration.watchID ?? PhoneIdentities.defaultID
        let root = configuration.stateDirectory
        guard !stopped else {
            return PhoneUninstall(watchesNotTold: [active] + PhoneIdentities.ids(root: root).filter { $0 != active })
        }
        let told = await shutdown(closing: session.uninstallApp)
        let others = await PhoneIdentities.uninstallApp(
            root: root, except: configuration.session.stateDirectory, configuration: configuration.session)
        return PhoneUninstall(watchesNotTold: (told ? [] : [active]) + others)
    }

    /// ``shutdown()``, closing the session with `closing`; returns what `closing` did (false
    /// when already stopped).
    private func shutdown(closing: @Sendable () async -> Bool) async -> Bool {
        guard !stopped else { return false }
        stopped = true
        for task in tasks { task.cancel() }
        refreshInFlight?.cancel()
        let closed = await closing()
        for task in tasks { await task.value }
        _ = await refreshInFlight?.value
        tasks = []
        errorSink.finish()
        activitySink.finish()
        return closed
    }

    /// Phone: asks the relay for a pairing code to type on the watch.
    /// - Throws: ``PhoneError/relay(_:)`` (e.g. not activated).
    public func pair() async throws(PhoneError) -> PairingCode {
        try checkRunning()
        do {
            return try await session.beginPairing()
        } catch {
            throw .relay(Self.relayError(error))
        }
    }

    // MARK: - Favorites

    /// Adds `login` at the end of the favorites, with its user data fetched from GitHub first
    /// (or, if GitHub answered for it less than ``PhoneConfiguration/userMaxAge`` ago, with that
    /// answer: re-adding a favorite just removed costs no request).
    ///
    /// Returns after the favorite is persisted and the new snapshot was accepted by the relay
    /// (or queued while offline: see ``SnapshotSync``). Adding a favorite again changes nothing.
    /// If GitHub is unavailable the login is still added (reported on ``errors``); it joins
    /// the snapshot once a refresh fetched its data.
    ///
    /// The list holds at most ``SnapshotFit/maxFavorites(contextBytes:)`` favorites for the
    /// `contextBytes` of the relay's last `welcome` (the default before the first): 438 at the
    /// default 262,144. So the whole list always reaches the watch, whatever GitHub says about them.
    /// - Throws: ``PhoneError/invalidLogin(_:)``; ``PhoneError/tooManyFavorites(max:contextBytes:)``
    ///   when the list is full; ``PhoneError/github(login:_:)`` with `userNotFound` when GitHub has
    ///   no such user (nothing is added in either case); ``PhoneError/store(_:)``.
    public func add(_ login: String) async throws(PhoneError) -> FavoriteChange {
        try checkRunning()
        guard Favorite.isValidLogin(login) else { throw .invalidLogin(login) }
        if try isFavorite(login) { return FavoriteChange(listChanged: false, sync: .unchanged) }
        let contextBytes = await session.status().limits.contextBytes
        // Before asking GitHub, and again in the transaction: another add may fill the list meanwhile.
        try requireRoom(contextBytes: contextBytes)
        var fetched: User?
        var fresh: User?
        if let recent = try recentlyFetchedUser(login) {
            fetched = recent
        } else {
            do throws(GitHubError) {
                fresh = try await askGitHub { () async throws(GitHubError) in try await github.user(login) }
                fetched = fresh
            } catch {
                if case .userNotFound = error { throw .github(login: login, error) }
                report(.github(login: login, error))
            }
        }
        let stamp = now()
        let (added, snapshot) = try commit {
            try requireRoom(contextBytes: contextBytes)
            let added = try store.addFavorite(fetched?.login ?? login, now: stamp)
            if let fresh { try store.saveUser(fresh, fetchedAt: stamp) }
            return added
        }
        return FavoriteChange(listChanged: added, sync: await sync(snapshot))
    }

    /// Removes `login` from the favorites; returns after it is persisted and the new snapshot
    /// was accepted (or queued). Idempotent: removing a login that is not a favorite changes nothing.
    /// - Throws: ``PhoneError/store(_:)``.
    public func remove(_ login: String) async throws(PhoneError) -> FavoriteChange {
        try checkRunning()
        let (removed, snapshot) = try commit { try store.removeFavorite(login) }
        return FavoriteChange(listChanged: removed, sync: await sync(snapshot))
    }

    /// Moves `login` to `index` (0 is first; clamped to the list); returns after it is
    /// persisted and the new snapshot was accepted (or queued).
    /// - Throws: ``PhoneError/notAFavorite(_:)``, ``PhoneError/store(_:)``.
    public func move(_ login: String, to index: Int) async throws(PhoneError) -> FavoriteChange {
        try checkRunning()
        let (move, snapshot) = try commit { try store.moveFavorite(login, to: index) }
        guard let move else { throw .notAFavorite(login) }
        return FavoriteChange(listChanged: move.moved, sync: await sync(snapshot), index: move.index)
    }

    /// The favorites in order, each with its last good data.
    public func favorites() throws(PhoneError) -> [Favorite] {
        try store.favorites()
    }

    /// The companion's state at a glance.
    public func status() async -> PhoneStatus {
        let session = await session.status()
        return PhoneStatus(
            activated: session.activationState == .activated, paired: session.isPaired,
            reachable: session.isReachable, watchAppInstalled: session.isPeerAppInstalled, revision: ledger.revision, pushedRevision: sentRevision,
            favorites: (try? store.favoriteLogins().count) ?? 0, omitted: sentOmitted, pushError: pushError)
    }

    /// The last snapshot made (pushed or queued), if any.
    public var latestSnapshot: FavoritesSnapshot? { ledger.latest }

    // MARK: - Helpers

    /// The stored user data of `login` if GitHub answered for it less than
    /// ``PhoneConfiguration/userMaxAge`` ago (a failed fetch leaves the date of the last good one).
    func recentlyFetchedUser(_ login: String) throws(PhoneError) -> User? {
        guard configuration.userMaxAge > .zero, let cached = try store.cachedUserWithDate(login) else { return nil }
        return isFresh(cached.fetchedAt, maxAge: configuration.userMaxAge) ? cached.user : nil
    }

    /// Whether something fetched at `fetchedAt` is younger than `maxAge` now. A time after now
    /// (the wall clock was stepped back since) is not fresh: it would stay so until the clock
    /// caught up with it.
    func isFresh(_ fetchedAt: Date, maxAge: Duration) -> Bool {
        let seconds = Double(maxAge.components.seconds) + Double(maxAge.components.attoseconds) * 1e-18
        let age = now().timeIntervalSince(fetchedAt)
        return age >= 0 && age < seconds
    }

    /// Fails with ``PhoneError/tooManyFavorites(max:contextBytes:)`` when the list already holds
    /// as many favorites as a snapshot within `contextBytes` always has room for.
    func requireRoom(contextBytes: Int) throws(PhoneError) {
        let most = SnapshotFit.maxFavorites(contextBytes: contextBytes)
        if try store.favoriteLogins().count >= most { throw .tooManyFavorites(max: most, contextBytes: contextBytes) }
    }

    func isFavorite(_ login: String) throws(PhoneError) -> Bool {
        try store.favoriteLogins().contains { $0.lowercased() == login.lowercased() }
    }

    func checkRunning() throws(PhoneError) {
        if stopped { throw .shutDown }
    }

    /// Runs `body` and records the resulting snapshot, in one transaction; the ledger moves
    /// only if the transaction committed.
    func commit<T>(_ body: () throws -> T) throws(PhoneError) -> (T, FavoritesSnapshot?) {
        var next = ledger
        let result = try store.write { () throws -> (T, FavoritesSnapshot?) in
            let value = try body()
            let snapshot = next.record(try store.currentSnapshotUsers())
            if let snapshot { try store.saveSnapshot(snapshot) }
            return (value, snapshot)
        }
        ledger = next
        return result
    }

    /// Whether the companion's code runs on its own thread (``executor``), for tests.
    func runsOnItsOwnThread() -> Bool {
        executor.isCurrent
    }

    func report(_ error: PhoneError) {
        errorSink.yield(error)
    }

    func record(_ event: PhoneActivity) {
        activitySink.yield(event)
    }

    static func relayError(_ error: any Error) -> RelaySessionError {
        (error as? RelaySessionError) ?? .relay(code: .internal, message: String(describing: error))
    }
}

/// The companion's state at a glance (`status` in the CLI).
public struct PhoneStatus: Sendable, Equatable {
    /// The session has a `welcome` from the relay.
    public var activated: Bool
    /// The phone is paired with a watch.
    public var paired: Bool
    /// The watch is reachable for messages.
    public var reachable: Bool
    /// The watch app is installed (PROTOCOL.md §7.1): while it is not, pushes are refused
    /// (`watch_app_not_installed`) and the latest list goes when it runs again.
    public var watchAppInstalled: Bool
    /// The last snapshot revision made.
    public var revision: Int64
    /// The last revision the relay accepted.
    public var pushedRevision: Int64
    /// The number of favorites.
    public var favorites: Int
    /// The favorites at the end of the list that the snapshot of ``pushedRevision`` left out,
    /// because the whole list did not fit the relay's `contextBytes` (0: the watch has them all).
    public var omitted: Int
    /// Why the last push failed or was cut short (e.g. ``PhoneError/snapshotTruncated(revision:sent:omitted:contextBytes:)``),
    /// until a whole snapshot is pushed; nil when the last push went through whole.
    public var pushError: PhoneError?
}
