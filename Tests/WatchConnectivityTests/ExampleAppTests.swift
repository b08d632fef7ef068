import Foundation
import RelayServer
import TestSupport
import Testing
import WatchConnectivity

/// The seed app's WatchConnectivity code (Examples/GitExplorer), written as for iOS/watchOS,
/// built unchanged against this module as a child package, and run as processes through a
/// relay: the fixed service works; the unfixed one dies the way the iOS app died.
@Suite(.serialized, .timeLimit(.minutes(15)))
struct ExampleAppTests {
    @Test func theExampleBuildsWithDefaultMainActorIsolationAndNoWarnings() async throws {
        let products = try await ExampleBuild.shared.products()
        #expect(!products.log.contains("warning:"), "\(products.log)")
        let manifest = try String(contentsOf: repositoryRoot.appendingPathComponent("Examples/GitExplorer/Package.swift"), encoding: .utf8)
        #expect(manifest.contains(".defaultIsolation(MainActor.self)") && manifest.hasPrefix("// swift-tools-version:6.2"))
    }

    @Test func theSeedsDelegateWithoutNonisolatedTrapsWhenTheBackgroundQueueCallsIt() async throws {
        let bin = try await ExampleBuild.shared.products().binDirectory
        let (relay, directory) = try await pairedRelay()
        let app = try AppProcess(
            "SeedCrash", executable: bin + "/SeedCrash", relayURL: relay.url, role: "phone", state: directory.path("phone"))
        defer { app.terminate() }
        let result = try await app.exit()
        let output = app.takeLines()
        // Killed by Swift's isolation check (SIGILL / SIGTRAP), before the method body ran.
        #expect(result.signalled && [SIGILL, SIGTRAP].contains(result.status), "status \(result.status)")
        #expect(!output.contains("activation reached the delegate") && !output.contains { $0.hasPrefix("still running") })
        #expect(result.stderr.contains("WatchConnectivityService conforms to WCSessionDelegate isolated to the main actor"))
        if result.stderr.contains("Backtracing") {
            // Swift's backtracer ran: the seed's symptom, the executor check failing in libdispatch.
            #expect(result.stderr.contains("_dispatch_assert_queue_fail"))
        }
        await relay.shutdown()
    }

    @Test func theFixedServiceSyncsFavoritesAndDeletesFromTheWatchAsTwoProcesses() async throws {
        let bin = try await ExampleBuild.shared.products().binDirectory
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        // Pairing is a setup step outside the apps, as on a real phone: `watchrelay pair`.
        let pair = try AppProcess(
            "watchrelay pair", executable: watchrelayBinary,
            arguments: ["pair", "--relay", relay.url, "--phone-state", directory.path("phone"), "--watch-state", directory.path("watch")])
        let paired = try await pair.exit()
        #expect(paired.status == 0 && !paired.signalled, "\(paired.stderr)")

        let phone = try AppProcess(
            "GitExplorerPhone", executable: bin + "/GitExplorerPhone", relayURL: relay.url, role: "phone",
            state: directory.path("phone"))
        let watch = try AppProcess(
            "GitExplorerWatch", executable: bin + "/GitExplorerWatch", relayURL: relay.url, role: "watch",
            state: directory.path("watch"))
        defer {
            phone.terminate()
            watch.terminate()
        }
        try await phone.line(startingWith: "activated")
        try await watch.line(startingWith: "activated")
        phone.type("add octocat")
        phone.type("add torvalds")
        try await watch.line(startingWith: "favorites octocat,torvalds")
        // Delete from the watch: a message with the "delete" key; the phone's new list comes back.
        watch.type("delete octocat")
        try await phone.line(startingWith: "favorites torvalds")
        try await watch.line(startingWith: "favorites torvalds")
        phone.type("quit")
        watch.type("quit")
        #expect(try await phone.exit().status == 0)
        #expect(try await watch.exit().status == 0)
        await relay.shutdown()
    }

