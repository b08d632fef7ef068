import Foundation
import GitExplorerPayloads
import GitHubAPI
import InMemoryRelay
import PhoneApp
import Primitives
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

    /// The relay came back with a smaller `contextBytes` while a snapshot was on its way (the
    /// session sends it again after the new `welcome`, and it is refused): the phone fits it to
    /// the new limit and sends it again at once. It reported `payload_too_large` and left the
    /// watch on its older list until the next change.
    @Test func aPushRefusedUnderALimitAnnouncedMeanwhileIsFittedToItAndSent() async throws {
        let relay = InMemoryRelay()
        await relay.followRealTime()
        let github = try TestGitHub.start()
        let state = TemporaryDirectory()
        let inner = await relay.session(role: .phone, deviceName: "iPhone")
        let armed = LockedState(false)
        var session = inner
        session.updateApplicationContext = { payload in
            if armed.withLock({ let was = $0; $0 = false; return was }) {
                // The relay restarts with room for two users, and the phone is welcomed again.
                await relay.setRunning(false)
                await relay.setLimits(Limits(contextBytes: 600))
                await relay.setRunning(true)
                try await eventually(10, "the phone welcomed with the new limit") {
                    let status = await inner.status()
                    return status.limits.contextBytes == 600 && status.activationState == .activated
                }
            }
            try await inner.updateApplicationContext(payload)
        }
        let phone = try PhoneCompanion(
            configuration: phoneConfiguration(relay: "memory", state: state.path), github: github.client, session: session)
        await phone.start()
        let watch = await relay.session(role: .watch, deviceName: "Watch")
        try await watch.activate()
        try await watch.pair(try await phone.pair().code)
        for login in ["octocat", "torvalds", "mattt"] { _ = try await phone.add(login) }
        armed.withLock { $0 = true }
        let change = try await phone.add("tj")
        guard case .partial(_, let omitted) = change.sync else {
            Issue.record("not sent cut to the new limit: \(change)")
            return
        }
        #expect(omitted == 2)
        let latest = try await withTimeout(10, "the cut snapshot at the watch") { () async throws -> FavoritesSnapshot in
            var last: FavoritesSnapshot?
            for await event in watch.events {
                guard case .applicationContext(let d) = event else { continue }
                await watch.acknowledge(d)
                let snapshot = try FavoritesSnapshot(json: d.payload.json)
                last = snapshot
                if snapshot.omitted == 2 { return snapshot }
            }
            throw TestFailure("the event stream ended after \(String(describing: last))")
        }
        #expect(latest.users.count == 2)
        await phone.shutdown()
        await watch.close()
        await relay.stopFollowingRealTime()
        await github.stop()
    }
}
