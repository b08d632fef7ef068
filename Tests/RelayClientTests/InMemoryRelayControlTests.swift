import GitExplorerPayloads
import InMemoryRelay
import RelayClient
import RelayCore
import RelayProtocol
import TestSupport
import Testing

/// What a scenario does to the in-memory relay from outside: take it down and up (with other
/// limits), force a device unreachable, cut a connection, and let its clock follow the wall.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryRelayControlTests {
    @Test func aStoppedRelayDropsEveryConnectionAndTheDevicesReconnectWhenItIsBack() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await InMemoryRelayTests.pair(relay)
        #expect(await relay.stats.connections == 2)
        await relay.setRunning(false)
        #expect(await relay.stats.connections == 0)
        #expect(await relay.stats.pairs == 1, "a stopped relay keeps what it holds")
        // While it is down, reconnects fail however much time passes.
        await relay.advance(by: .seconds(5))
        #expect(await relay.stats.connections == 0)
        #expect(await phone.status().activationState != .activated)
        await relay.setRunning(true)
        await relay.advance(by: .seconds(2))
        #expect(await relay.stats.connections == 2)
        try await phone.updateApplicationContext(FavoritesSnapshot(revision: 3, users: []).payload)
        let d = try await InMemoryRelayTests.next(watch.events) { if case .applicationContext(let d) = $0 { d } else { nil } }
        #expect(try FavoritesSnapshot(json: d.payload.json).revision == 3)
    }

    /// As a relay restarted with `serve --context-bytes`: the devices are welcomed with the new
    /// limit when they come back, the relay refuses a context over it, and it keeps its pairs.
    @Test func aRelayStartedAgainWithOtherLimitsWelcomesTheDevicesWithThem() async throws {
        let relay = InMemoryRelay()
        let (phone, _) = try await InMemoryRelayTests.pair(relay)
        #expect(await phone.status().limits.contextBytes == Limits.default.contextBytes)
        await relay.setRunning(false)
        var limits = await relay.limits
        limits.contextBytes = 600
        await relay.setLimits(limits)
        await relay.setRunning(true)
        await relay.advance(by: .seconds(2))
        #expect(await relay.stats.connections == 2)
        #expect(await relay.stats.pairs == 1)
        #expect(await relay.limits.contextBytes == 600)
        #expect(await phone.status().limits.contextBytes == 600)
        let user = User(
            login: "octocat", id: 1, name: String(repeating: "n", count: 600), avatarURL: "https://a.example/1",
            htmlURL: "https://github.com/octocat", publicRepos: 1, followers: 1, following: 1)
        let large = FavoritesSnapshot(revision: 2, users: [user])
        await #expect(throws: RelaySessionError.self) { try await phone.updateApplicationContext(large.payload) }
    }

    @Test func aForcedUnreachableWatchFailsMessagesUntilItIsLifted() async throws {
        let relay = InMemoryRelay()
        let (phone, _) = try await InMemoryRelayTests.pair(relay)
        let watchID = try #require(await relay.pairedDevice(named: "Watch")).device
        await relay.setForcedUnreachable(watchID, true)
        #expect(await phone.status().isReachable == false)
        await #expect(throws: RelaySessionError.self) { try await phone.sendMessage(Payload(kind: "ping"), false) }
        await relay.clearForcedUnreachable()
        #expect(await phone.status().isReachable)
        _ = try await phone.sendMessage(Payload(kind: "ping"), false)
    }

    @Test func aCutConnectionComesBackAtTheBackOffDeadline() async throws {
        let relay = InMemoryRelay()
        _ = try await InMemoryRelayTests.pair(relay)
        let watchID = try #require(await relay.pairedDevice(named: "Watch")).device
        await relay.disconnect(watchID)
        #expect(await relay.stats.connections == 1)
        await relay.advance(by: .seconds(2))
        #expect(await relay.stats.connections == 2)
    }

    /// Nobody calls `advance`: the follower's timer for the relay's reply deadline fails the
    /// unanswered message, and the pairing code expires as the wall moves.
    @Test func followingTheWallRunsDeadlinesWithoutAdvance() async throws {
        var configuration = RelayConfiguration()
        configuration.limits.replyTimeoutMs = 200
        let relay = InMemoryRelay(configuration: configuration)
        await relay.followRealTime()
        let (_, watch) = try await InMemoryRelayTests.pair(relay)
        await #expect(throws: RelaySessionError.self) { try await watch.sendMessage(Payload(kind: "ping"), true) }
        await relay.stopFollowingRealTime()
    }

    @Test func whileFollowingTheWallACommandSeesTheWallsTime() async throws {
        var configuration = RelayConfiguration()
        configuration.pairingCodeTTLms = 100
        let relay = InMemoryRelay(configuration: configuration)
        await relay.followRealTime()
        let phone = await relay.session(role: .phone, deviceName: "iPhone")
        let watch = await relay.session(role: .watch, deviceName: "Watch")
        try await phone.activate()
        try await watch.activate()
        let code = try await phone.beginPairing()
        // No deadline is armed for a code: only the wall's time at the join expires it.
        try await Task.sleep(for: .milliseconds(300))
        await #expect(throws: RelaySessionError.self) { try await watch.pair(code.code) }
        await relay.stopFollowingRealTime()
    }
}
