import Foundation
import GitExplorerPayloads
import GitHubAPI
import InMemoryRelay
import PhoneApp
import Primitives
import RelayProtocol
import TestSupport
import Testing

/// `profile.repos.request` by message with reply, over real sockets and real HTTP.
@Suite(.timeLimit(.minutes(5)))
struct ReposRequestTests {
    @Test func theWatchGetsReposByMessageWithReply() async throws {
        let h = try await PhoneHarness.start { $0.reposMaxAge = .zero }
        let answer = try await h.watch.message(LoginCommand.reposRequest("octocat").payload)
        guard case .repos(let reply)? = answer else {
            Issue.record("expected profile.repos, got \(String(describing: answer))")
            return
        }
        let catalog = try #require(h.github.server.catalog.account(login: "octocat"))
        #expect(reply.login == "octocat")
        #expect(reply.repos.map(\.fullName) == catalog.repos.map { $0["full_name"]?.stringValue ?? "?" })

        // Asked again: revalidated with the ETag, GitHub answers 304, which is free.
        let free = h.github.server.counters.notModified
        guard case .repos(let again)? = try await h.watch.message(LoginCommand.reposRequest("octocat").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        #expect(again.repos == reply.repos)
        #expect(again.fetchedAt >= reply.fetchedAt)
        #expect(h.github.server.counters.notModified == free + 1)
        await h.stop()
    }

    @Test func aFreshCachedListIsAnsweredWithoutAskingGitHub() async throws {
        let h = try await PhoneHarness.start { $0.reposMaxAge = .seconds(60) }
        guard case .repos(let first)? = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        let requests = h.github.server.counters.requests
        guard case .repos(let cached)? = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        #expect(cached == first, "same list, same fetchedAt")
        #expect(h.github.server.counters.requests == requests)
        await h.stop()
    }

    /// PROTOCOL.md §12.5: with GitHub down, a list younger than `reposMaxAge` is the answer as
    /// it is (current: GitHub is not asked); an older one is the answer too, marked stale.
    @Test(arguments: [(60, false), (0, true)])
    func withGitHubDownTheCachedListIsAnswered(maxAgeSeconds: Int, stale: Bool) async throws {
        let h = try await PhoneHarness.start { $0.reposMaxAge = .seconds(maxAgeSeconds) }
        guard case .repos(let first)? = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        h.github.server.setGlobalFault(.down)
        let answer = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload)
        guard case .repos(let cached)? = answer else {
            Issue.record("expected profile.repos, got \(String(describing: answer))")
            return
        }
        #expect(cached.repos == first.repos && cached.fetchedAt == first.fetchedAt, "the list the phone had")
        #expect(cached.stale?.code == (stale ? .githubUnavailable : nil), "\(String(describing: cached.stale))")
        await h.stop()
    }

    static let staleFailures: [(String, GitHubStubFault?, GitHubStubRateLimit?, ReposErrorCode)] = [
        ("down", .down, nil, .githubUnavailable),
        ("garbage", .garbage, nil, .githubUnavailable),
        ("wrong shape", .wrongShape, nil, .githubUnavailable),
        ("rate limit", nil, GitHubStubRateLimit(limit: 0), .rateLimited),
        ("secondary rate limit", .secondaryRateLimit(retryAfterSeconds: 30), nil, .rateLimited),
    ]

    /// Every GitHub failure but a 404, met revalidating a list the phone holds: the watch gets
    /// that list, with the `fetchedAt` of its fetch and `stale` saying why, not
    /// `profile.repos.error` (which left it with nothing to show); the failure still reaches the
    /// merged error stream. Then, while the refusal is remembered, the list is answered stale
    /// without a request; a user the phone holds no list of is still answered with the error.
    @Test(arguments: staleFailures)
    func aGitHubFailureAnswersTheListThePhoneHoldsMarkedStale(
        _ name: String, fault: GitHubStubFault?, rateLimit: GitHubStubRateLimit?, code: ReposErrorCode
    ) async throws {
        let h = try await PhoneHarness.start { $0.reposMaxAge = .zero }
        guard case .repos(let first)? = try await h.watch.message(LoginCommand.reposRequest("octocat").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        #expect(first.stale == nil)
        h.github.server.setGlobalFault(fault)
        h.github.server.setRateLimit(rateLimit)
        let answer = try await h.watch.message(LoginCommand.reposRequest("octocat").payload)
        guard case .repos(let stale)? = answer else {
            Issue.record("\(name): expected profile.repos (stale), got \(String(describing: answer))")
            return
        }
        #expect(stale.login == "octocat")
        #expect(stale.repos == first.repos)
        #expect(stale.fetchedAt == first.fetchedAt, "the age of the list, not of the answer")
        #expect(stale.stale?.code == code)
        #expect(stale.stale?.message.isEmpty == false)

        if code == .rateLimited {
            let requests = h.github.server.counters.requests
            guard case .repos(let again)? = try await h.watch.message(LoginCommand.reposRequest("octocat").payload) else {
                Issue.record("expected profile.repos (stale) while the refusal holds")
                return
            }
            #expect(again.stale?.code == .rateLimited)
            #expect(h.github.server.counters.requests == requests, "nothing asked of GitHub before the reset")
        }
        let none = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload)
        guard case .reposError(let error)? = none else {
            Issue.record("expected profile.repos.error for a list the phone never had, got \(String(describing: none))")
            return
        }
        #expect(error.code == code)
        await h.stop()
        var errors: [PhoneError] = []
        for await e in h.phone.errors { errors.append(e) }
        #expect(errors.contains { if case .github("octocat", let e) = $0 { e.reposErrorCode == code } else { false } })
    }

