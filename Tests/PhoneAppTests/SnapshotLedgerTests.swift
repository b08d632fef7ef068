import Foundation
import GitExplorerPayloads
import GitHubAPI
import PhoneApp
import RelayProtocol
import TestSupport
import Testing

/// Revisions: strictly increasing, only for changed content, persisted across restarts.
@Suite(.timeLimit(.minutes(5)))
struct SnapshotLedgerTests {
    @Test func revisionsStrictlyIncreaseAndOnlyForChangedContent() {
        var ledger = SnapshotLedger()
        let a = testUser("amy")
        let b = testUser("bob")
        #expect(ledger.record([])?.revision == 1, "an empty list is a valid first snapshot")
        #expect(ledger.record([]) == nil)
        #expect(ledger.record([a])?.revision == 2)
        #expect(ledger.record([a, b])?.revision == 3)
        #expect(ledger.record([a, b]) == nil)
        #expect(ledger.record([b, a])?.revision == 4, "order is content")
        var changed = a
        changed.followers += 1
        #expect(ledger.record([b, changed])?.revision == 5, "a user's data is content")
        #expect(ledger.latest == FavoritesSnapshot(revision: 5, users: [b, changed]))
    }

    @Test func snapshotUsersFollowTheFavoritesSkippingUnknownAndDuplicates() {
        let cached = ["amy": testUser("amy"), "bob": testUser("Bob")]
        let users = SnapshotLedger.users(favorites: ["bob", "nobody", "AMY", "amy"], cached: cached)
        #expect(users.map(\.login) == ["Bob", "amy"])
    }

    @Test func theRevisionSurvivesARestart() async throws {
        let dir = TemporaryDirectory()
        let github = GitHubClient.fixed(users: ["amy", "bob", "cat"].map { testUser($0) })
        let configuration = phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path)
        var phone = try PhoneCompanion(configuration: configuration, github: github)
        #expect(try await phone.add("amy").sync == .queued(revision: 1))
        #expect(try await phone.add("bob").sync == .queued(revision: 2))
        #expect(try await phone.add("bob").sync == .unchanged)
        await phone.shutdown()

        phone = try PhoneCompanion(configuration: configuration, github: github)
        #expect(await phone.latestSnapshot?.revision == 2)
        #expect(await phone.latestSnapshot?.users.map(\.login) == ["amy", "bob"])
        #expect(try await phone.add("cat").sync == .queued(revision: 3))
        #expect(try await phone.remove("amy").sync == .queued(revision: 4))
        await phone.shutdown()
        #expect(try PhoneStore(directory: dir.path).ledger().revision == 4)
    }

    @Test func aChangeMadeWhileStoppedGetsARevisionAtStart() async throws {
        let dir = TemporaryDirectory()
        let github = GitHubClient.fixed(users: ["amy", "bob"].map { testUser($0) })
        var configuration = phoneConfiguration(relay: "ws://127.0.0.1:9/v1", state: dir.path)
        configuration.session.requestTimeoutSeconds = 0.2
        var phone = try PhoneCompanion(configuration: configuration, github: github)
        _ = try await phone.add("amy")
        _ = try await phone.add("bob")
        await phone.shutdown()
        _ = try PhoneStore(directory: dir.path).moveFavorite("bob", to: 0)

        phone = try PhoneCompanion(configuration: configuration, github: github)
        await phone.start()
        #expect(await phone.latestSnapshot == FavoritesSnapshot(revision: 3, users: [testUser("bob"), testUser("amy")]))
        await phone.shutdown()
    }
}
