import Foundation
import GitExplorerPayloads
import GitHubAPI
import Primitives
import RelayProtocol

/// Refreshing the favorites from GitHub: periodic, manual (throttled), and for logins added by
/// other processes.
///
/// A CLI subcommand (`watchrelay phone add … --state DIR`) writes the favorites, or a `refresh`
/// request, straight into `phone.db`; the running companion polls `PRAGMA data_version`, which
/// moves whenever another connection commits, then fetches the logins it has no data for,
/// makes and pushes a snapshot if the content changed, and runs the requested refreshes
/// (throttled like manual ones).
extension PhoneCompanion {
    /// A manual refresh: fetches every favorite now and pushes a snapshot if anything changed.
    ///
    /// Throttled (``PhoneConfiguration/refreshThrottle``): the first request of a window wins,
    /// later ones inside it return ``RefreshResult/throttled(retryAfter:)`` at once. A request
    /// made while a refresh runs joins it. Returns after the refresh and its push (or queueing).
    public func refresh() async -> RefreshResult {
        await refresh(trigger: .manual)
    }

    /// A refresh for `trigger`; every trigger but the periodic one goes through the throttle.
    func refresh(trigger: RefreshTrigger) async -> RefreshResult {
        if trigger != .periodic,
            case .throttled(let retryAfter) = throttle.request(at: .now)
        {
            let result = RefreshResult.throttled(retryAfter: retryAfter)
            record(.refreshed(trigger, result))
            return result
        }
        let result: RefreshResult
        if let running = refreshInFlight {
            result = await running.value
        } else {
            // The refresh clears `refreshInFlight` itself, in its last step on the actor: a
            // request that reaches the actor after that starts a new refresh. (Cleared by this
            // caller once it resumed, a request in between joined the finished refresh and got
            // its result without a request to GitHub.)
            let task = Task {
                let result = await self.performRefresh()
                self.refreshInFlight = nil
                return result
            }
            refreshInFlight = task
            result = await task.value
        }
        record(.refreshed(trigger, result))
        return result
    }

    /// The periodic refresh: one at start, then one every ``PhoneConfiguration/refreshInterval``.
    func runPeriodicRefresh() async {
        while !Task.isCancelled {
            _ = await refresh(trigger: .periodic)
            try? await Task.sleep(for: configuration.refreshInterval)
        }
    }

    private func performRefresh() async -> RefreshResult {
        let logins: [String]
        do {
            logins = try store.favoriteLogins()
        } catch {
            report(error)
            return .refreshed(fetched: 0, failed: [], sync: .unchanged)
        }
        return await apply(await fetchUsers(logins, refusedUntil: rateLimitRetryAt()))
    }

    /// Fetches the users of `logins`, at most ``PhoneConfiguration/concurrency`` at a time, in order.
    ///
    /// GitHub's rate limit is the token's (or the address's), not one user's: once GitHub refused
    /// a request for it, the logins not asked for yet fail with the same
    /// ``GitHubError/rateLimited(retryAt:)`` without a request (GitHub asks clients to stop
    /// until the reset; each would be refused anyway). With `refusedUntil` (a refusal still in
    /// force, ``rateLimitRetryAt()``), every login fails so and nothing is asked.
    nonisolated func fetchUsers(
        _ logins: [String], refusedUntil initial: Date?
    ) async -> [(login: String, result: Result<User, GitHubError>)] {
        let github = self.github
        let refusedUntil = LockedState<Date?>(initial)
        let results = await OrderedConcurrentFetch(maxConcurrent: configuration.concurrency).mapResults(logins) {
            (login) async throws(GitHubError) -> User in
            if let retryAt = refusedUntil.withLock({ $0 }) { throw .rateLimited(retryAt: retryAt) }
            do throws(GitHubError) {
                return try await github.user(login)
            } catch {
                if case .rateLimited(let retryAt) = error { refusedUntil.withLock { $0 = max($0 ?? retryAt, retryAt) } }
                throw error
            }
        }
        return zip(logins, results).map { (login: $0, result: $1) }
    }