    /// A 404 is not a failure to hide behind an older list: GitHub says the user is gone, so the
    /// phone drops its list and answers `user_not_found`.
    @Test func aUserGoneFromGitHubIsAnsweredUserNotFoundNotStale() async throws {
        let github = try TestGitHub.start(logins: ["octocat", "torvalds"])
        let h = try await PhoneHarness.start(github: github) { $0.reposMaxAge = .zero }
        guard case .repos? = try await h.watch.message(LoginCommand.reposRequest("octocat").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        for sub in ["users", "repos"] { try FileManager.default.removeItem(atPath: "\(github.fixtures)/\(sub)/octocat.json") }
        try await github.restart()
        let answer = try await h.watch.message(LoginCommand.reposRequest("octocat").payload)
        guard case .reposError(let error)? = answer else {
            Issue.record("expected profile.repos.error, got \(String(describing: answer))")
            return
        }
        #expect(error.code == .userNotFound)
        #expect(try PhoneStore(directory: h.state.path).cachedRepos("octocat") == nil, "the list is dropped")
        await h.stop()
    }

    /// A list fetched "in the future" (the wall clock was stepped back since) is not fresh: it
    /// answered from the cache, without asking GitHub, until the clock caught up with it (an
    /// hour here), where a user fetched in the future is asked for again at once.
    @Test func aListFetchedBeforeTheClockSteppedBackIsAskedForAgain() async throws {
        let github = try TestGitHub.start()
        let state = TemporaryDirectory()
        let clock = LockedState(Date(timeIntervalSince1970: 1_800_000_000))
        let phone = try PhoneCompanion(
            configuration: phoneConfiguration(relay: "memory", state: state.path), github: github.client,
            now: { clock.withLock { $0 } }, session: await InMemoryRelay().session(role: .phone, deviceName: "iPhone"))
        let first = try await phone.repos(of: "torvalds")
        let requests = github.server.counters.requests
        clock.withLock { $0 = $0.addingTimeInterval(-3600) }
        let again = try await phone.repos(of: "torvalds")
        #expect(github.server.counters.requests == requests + 1, "GitHub was asked again")
        #expect(again.fetchedAt < first.fetchedAt)
        await phone.shutdown()
        await github.stop()
    }

    @Test func aLongListIsTrimmedToFitTheMessageLimit() async throws {
        let h = try await PhoneHarness.start()
        guard case .repos(let reply)? = try await h.watch.message(LoginCommand.reposRequest("sindresorhus").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        #expect(reply.payload.encodedSize <= 65_536)
        #expect(reply.repos.count > 100, "pagination was followed before trimming")
        let all = try #require(h.github.server.catalog.account(login: "sindresorhus")).repos
        #expect(reply.repos.map(\.name) == all.prefix(reply.repos.count).map { $0["name"]?.stringValue ?? "?" })
        await h.stop()
    }

    static let failures: [(String, GitHubStubFault?, GitHubStubRateLimit?, ReposErrorCode)] = [
        ("nosuchuser", nil, nil, .userNotFound),
        ("octocat", nil, GitHubStubRateLimit(limit: 0), .rateLimited),
        ("octocat", .secondaryRateLimit(retryAfterSeconds: 30), nil, .rateLimited),
        ("octocat", .down, nil, .githubUnavailable),
        ("octocat", .garbage, nil, .githubUnavailable),
    ]

    @Test(arguments: failures)
    func gitHubFailuresAreAnsweredWithTheirCode(
        login: String, fault: GitHubStubFault?, rateLimit: GitHubStubRateLimit?, code: ReposErrorCode
    ) async throws {
        let h = try await PhoneHarness.start()
        h.github.server.setGlobalFault(fault)
        h.github.server.setRateLimit(rateLimit)
        let answer = try await h.watch.message(LoginCommand.reposRequest(login).payload)
        guard case .reposError(let error)? = answer else {
            Issue.record("expected profile.repos.error, got \(String(describing: answer))")
            return
        }
        #expect(error.login == login)
        #expect(error.code == code)
        #expect(!error.message.isEmpty)
        await h.stop()
        // The same failure reached the merged error stream.
        var errors: [PhoneError] = []
        for await e in h.phone.errors { errors.append(e) }
        #expect(errors.contains { if case .github(login, let e) = $0 { e.reposErrorCode == code } else { false } })
    }
}
