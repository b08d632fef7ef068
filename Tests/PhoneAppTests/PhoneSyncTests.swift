import Foundation
import GitExplorerPayloads
import GitHubAPI
import PhoneApp
import RelayProtocol
import SQLite
import TestSupport
import Testing

/// The phone over real sockets: an in-process relay, the fixture GitHub server, and a raw
/// protocol client as the watch.
@Suite(.timeLimit(.minutes(5)))
struct PhoneSyncTests {
    @Test func theWatchGetsSnapshotsInOrderAfterAddMoveRemoveAndRefresh() async throws {
        let h = try await PhoneHarness.start()
        #expect(h.first.users.isEmpty)
        var revision = h.first.revision

        func expectNext(_ logins: [String], after sync: SnapshotSync, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let snapshot = try await h.watch.nextSnapshot()
            #expect(snapshot.users.map(\.login) == logins, sourceLocation: sourceLocation)
            #expect(snapshot.revision > revision, sourceLocation: sourceLocation)
            #expect(sync == .pushed(revision: snapshot.revision), sourceLocation: sourceLocation)
            revision = snapshot.revision
        }
        try await expectNext(["octocat"], after: try await h.phone.add("octocat").sync)
        try await expectNext(["octocat", "mattt"], after: try await h.phone.add("mattt").sync)
        try await expectNext(["octocat", "mattt", "torvalds"], after: try await h.phone.add("torvalds").sync)
        try await expectNext(["torvalds", "octocat", "mattt"], after: try await h.phone.move("torvalds", to: 0).sync)
        try await expectNext(["torvalds", "mattt"], after: try await h.phone.remove("octocat").sync)

        // Nothing changed on GitHub: a refresh fetches everyone and pushes nothing.
        #expect(await h.phone.refresh() == .refreshed(fetched: 2, failed: [], sync: .unchanged))
        #expect(try await h.phone.remove("octocat") == FavoriteChange(listChanged: false, sync: .unchanged))
        await h.watch.expectNoSnapshot(for: 0.3)
        // A second manual refresh inside the window is dropped.
        guard case .throttled(let retryAfter) = await h.phone.refresh() else {
            Issue.record("the second refresh was not throttled")
            return
        }
        #expect(retryAfter > .zero && retryAfter <= .seconds(10))
        await h.stop()
    }

    @Test func thePeriodicRefreshPushesOnlyWhenGitHubDataChanged() async throws {
        let github = try TestGitHub.start(logins: ["octocat", "mattt"])
        let h = try await PhoneHarness.start(github: github) { $0.refreshInterval = .milliseconds(150) }
        _ = try await h.phone.add("octocat")
        _ = try await h.phone.add("mattt")
        let before = try await h.watch.nextSnapshot()
        let last = try await h.watch.nextSnapshot()
        #expect(last.revision == before.revision + 1 && last.users.count == 2)
        let requests = github.server.counters.requests
        // Two more periodic refreshes (two users each) with the same data: nothing is pushed.
        try await eventually(5, "two periodic refreshes") { github.server.counters.requests >= requests + 4 }
        await h.watch.expectNoSnapshot(for: 0.2)

        try github.edit("octocat") { $0["followers"] = 99_999 }
        try await github.restart()
        let changed = try await h.watch.nextSnapshot()
        #expect(changed.revision == last.revision + 1)
        #expect(changed.users.map(\.login) == ["octocat", "mattt"])
        #expect(changed.users.first?.followers == 99_999)
        await h.watch.expectNoSnapshot(for: 0.4)
        await h.stop()
    }

    @Test func aDeleteSentWhileThePhoneIsOfflineIsAppliedWhenItIsBack() async throws {
        let h = try await PhoneHarness.start()
        _ = try await h.phone.add("octocat")
        _ = try await h.phone.add("mattt")
        _ = try await h.watch.nextSnapshot()
        let before = try await h.watch.nextSnapshot()
        #expect(before.users.map(\.login) == ["octocat", "mattt"])

        await h.phone.shutdown()
        let sent = try await h.watch.delete("octocat")
        await h.watch.expectNoSnapshot(for: 0.2)

        let again = try PhoneCompanion(configuration: h.phone.configuration, github: h.github.client)
        await again.start()
        let after = try await h.watch.nextSnapshot()
        #expect(after.users.map(\.login) == ["mattt"])
        #expect(after.revision == before.revision + 1)
        try await h.watch.transferred(sent)
        #expect(try await again.favorites().map(\.login) == ["mattt"])

        // Idempotent: the same delete again changes nothing and sends nothing, but is acknowledged.
        let repeated = try await h.watch.delete("octocat")
        try await h.watch.transferred(repeated)
        await h.watch.expectNoSnapshot(for: 0.3)
        await again.shutdown()
        await h.watch.close()
        await h.relay.stop()
        await h.github.stop()
    }