    /// Stores what was fetched (failures keep their last good data and are reported: a rate
    /// limit once, for the first login it stopped), then
    /// makes and pushes a snapshot if the content changed. The failures of a refresh that
    /// ``shutdown()`` cancelled are not reported: its requests ended `cancelled` because the
    /// companion stopped, not because GitHub failed (`echo list | watchrelay phone …` warned
    /// "GitHub unavailable: …: cancelled" for every favorite).
    func apply(_ results: [(login: String, result: Result<User, GitHubError>)]) async -> RefreshResult {
        let stopping = Task.isCancelled
        let stamp = now()
        var failed: [String] = []
        var fetched = 0
        var reportedRateLimit = false
        let snapshot: FavoritesSnapshot?
        do {
            (_, snapshot) = try commit {
                for (login, result) in results {
                    switch result {
                    case .success(let user):
                        fetched += 1
                        try store.saveUser(user, fetchedAt: stamp)
                    case .failure(let error):
                        failed.append(login)
                        remember(error)
                        // The rate limit is the token's, not a login's: one report a refresh (the
                        // first login it stopped), not one per favorite (the result lists them all).
                        if case .rateLimited = error {
                            if reportedRateLimit { continue }
                            reportedRateLimit = true
                        }
                        if !stopping { report(.github(login: login, error)) }
                    }
                }
            }
        } catch {
            report(error)
            return .refreshed(fetched: 0, failed: results.map(\.login), sync: .unchanged)
        }
        return .refreshed(fetched: fetched, failed: failed, sync: await sync(snapshot))
    }

    // MARK: - Changes by other processes

    /// Checks the store whenever another process may have committed to it, until cancelled:
    /// on each change of `phone.db` or its WAL (an inotify event, awaited), or — only where
    /// inotify is unavailable or its watch failed — every ``PhoneConfiguration/externalPollInterval``.
    func runExternalChanges() async {
        #if canImport(Glibc)
        let names: Set<String> = [PhoneStore.fileName, PhoneStore.fileName + "-wal"]
        if let signal = FileChangeSignal(directory: configuration.stateDirectory, names: names) {
            defer { signal.stop() }
            // A commit between start's data_version read and the watch being set up.
            await checkExternalChanges()
            // A WAL write is seen before its commit is: see SettledChecks.
            await SettledChecks.follow(signal.changes) { await self.checkExternalChanges() }
            // Cancelled, or the watch ended on its own (an inotify error): then the timer.
            if Task.isCancelled { return }
        }
        #endif
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.externalPollInterval)
            if Task.isCancelled { break }
            await checkExternalChanges()
        }
    }

    /// Picks up what another process committed since the last check, if anything. True when
    /// `data_version` moved (whether or not handling the change then failed: that is reported on
    /// ``errors``, and the version is recorded, so a retry would find nothing new); false when
    /// it did not move or could not be read, when a retry could still find a change.
    @discardableResult
    func checkExternalChanges() async -> Bool {
        let version: Int64
        do {
            version = try store.dataVersion()
        } catch {
            report(error)
            return false
        }
        do {
            guard version != lastDataVersion else { return false }
            lastDataVersion = version
            let requests = try store.takeRequests()
            let favorites = try store.favorites()
            record(.externalChange(favorites: favorites.count))
            let missing = favorites.filter { $0.user == nil }.map(\.login)
            if missing.isEmpty {
                let (_, snapshot) = try commit {}
                _ = await sync(snapshot)
            } else {
                _ = await apply(await fetchUsers(missing, refusedUntil: rateLimitRetryAt()))
            }
            for verb in requests where verb == "refresh" {
                _ = await refresh(trigger: .external)
            }
        } catch {
            report(error)
        }
        return true
    }
}
