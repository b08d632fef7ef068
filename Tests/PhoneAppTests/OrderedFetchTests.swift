import Foundation
import GitExplorerPayloads
import GitHubAPI
import PhoneApp
import Primitives
import RelayProtocol
import TestSupport
import Testing

/// Parallel fetching with a bound, and the favorites' order kept (the seeds could only have one).
@Suite(.timeLimit(.minutes(5)))
struct OrderedFetchTests {
    @Test func resultsKeepTheInputOrderWhenLaterItemsAnswerFirst() async {
        let finishOrder = LockedState<[Int]>([])
        let items = Array(0..<12)
        let results = await OrderedConcurrentFetch(maxConcurrent: 12).map(items) { i in
            // The later the item, the sooner it answers.
            try? await Task.sleep(for: .milliseconds(5 * (12 - i)))
            finishOrder.withLock { $0.append(i) }
            return "item-\(i)"
        }
        #expect(results == items.map { "item-\($0)" })
        #expect(finishOrder.withLock { $0 } != items, "the answers really came back out of order")
    }

    @Test(arguments: [1, 2, 4, 7])
    func noMoreThanTheBoundAreInFlight(bound: Int) async {
        let counter = InFlightCounter()
        let logins = (0..<16).map { "user\($0)" }
        let github = slowGitHub(users: logins.map { testUser($0) }, counter: counter) { _ in .milliseconds(15) }
        let results = await OrderedConcurrentFetch(maxConcurrent: bound).map(logins) { login in
            try? await github.user(login)
        }
        #expect(results.map { $0?.login } == logins)
        #expect(counter.calls == 16)
        #expect(counter.peak == bound, "peak \(counter.peak) in flight with a bound of \(bound)")
    }

    @Test func anEmptyListReturnsAtOnce() async {
        let results = await OrderedConcurrentFetch(maxConcurrent: 4).map([Int]()) { $0 }
        #expect(results.isEmpty)
    }

    @Test func aBoundBelowOneCountsAsOne() {
        #expect(OrderedConcurrentFetch(maxConcurrent: 0).maxConcurrent == 1)
    }

    @Test func theCompanionRefreshesInParallelAndSnapshotsInFavoritesOrder() async throws {
        let dir = TemporaryDirectory()
        let logins = ["zed", "amy", "kim", "bob", "eve", "dan", "lee", "max"]
        let counter = InFlightCounter()
        // Reverse delays: the last favorite answers first.
        let delays = Dictionary(uniqueKeysWithValues: logins.enumerated().map { ($1, Duration.milliseconds(10 * (logins.count - $0))) })
        let github = slowGitHub(users: logins.map { testUser($0) }, counter: counter) { delays[$0] ?? .zero }
        var configuration = phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path)
        configuration.concurrency = 3
        let store = try PhoneStore(directory: dir.path)
        for login in logins { try store.addFavorite(login) }
        let phone = try PhoneCompanion(configuration: configuration, github: github)
        let result = await phone.refresh()
        guard case .refreshed(let fetched, let failed, let sync) = result else {
            Issue.record("expected a refresh, got \(result)")
            return
        }
        #expect(fetched == 8 && failed.isEmpty)
        // Not started: the session is offline, so the snapshot is queued.
        #expect(sync == .queued(revision: 1))
        #expect(await phone.latestSnapshot?.users.map(\.login) == logins)
        #expect(counter.peak == 3)
        await phone.shutdown()
    }

    @Test func aFailingUserKeepsItsLastKnownData() async throws {
        let dir = TemporaryDirectory()
        let good = LockedState(true)
        let fixed = GitHubClient.fixed(users: [testUser("amy", followers: 5), testUser("bob", followers: 7)])
        let github = GitHubClient(
            user: { (login) async throws(GitHubError) -> User in
                if login == "amy", !good.withLock({ $0 }) { throw .unavailable("test: down") }
                return try await fixed.user(login)
            },
            repos: fixed.repos)
        let phone = try PhoneCompanion(configuration: phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path), github: github)
        _ = try await phone.add("amy")
        _ = try await phone.add("bob")
        let before = await phone.latestSnapshot
        good.withLock { $0 = false }
        let result = await phone.refresh()
        #expect(result == .refreshed(fetched: 1, failed: ["amy"], sync: .unchanged))
        #expect(await phone.latestSnapshot == before)
        #expect(try await phone.favorites().first?.user?.followers == 5)
        await phone.shutdown()
        var errors: [PhoneError] = []
        for await e in phone.errors { errors.append(e) }
        #expect(errors.contains(.github(login: "amy", .unavailable("test: down"))))
    }
}
