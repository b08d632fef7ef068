import Foundation
import GitExplorerPayloads
import GitHubAPI
import InMemoryRelay
import PhoneApp
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// The phone companion on an in-memory session (relay core and session cores in one actor);
/// GitHub is the real fixture server over HTTP.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryPhoneTests {
    @Test func anAddedFavoriteReachesTheWatchAndAWatchDeleteRemovesIt() async throws {
        let relay = InMemoryRelay()
        let github = try TestGitHub.start()
        let state = TemporaryDirectory()
        let phone = try PhoneCompanion(
            configuration: phoneConfiguration(relay: "memory", state: state.path), github: github.client,
            session: await relay.session(role: .phone, deviceName: "iPhone"))
        await phone.start()
        let watch = await relay.session(role: .watch, deviceName: "Watch")
        try await watch.activate()
        try await watch.pair(try await phone.pair().code)
        let events = watch.events
        func nextSnapshot() async throws -> FavoritesSnapshot {
            try await withTimeout(10, "a snapshot at the watch") {
                for await event in events {
                    if case .applicationContext(let d) = event {
                        await watch.acknowledge(d)
                        return try FavoritesSnapshot(json: d.payload.json)
                    }
                }
                throw TestFailure("the event stream ended")
            }
        }
        #expect(try await nextSnapshot().users.isEmpty)
        let change = try await phone.add("octocat")
        guard case .pushed = change.sync else {
            Issue.record("not pushed: \(change)")
            return
        }
        #expect(try await nextSnapshot().users.map(\.login) == ["octocat"])
        _ = try await watch.transferUserInfo(LoginCommand.favoritesDelete("octocat").payload)
        #expect(try await nextSnapshot().users.isEmpty)
        #expect(try await phone.favorites().isEmpty)
        await phone.shutdown()
        await watch.close()
        await github.stop()
    }
}
