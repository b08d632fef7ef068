import PhoneApp
import RelayProtocol
import Testing

/// Re-adding a favorite removed a moment ago: the user GitHub just answered for is reused
/// (``PhoneConfiguration/userMaxAge``), so the change goes out without a GitHub request.
@Suite(.timeLimit(.minutes(5)))
struct FavoriteReAddTests {
    static let userPath = "/users/octocat"

    @Test func reAddingAFavoriteJustRemovedAsksGitHubNothing() async throws {
        let h = try await PhoneHarness.start()
        _ = try await h.phone.add("octocat")
        _ = try await h.watch.nextSnapshot()
        let before = h.github.server.counters.paths[Self.userPath, default: 0]
        _ = try await h.phone.remove("octocat")
        #expect(try await h.watch.nextSnapshot().users.isEmpty)
        let change = try await h.phone.add("octocat")
        let snapshot = try await h.watch.nextSnapshot()
        #expect(snapshot.users.map(\.login) == ["octocat"])
        #expect(change.sync == .pushed(revision: snapshot.revision))
        #expect(h.github.server.counters.paths[Self.userPath, default: 0] == before)
        await h.stop()
    }

    @Test func withNoUserMaxAgeAReAddAsksGitHubAgain() async throws {
        let h = try await PhoneHarness.start { $0.userMaxAge = .zero }
        _ = try await h.phone.add("octocat")
        _ = try await h.watch.nextSnapshot()
        let before = h.github.server.counters.paths[Self.userPath, default: 0]
        _ = try await h.phone.remove("octocat")
        _ = try await h.watch.nextSnapshot()
        _ = try await h.phone.add("octocat")
        #expect(try await h.watch.nextSnapshot().users.map(\.login) == ["octocat"])
        #expect(h.github.server.counters.paths[Self.userPath, default: 0] == before + 1)
        await h.stop()
    }
}
