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

    /// PROTOCOL.md §12.5: with GitHub down, a list younger than `reposMaxAge` is still the
    /// answer; an older one is not (GitHub's failure is).
    @Test(arguments: [(60, true), (0, false)])
    func withGitHubDownOnlyAFreshListIsAnswered(maxAgeSeconds: Int, fromCache: Bool) async throws {
        let h = try await PhoneHarness.start { $0.reposMaxAge = .seconds(maxAgeSeconds) }
        guard case .repos(let first)? = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload) else {
            Issue.record("expected profile.repos")
            return
        }
        h.github.server.setGlobalFault(.down)
        let answer = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload)
        switch answer {
        case .repos(let cached)?: #expect(fromCache && cached == first, "\(cached)")
        case .reposError(let error)?: #expect(!fromCache && error.code == .githubUnavailable, "\(error)")
        default: Issue.record("expected profile.repos or profile.repos.error, got \(String(describing: answer))")
        }
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
