import Foundation
import GitExplorerPayloads
import GitHubAPI
@testable import PhoneApp
import TestSupport
import Testing

/// A GitHub rate-limit refusal is honoured until its reset, over real sockets and real HTTP.
@Suite(.timeLimit(.minutes(5)))
struct RateLimitMemoryTests {
    /// GitHub: a client refused for its rate limit must not ask again before
    /// `X-RateLimit-Reset` (or `Retry-After`). The companion stopped asking only for the rest
    /// of the refresh that was refused: the next periodic refresh, a repo request from the
    /// watch and an add asked GitHub again (each refused too). They now fail at once with
    /// `rateLimited(retryAt:)` until the reset, and ask again after it.
    @Test func aRateLimitRefusalIsHonouredUntilItsReset() async throws {
        let clock = SteppedWallClock()
        let h = try await PhoneHarness.start(clock: clock)
        _ = try await h.phone.add("octocat")
        let server = h.github.server
        server.restartRateLimit(GitHubStubRateLimit(limit: 0, window: .seconds(600)))
        server.resetCounters()

        guard case .refreshed(_, let failed, _) = await h.phone.refresh(trigger: .periodic) else {
            Issue.record("a periodic refresh is not throttled")
            return
        }
        #expect(failed == ["octocat"])
        #expect(server.counters.rateLimited == 1 && server.counters.requests == 1)

        // Until the reset: the same answers, and no request.
        guard case .refreshed(_, let again, _) = await h.phone.refresh(trigger: .periodic) else {
            Issue.record("a periodic refresh is not throttled")
            return
        }
        #expect(again == ["octocat"])
        let answer = try await h.watch.message(LoginCommand.reposRequest("torvalds").payload)
        guard case .reposError(let error)? = answer else {
            Issue.record("expected profile.repos.error, got \(String(describing: answer))")
            return
        }
        #expect(error.code == .rateLimited)
        #expect(try await h.phone.add("mattt").listChanged, "added, its data fetched later")
        let retryAt = try await Self.rateLimitReset(repos: "tj", h)
        #expect(retryAt > Date().addingTimeInterval(500), "the reset GitHub announced")
        #expect(server.counters.requests == 1, "nothing asked of GitHub before the reset")

        // After the reset (the phone's clock moved past it), GitHub is asked again.
        server.setRateLimit(nil)
        clock.advance(seconds: 601)
        guard case .refreshed(let fetched, let none, _) = await h.phone.refresh(trigger: .periodic) else {
            Issue.record("a periodic refresh is not throttled")
            return
        }
        #expect(fetched == 2 && none.isEmpty)
        #expect(server.counters.requests == 3)
        await h.stop()
    }

    /// A reset announced further away than GitHub's hour (a server's garbage, a phone clock
    /// far behind) keeps the companion from GitHub for an hour at most: remembered as it came,
    /// it held until the process restarted.
    @Test func aRefusalKeepsTheCompanionFromGitHubForAnHourAtMost() async throws {
        let clock = SteppedWallClock()
        let h = try await PhoneHarness.start(clock: clock)
        _ = try await h.phone.add("octocat")
        let server = h.github.server
        server.restartRateLimit(GitHubStubRateLimit(limit: 0, window: .seconds(2 * 86_400)))
        server.resetCounters()
        guard case .refreshed(_, let failed, _) = await h.phone.refresh(trigger: .periodic) else {
            Issue.record("a periodic refresh is not throttled")
            return
        }
        #expect(failed == ["octocat"])
        let retryAt = try await Self.rateLimitReset(repos: "tj", h)
        #expect(retryAt <= Date().addingTimeInterval(3_600 + 60), "an hour at most: \(retryAt)")
        #expect(server.counters.requests == 1)
        server.setRateLimit(nil)
        clock.advance(seconds: 3_601)
        guard case .refreshed(let fetched, let none, _) = await h.phone.refresh(trigger: .periodic) else {
            Issue.record("a periodic refresh is not throttled")
            return
        }
        #expect(fetched == 1 && none.isEmpty)
        await h.stop()
    }

    /// A refresh the rate limit stops reports it once, not once per favorite: with twenty
    /// favorites, each periodic refresh in the hour GitHub asks the phone to wait printed twenty
    /// identical warnings. The refresh's result still lists every login it did not refresh.
    @Test func aRateLimitedRefreshReportsTheLimitOnce() async throws {
        let h = try await PhoneHarness.start()
        for login in ["octocat", "torvalds", "mattt"] { _ = try await h.phone.add(login) }
        h.github.server.restartRateLimit(GitHubStubRateLimit(limit: 0, window: .seconds(600)))
        for _ in 0..<2 {
            guard case .refreshed(_, let failed, _) = await h.phone.refresh(trigger: .periodic) else {
                Issue.record("a periodic refresh is not throttled")
                return
            }
            #expect(failed == ["octocat", "torvalds", "mattt"])
        }
        await h.stop()
        var rateLimits: [String] = []
        for await e in h.phone.errors {
            if case .github(let login, .rateLimited) = e { rateLimits.append(login) }
        }
        #expect(rateLimits == ["octocat", "octocat"], "one report a refresh: \(rateLimits)")
    }

    /// The reset a repo request for `login` is refused with (it must be refused for the rate limit).
    static func rateLimitReset(repos login: String, _ h: PhoneHarness) async throws -> Date {
        do {
            _ = try await h.phone.repos(of: login)
        } catch {
            if case .github(login, .rateLimited(let retryAt)) = error { return retryAt }
            throw TestFailure("expected the rate limit, got \(error)")
        }
        throw TestFailure("expected the rate limit, got the repos")
    }
}