    /// A delete the phone cannot store (another writer holds `phone.db` past the busy timeout)
    /// is handed back to the session: it comes again and is stored and acknowledged once it can
    /// be. Left unacknowledged only, it never came again on that connection and held every later
    /// ack back.
    @Test func aDeleteThePhoneCouldNotStoreComesAgainAndIsAcknowledged() async throws {
        let h = try await PhoneHarness.start()
        _ = try await h.phone.add("mattt")
        _ = try await h.watch.nextSnapshot()
        let blocker = try SQLiteDatabase(path: h.state.path("phone.db"))
        try blocker.execute("BEGIN EXCLUSIVE")
        let failed = Task {
            for await error in h.phone.errors { if case .store = error { return true } }
            return false
        }
        let sent = try await h.watch.delete("octocat")
        #expect(await failed.value)
        try blocker.execute("COMMIT")
        try await h.watch.transferred(sent)
        #expect(try await h.phone.favorites().map(\.login) == ["mattt"])
        await h.stop()
    }

    @Test func aFavoriteAddedByAnotherProcessIsPushed() async throws {
        let h = try await PhoneHarness.start()
        let cli = try PhoneStore(directory: h.state.path)
        let start = ContinuousClock.now
        try cli.addFavorite("torvalds")
        let snapshot = try await h.watch.nextSnapshot()
        let elapsed = ContinuousClock.now - start
        #expect(snapshot.users.map(\.login) == ["torvalds"])
        // ~100 ms alone (the poll interval plus a fetch and a push): printed, not asserted —
        // timings belong to the benchmarks, not to tests on a shared machine.
        print("external add → snapshot at the watch: \(elapsed)")

        try cli.moveFavorite("torvalds", to: 0)
        try cli.addFavorite("octocat")
        try cli.moveFavorite("octocat", to: 0)
        #expect(try await h.watch.nextSnapshot().users.map(\.login) == ["octocat", "torvalds"])
        await h.stop()
    }

    /// GitHub's rate limit is the token's, not one user's: once it refused a request, a refresh
    /// went on asking for every other favorite (each refused too, while GitHub asks clients to
    /// stop until the reset). The rest of that refresh now fails without a request.
    @Test func aRefreshStopsAskingGitHubOnceItIsRateLimited() async throws {
        let h = try await PhoneHarness.start { $0.concurrency = 1 }
        let logins = ["octocat", "mattt", "torvalds", "tj"]
        for login in logins { _ = try await h.phone.add(login) }
        h.github.server.restartRateLimit(GitHubStubRateLimit(limit: 1))
        h.github.server.resetCounters()
        guard case .refreshed(let fetched, let failed, _) = await h.phone.refresh() else {
            Issue.record("the refresh was throttled")
            return
        }
        #expect(fetched == 1 && failed == Array(logins.dropFirst()))
        #expect(h.github.server.counters.requests == 2, "one answered, one refused, then no more")
        await h.stop()
    }

    @Test func aRefreshMessageFromTheWatchIsThrottled() async throws {
        let h = try await PhoneHarness.start()
        _ = try await h.phone.add("octocat")
        _ = try await h.watch.nextSnapshot()
        let userPath = "/users/octocat"
        let before = h.github.server.counters.paths[userPath, default: 0]
        try await h.watch.message(FavoritesRefresh().payload, wantsReply: false)
        try await eventually(10, "the refresh") { h.github.server.counters.paths[userPath, default: 0] == before + 1 }
        try await h.watch.message(FavoritesRefresh().payload, wantsReply: false)
        try await h.watch.message(FavoritesRefresh().payload, wantsReply: false)
        try await Task.sleep(for: .milliseconds(300))
        #expect(h.github.server.counters.paths[userPath, default: 0] == before + 1, "the first request won the window")
        await h.stop()
    }
}
