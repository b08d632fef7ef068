import Foundation
import RelayClient
import TestSupport
import Testing

/// The phone's `uninstall` on a phone with two watches (PROTOCOL.md §6.5, §7.1), as a real
/// process over a real relay: the iPhone app goes for both watches' pairs, not only the active
/// one's, and the answer names the watches whose pair the relay was not told of.
@Suite(.timeLimit(.minutes(3)))
struct MultiWatchUninstallCommandTests {
    @Test func thePhonesUninstallReachesEveryWatchAndItsNextStartOnlyItsOwn() async throws {
        let (relay, state, watchA, watchB) = try await Self.phoneWithTwoWatches()
        let phoneArgs = ["--machine", "--relay", relay.url, "--state", state.path("phone"), "--log-level", "error"]
        let phone = try ChildProcess(phoneArgs)
        defer { phone.terminate() }
        _ = try await phone.line(startingWith: #"{"event":"activated""#)
        phone.type("uninstall")
        let answer = try await phone.line(startingWith: #"{"command":"uninstall""#)
        #expect(answer.contains(#""notTold":[]"#) && answer.contains(#""relayTold":true"#), "\(answer)")
        #expect(try await phone.exitStatus() == 0)
        try await eventually(10, "watch A to see the iPhone app uninstalled") { await !watchA.isPeerAppInstalled }
        try await eventually(10, "watch B (not active) to see it uninstalled") { await !watchB.isPeerAppInstalled }

        // Started again with --watch B: installed again for B's pair only.
        let again = try ChildProcess(phoneArgs + ["--watch", "B"])
        defer { again.terminate() }
        _ = try await again.line(startingWith: #"{"event":"activated""#)
        try await eventually(10, "watch B to see it installed again") { await watchB.isPeerAppInstalled }
        // A round trip of A's after B's hello: A's view is the relay's.
        try await watchA.synchronize()
        #expect(await !watchA.isPeerAppInstalled, "A's pair still has the iPhone app uninstalled")
        again.closeInput()
        #expect(try await again.exitStatus() == 0)
        await watchA.close()
        await watchB.close()
        await relay.stop()
    }

    /// With the relay away nothing can be said for either watch, and the answer names both.
    @Test func anUninstallWhileTheRelayIsAwayNamesEveryWatchNotTold() async throws {
        let (relay, state, watchA, watchB) = try await Self.phoneWithTwoWatches()
        await watchA.close()
        await watchB.close()
        let phone = try ChildProcess([
            "--machine", "--relay", relay.url, "--state", state.path("phone"), "--log-level", "error",
            "--request-timeout-s", "\(2 * timeoutScale)",
        ])
        defer { phone.terminate() }
        _ = try await phone.line(startingWith: #"{"event":"activated""#)
        await relay.stop()
        _ = try await phone.line(startingWith: #"{"event":"disconnected""#)
        phone.type("uninstall")
        let answer = try await phone.line(startingWith: #"{"command":"uninstall""#)
        #expect(answer.contains(#""notTold":["default","B"]"#) && answer.contains(#""relayTold":false"#), "\(answer)")
        #expect(try await phone.exitStatus() == 0)
    }

    /// A relay and a phone state (`phone`) paired with two watches: A as the phone's `default`
    /// identity (the top of the state), B as `watches/B`; the watches' sessions stay activated.
    private static func phoneWithTwoWatches() async throws -> (TestRelay, TemporaryDirectory, RelaySession, RelaySession) {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        func pair(_ phoneDirectory: String, _ watchDirectory: String) async throws -> RelaySession {
            let phone = try RelaySession(
                configuration: RelaySessionConfiguration(url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: phoneDirectory))
            try await phone.activate()
            let code = try await phone.beginPairing()
            let watch = try RelaySession(
                configuration: RelaySessionConfiguration(url: relay.url, role: .watch, deviceName: "Watch", stateDirectory: watchDirectory))
            try await watch.activate()
            try await watch.pair(code: code.code)
            try await eventually(10, "the phone to see the pair") { await phone.isPaired }
            await phone.close()
            return watch
        }
        let watchA = try await pair(state.path("phone"), state.path("watchA"))
        let watchB = try await pair(state.path("phone") + "/watches/B", state.path("watchB"))
        return (relay, state, watchA, watchB)
    }
}