    @Test func handlersWithApplesTypesCompileAndRunOnTheSessionsQueue() async throws {
        // HandlerPatterns: a protocol over WCSession with Apple's signatures, a nonisolated
        // connector whose handlers capture `self`, a handler kept in a property. None of them
        // compiled while the handlers were `@Sendable`; the build above is half the test.
        let bin = try await ExampleBuild.shared.products().binDirectory
        let (relay, directory) = try await pairedRelay()
        let app = try AppProcess(
            "HandlerPatterns", executable: bin + "/HandlerPatterns", relayURL: relay.url, role: "phone",
            state: directory.path("phone"))
        defer { app.terminate() }
        let result = try await app.exit()
        let output = app.takeLines()
        #expect(result.status == 0 && !result.signalled, "\(result.stderr)")
        #expect(output.contains("reachable: false"), "\(output)")
        #expect(output.contains("message: WCError 7007, on main thread: false"), "\(output)")
        #expect(output.contains("data: WCError 7007, on main thread: false"), "\(output)")
        await relay.shutdown()
    }

    /// A newcomer's two silent mistakes say what they are on stderr: a role the environment
    /// misspells (`isSupported()` false, as on an iPad) and a state directory never paired.
    @Test func aMisspelledRoleAndAnUnpairedStateDirectorySayWhyOnStderr() async throws {
        let bin = try await ExampleBuild.shared.products().binDirectory
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        func phoneApp(role: String, state: String) throws -> AppProcess {
            try AppProcess(
                "GitExplorerPhone", executable: bin + "/GitExplorerPhone", relayURL: relay.url, role: role,
                state: directory.path(state))
        }
        let misspelled = try phoneApp(role: "iphone", state: "phone")
        defer { misspelled.terminate() }
        misspelled.type("quit")
        let refused = try await misspelled.exit()
        #expect(refused.stderr.contains("WCSession.isSupported() is false: WATCHRELAY_ROLE is 'iphone', not phone or watch"), "\(refused.stderr)")
        let unpaired = try phoneApp(role: "phone", state: "typo")
        defer { unpaired.terminate() }
        try await unpaired.line(startingWith: "activated")
        unpaired.type("quit")
        let result = try await unpaired.exit()
        #expect(result.stderr.contains("the device state in \(directory.path("typo")) is not paired"), "\(result.stderr)")
        await relay.shutdown()
    }

    @Test func aDeleteFromTheWatchWhileThePhoneIsAwayArrivesByUserInfo() async throws {
        let bin = try await ExampleBuild.shared.products().binDirectory
        let (relay, directory) = try await pairedRelay()
        var phone = try AppProcess(
            "GitExplorerPhone", executable: bin + "/GitExplorerPhone", relayURL: relay.url, role: "phone",
            state: directory.path("phone"))
        let watch = try AppProcess(
            "GitExplorerWatch", executable: bin + "/GitExplorerWatch", relayURL: relay.url, role: "watch",
            state: directory.path("watch"))
        defer { watch.terminate() }
        try await phone.line(startingWith: "activated")
        phone.type("add octocat")
        try await watch.line(startingWith: "favorites octocat")
        phone.type("quit")
        _ = try await phone.exit()
        // The phone app is gone: the watch's delete goes as a queued user info transfer.
        try await watch.line(startingWith: "phone reachable: false")
        watch.type("delete octocat")
        phone = try AppProcess(
            "GitExplorerPhone", executable: bin + "/GitExplorerPhone", relayURL: relay.url, role: "phone",
            state: directory.path("phone"))
        defer { phone.terminate() }
        // The restarted phone gets the queued delete (its favorites live in memory in the
        // example, so there is nothing left to remove).
        try await phone.line(startingWith: "remove octocat")
        phone.type("quit")
        #expect(try await phone.exit().status == 0)
        await relay.shutdown()
    }

    private func pairedRelay() async throws -> (RelayServer, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"))
        return (relay, directory)
    }
}
