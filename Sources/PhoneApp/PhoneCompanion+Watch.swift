import Foundation
import GitExplorerPayloads
import GitHubAPI
import RelayClient
import RelayProtocol

/// What arrives from the watch and the relay: deletes, refresh requests, repo requests, pairing.
extension PhoneCompanion {
    /// Handles the session's events in order until the session closes. Durable items (deletes)
    /// are handled one after another, in relay order; messages (repo requests, refreshes) run
    /// concurrently in child tasks so a slow GitHub answer holds nothing up.
    func runSessionEvents() async {
        await withDiscardingTaskGroup { group in
            for await event in session.events {
                switch event {
                case .activated(let paired):
                    record(.activated(paired: paired))
                    if paired { group.addTask { _ = await self.pushLatest() } }
                case .paired(_, let peerName):
                    forgetPushedRevision()
                    record(.paired(peerName: peerName))
                    group.addTask { _ = await self.pushLatest() }
                case .unpaired(let reason):
                    forgetPushedRevision()
                    record(.unpaired(reason: reason))
                case .reachabilityChanged(let reachable):
                    record(.reachabilityChanged(reachable))
                case .peerAppInstalledChanged(let installed):
                    // Uninstalled: the pushes it refuses say so (`watch_app_not_installed`).
                    // Running again: it has the list from before, so what it missed goes now.
                    if installed { group.addTask { _ = await self.pushLatest() } }
                case .disconnected:
                    report(.relay(.disconnected))
                case .error(let error):
                    report(.relay(error))
                case .userInfo(let delivery):
                    await handleUserInfo(delivery)
                case .applicationContext(let delivery):
                    // The watch sends the phone no context the app uses; take it off the queue.
                    await session.acknowledge(delivery)
                case .message(let delivery):
                    group.addTask { await self.handleMessage(delivery) }
                case .userInfoTransferFinished:
                    break
                }
            }
        }
    }

    /// `favorites.delete`: remove and persist, push the new snapshot (or queue it), then acknowledge.
    ///
    /// A store failure hands the delivery back unacknowledged (`release`): the session
    /// reconnects and the relay delivers it again. (Left unacknowledged only, it never came again
    /// on that session and held every later ack back.) Anything else that is not a delete is
    /// reported and acknowledged (it would only block the queue).
    func handleUserInfo(_ delivery: Delivery) async {
        let kind = delivery.payload.kind
        do {
            guard case .favoritesDelete(let command)? = try AppPayload(delivery.payload) else {
                report(.invalidPayload(kind: kind, reason: "not a userInfo the phone handles"))
                await session.acknowledge(delivery)
                return
            }
            let change = try await remove(command.login)
            record(.deletedByWatch(login: command.login, removed: change.listChanged))
            await session.acknowledge(delivery)
        } catch let error as ProtocolError {
            report(.invalidPayload(kind: kind, reason: String(describing: error)))
            await session.acknowledge(delivery)
        } catch {
            report(PhoneError.storeFailure(error))
            await session.release?(delivery)
        }
    }

    /// `profile.repos.request` (answered) and `favorites.refresh` (a throttled refresh).
    func handleMessage(_ delivery: Delivery) async {
        let kind = delivery.payload.kind
        let payload: AppPayload?
        do {
            payload = try AppPayload(delivery.payload)
        } catch {
            report(.invalidPayload(kind: kind, reason: String(describing: error)))
            if delivery.wantsReply, kind == PayloadKind.reposRequest.rawValue {
                let login = delivery.payload.members["login"]?.stringValue ?? ""
                let answer = ReposError(login: login, code: .userNotFound, message: "'\(login)' is not a GitHub login")
                await send(answer.payload, to: delivery)
            }
            return
        }
        switch payload {
        case .reposRequest(let command)?:
            await answerRepos(delivery, login: command.login)
        case .favoritesRefresh?:
            _ = await refresh(trigger: .watch)
        default:
            report(.invalidPayload(kind: kind, reason: "not a message the phone handles"))
        }
    }

    /// Answers a repo request with `profile.repos` (trimmed to fit `messageBytes`; an older list
    /// marked stale when GitHub failed) or `profile.repos.error`.
    func answerRepos(_ delivery: Delivery, login: String) async {
        do throws(PhoneError) {
            let reply = try await repos(of: login)
            let fitted = Self.fit(reply, limit: await session.status().limits.messageBytes)
            record(.answeredRepos(login: login, repos: fitted.repos.count, error: reply.stale?.code))
            await send(fitted.payload, to: delivery)
        } catch {
            report(error)
            let answer: ReposError
            if case .github(_, let githubError) = error {
                answer = ReposError(login: login, error: githubError)
            } else {
                answer = ReposError(login: login, code: .githubUnavailable, message: error.description)
            }
            record(.answeredRepos(login: login, repos: nil, error: answer.code))
            await send(answer.payload, to: delivery)
        }
    }

    /// The repos of `login`: from the cache while younger than ``PhoneConfiguration/reposMaxAge``,
    /// else from GitHub (revalidated with the ETag of the last answer: free of rate limit when
    /// unchanged, with a GitHub token only), stored as the new cache; while GitHub's rate-limit
    /// refusal is in force, without a request, as if GitHub had refused it.
    ///
    /// When GitHub fails (down, garbage, rate limited) and a list of `login` is cached, however
    /// old, that list is the answer, marked ``ReposReply/stale`` with the failure (which is also
    /// reported on ``errors``): the watch shows the repos it would have shown a moment ago, and
    /// says they are stale, instead of an error (PROTOCOL.md §12.5).
    /// - Throws: ``PhoneError/github(login:_:)`` when nothing is cached, or GitHub says the user
    ///   does not exist (its cache is then dropped), ``PhoneError/store(_:)``.
    public func repos(of login: String) async throws(PhoneError) -> ReposReply {
        let cached = try store.cachedRepos(login)
        if let cached, isFresh(cached.fetchedAt, maxAge: configuration.reposMaxAge) {
            return ReposReply(login: login, repos: cached.repos, fetchedAt: Timestamp(date: cached.fetchedAt))
        }
        let repos: [Repo]
        do throws(GitHubError) {
            repos = try await askGitHub { () async throws(GitHubError) in try await github.repos(login) }
        } catch {
            if case .userNotFound = error {
                try? store.forgetRepos(login)
            } else if let cached {
                report(.github(login: login, error))
                return ReposReply(
                    login: login, repos: cached.repos, fetchedAt: Timestamp(date: cached.fetchedAt),
                    stale: ReposStaleness(error))
            }
            throw .github(login: login, error)
        }
        let stamp = now()
        try store.saveRepos(repos, for: login, fetchedAt: stamp)
        return ReposReply(login: login, repos: repos, fetchedAt: Timestamp(date: stamp))
    }

    /// The reply with repos dropped from the end until its payload fits `limit` bytes (§12.5).
    static func fit(_ reply: ReposReply, limit: Int) -> ReposReply {
        guard reply.payload.encodedSize > limit else { return reply }
        // Binary search for the longest prefix that fits; the empty list always does in practice.
        var low = 0
        var high = reply.repos.count
        while low < high {
            let mid = (low + high + 1) / 2
            var candidate = reply
            candidate.repos = Array(reply.repos.prefix(mid))
            if candidate.payload.encodedSize <= limit { low = mid } else { high = mid - 1 }
        }
        var fitted = reply
        fitted.repos = Array(reply.repos.prefix(low))
        return fitted
    }

    private func send(_ payload: Payload, to delivery: Delivery) async {
        do {
            try await session.reply(delivery, payload)
        } catch {
            report(.relay(Self.relayError(error)))
        }
    }
}
