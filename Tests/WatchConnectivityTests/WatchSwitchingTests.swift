import Foundation
import RelayServer
import TestSupport
import Testing
import WatchConnectivity
import Primitives

/// A phone paired with two watches: watch A (the phone's `default` watch) and watch B (added
/// with a watch id), one relay on loopback.
struct TwoWatchHarness: Sendable {
    let relay: RelayServer
    let directory: TemporaryDirectory
    let phone: WCSession
    let watchA: WCSession
    let watchB: WCSession
    let phoneDelegate: RecordingDelegate
    let watchADelegate = RecordingDelegate()
    let watchBDelegate = RecordingDelegate()

    static func start(phoneDelegate: RecordingDelegate = RecordingDelegate()) async throws -> TwoWatchHarness {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watchA"),
            requestTimeoutSeconds: 10 * timeoutScale)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watchB"),
            watchName: "Second Watch", requestTimeoutSeconds: 10 * timeoutScale, watchID: "B")
        let h = TwoWatchHarness(
            relay: relay, directory: directory,
            phone: WCSession(environment: WCHarness.environment(relay, "phone", directory.path("phone"))),
            watchA: WCSession(environment: WCHarness.environment(relay, "watch", directory.path("watchA"))),
            watchB: WCSession(environment: WCHarness.environment(relay, "watch", directory.path("watchB"))),
            phoneDelegate: phoneDelegate)
        h.phone.delegate = phoneDelegate
        h.watchA.delegate = h.watchADelegate
        h.watchB.delegate = h.watchBDelegate
        return h
    }

    /// Activates `session` and waits for its `count`-th `activationDidComplete`.
    func activate(_ session: WCSession, _ delegate: RecordingDelegate, count: Int = 1) async throws {
        session.activate()
        try await waitForCalls(delegate, "activation", count: count)
    }

    func stop() async {
        await phone.close()
        await watchA.close()
        await watchB.close()
        await relay.shutdown()
    }
}

/// Watch switching on the phone, in Apple's order, through a real relay (PROTOCOL.md §6.5).
@Suite(.timeLimit(.minutes(3)))
struct WatchSwitchingTests {
    @Test func switchingGoesInactiveThenDeactivatedAndTheNextActivationIsTheNewWatch() async throws {
        let h = try await TwoWatchHarness.start()
        #expect(h.phone.activeWatchID == "default")
        try await h.activate(h.phone, h.phoneDelegate)
        let directoryA = try #require(h.phone.watchDirectoryURL)
        #expect(directoryA.path == h.directory.path("phone") + "/WatchDirectory")
        #expect(h.phone.isPaired && h.phone.isWatchAppInstalled)

        try await h.phone.switchWatch(to: "B")
        #expect(h.phone.activationState == .notActivated)
        #expect(h.phone.watchDirectoryURL == nil)
        #expect(h.phone.activeWatchID == "B")
        try await h.activate(h.phone, h.phoneDelegate, count: 2)
        try await waitForCalls(h.phoneDelegate, "watchState")
        let order = h.phoneDelegate.names().filter { ["activation", "inactive", "deactivate", "watchState"].contains($0) }
        #expect(order == ["activation", "inactive", "deactivate", "activation", "watchState"])
        // The delegate saw `.inactive` during the first call and `.notActivated` during the second.
        #expect(h.phoneDelegate.details("inactive") == ["1"] && h.phoneDelegate.details("deactivate") == ["0"])
        #expect(h.phoneDelegate.calls.withLock { $0.allSatisfy { !$0.onMainThread } })

        // Per watch: B's directory, B paired.
        let directoryB = try #require(h.phone.watchDirectoryURL)
        #expect(directoryB.path == h.directory.path("phone") + "/watches/B/WatchDirectory")
        #expect(h.phoneDelegate.details("watchState") == ["true,\(directoryB.path)"])
        #expect(h.phone.isPaired && h.phone.isWatchAppInstalled)
        await h.stop()
    }

    @Test func newTransfersWhileInactiveFailWithSessionInactive() async throws {
        let contextError = LockedState<Int?>(nil)
        let messageError = LockedState<Int?>(nil)
        let delegate = RecordingDelegate(whileInactive: { session in
            do {
                try session.updateApplicationContext(["n": 1])
            } catch {
                contextError.withLock { $0 = (error as? WCError)?.code.rawValue }
            }
            session.sendMessage(["n": 2], replyHandler: nil) { error in
                messageError.withLock { $0 = (error as? WCError)?.code.rawValue }
            }
            session.transferUserInfo(["n": 3])
        })
        let h = try await TwoWatchHarness.start(phoneDelegate: delegate)
        try await h.activate(h.phone, delegate)
        try await h.phone.switchWatch(to: "B")
        #expect(contextError.withLock { $0 } == 7016)
        try await eventually { messageError.withLock { $0 } == 7016 }
        try await waitForCalls(delegate, "didFinish")
        #expect(delegate.details("didFinish") == ["7016"])
        await h.stop()
    }

    @Test func userInfoQueuedBeforeTheSwitchReachesTheOldWatchAndNothingOfTheNewWatchsReachesIt() async throws {
        let h = try await TwoWatchHarness.start()
        try await h.activate(h.phone, h.phoneDelegate)
        // Watch A is not running: what the phone queues for it waits at the relay.
        for n in 1...3 { h.phone.transferUserInfo(["n": n]) }
        try h.phone.updateApplicationContext(["n": 10])
        try await h.phone.switchWatch(to: "B")
        try await h.activate(h.phone, h.phoneDelegate, count: 2)
        #expect(h.phone.outstandingUserInfoTransfers.isEmpty, "A's transfers are A's")
        for n in 4...5 { h.phone.transferUserInfo(["n": n]) }
        try h.phone.updateApplicationContext(["n": 20])

        try await h.activate(h.watchB, h.watchBDelegate)
        try await waitForCalls(h.watchBDelegate, "userInfo", count: 2)
        try await waitForCalls(h.watchBDelegate, "context")
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 2)
        #expect(h.phoneDelegate.details("didFinish") == ["4", "5"])

        try await h.activate(h.watchA, h.watchADelegate)
        try await waitForCalls(h.watchADelegate, "userInfo", count: 3)
        try await waitForCalls(h.watchADelegate, "context")
        // Watch A is reachable only for the phone's A identity, which is not connected.
        #expect(!h.watchA.isReachable)

        // Back to A: its transfers finish now.
        try await h.phone.switchWatch(to: PhoneWatches.defaultID)
        try await h.activate(h.phone, h.phoneDelegate, count: 3)
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 5)
        #expect(h.phoneDelegate.details("didFinish") == ["4", "5", "1", "2", "3"])

        #expect(h.watchADelegate.details("userInfo") == ["1", "2", "3"])
        #expect(h.watchADelegate.details("context") == ["10"])
        #expect(h.watchBDelegate.details("userInfo") == ["4", "5"])
        #expect(h.watchBDelegate.details("context") == ["20"])
        await h.stop()
    }

    @Test func anAppThatActivatesAgainInSessionDidDeactivateGetsTheNewWatch() async throws {
        // Apple's sample: `func sessionDidDeactivate(_ session: WCSession) { session.activate() }`.
        let delegate = RecordingDelegate(onDeactivate: { $0.activate() })
        let h = try await TwoWatchHarness.start(phoneDelegate: delegate)
        try await h.activate(h.phone, delegate)
        try await h.phone.switchWatch(to: "B")
        try await waitForCalls(delegate, "activation", count: 2)
        try await waitForCalls(delegate, "watchState")
        #expect(h.phone.activationState == .activated)
        try await h.activate(h.watchB, h.watchBDelegate)
        try await eventually { h.phone.isReachable }
        let reply = LockedState<String?>(nil)
        h.phone.sendMessage(["n": 9], replyHandler: { answer in reply.withLock { $0 = "\(answer["echo"] ?? "")" } })
        try await eventually { reply.withLock { $0 } == "9" }
        #expect(h.watchBDelegate.details("messageWithReply") == ["9"])
        #expect(h.watchADelegate.calls.withLock { $0.isEmpty }, "watch A never ran")
        await h.stop()
    }

    @Test func watchrelaySwitchWatchFromAnotherProcessSwitchesTheRunningPhoneApp() async throws {
        let delegate = RecordingDelegate(onDeactivate: { $0.activate() })
        let h = try await TwoWatchHarness.start(phoneDelegate: delegate)
        try await h.activate(h.phone, delegate)
        let cli = try AppProcess(
            "watchrelay switch-watch", executable: watchrelayBinary,
            arguments: ["switch-watch", "--phone-state", h.directory.path("phone"), "--watch-id", "B", "--json"])
        let line = try await cli.line(startingWith: "{")
        #expect(try await cli.exit().status == 0)
        #expect(line == #"{"activeWatch":"B","watches":["default","B"]}"#)
        // As iOS tells the app the user switched watches: inactive, deactivated, activated again.
        try await waitForCalls(delegate, "activation", count: 2)
        try await waitForCalls(delegate, "watchState")
        let order = delegate.names().filter { ["activation", "inactive", "deactivate", "watchState"].contains($0) }
        #expect(order == ["activation", "inactive", "deactivate", "activation", "watchState"])
        #expect(h.phone.watchDirectoryURL?.path == h.directory.path("phone") + "/watches/B/WatchDirectory")
        // A watch the phone has no state for is refused, and changes nothing.
        let unknown = try AppProcess(
            "watchrelay switch-watch", executable: watchrelayBinary,
            arguments: ["switch-watch", "--phone-state", h.directory.path("phone"), "--watch-id", "C"])
        let refused = try await unknown.exit()
        #expect(refused.status == 1 && refused.stderr.contains("no watch 'C'"))
        #expect(h.phone.activeWatchID == "B")
        // A mistyped state path is refused too, not listed as a phone without watches.
        let typo = h.directory.path("phnoe")
        let mistyped = try await AppProcess(
            "watchrelay switch-watch", executable: watchrelayBinary, arguments: ["switch-watch", "--phone-state", typo, "--list"]
        ).exit()
        #expect(mistyped.status == 1 && mistyped.stderr.contains("\(typo) does not exist"), "\(mistyped)")
        #expect(!FileManager.default.fileExists(atPath: typo))
        await h.stop()
    }

    /// Another process chooses watch B just as the phone app finishes activating on the
    /// default one (here: inside `activationDidCompleteWith`, before the session looks for
    /// choices): the running app still follows it to B.
    @Test func aChoiceWrittenWhileThePhoneAppActivatesIsFollowed() async throws {
        let root = LockedState<String?>(nil)
        let delegate = RecordingDelegate(
            onDeactivate: { $0.activate() },
            onActivation: { _ in
                guard let path = root.withLock({ p -> String? in defer { p = nil }; return p }) else { return }
                try? PhoneWatches(root: path).setActive("B")
            })
        let h = try await TwoWatchHarness.start(phoneDelegate: delegate)
        root.withLock { $0 = h.directory.path("phone") }
        try await h.activate(h.phone, delegate)
        #expect(h.phone.activeWatchID == "B", "written during the first activation")
        try await waitForCalls(delegate, "activation", count: 2)
        try await waitForCalls(delegate, "watchState")
        #expect(h.phone.watchDirectoryURL?.path == h.directory.path("phone") + "/watches/B/WatchDirectory")
        await h.stop()
    }

    @Test func watchrelayPairWithAWatchIDAddsAWatchAndActivateChoosesIt() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        func pair(_ extra: [String]) async throws -> [String: String] {
            let process = try AppProcess(
                "watchrelay pair", executable: watchrelayBinary,
                arguments: ["pair", "--relay", relay.url, "--phone-state", directory.path("phone"), "--json"] + extra)
            let line = try await process.line(startingWith: "{")
            let exit = try await process.exit()
            #expect(exit.status == 0 && !exit.signalled, "\(exit.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        }
        let first = try await pair(["--watch-state", directory.path("watchA")])
        #expect(first["watchId"] == "default" && first["activeWatch"] == "default")
        let second = try await pair(["--watch-state", directory.path("watchB"), "--watch-id", "B"])
        #expect(second["watchId"] == "B" && second["activeWatch"] == "default", "adding keeps the active watch")
        #expect(second["pairId"] != first["pairId"])
        let third = try await pair(["--watch-state", directory.path("watchC"), "--watch-id", "C", "--activate"])
        #expect(third["activeWatch"] == "C")
        #expect(PhoneWatches(root: directory.path("phone")).ids == ["default", "B", "C"])
        let stats = await relay.stats
        #expect(stats.pairs == 3, "the phone's three watches are three pairs")
        await relay.shutdown()
    }

    @Test func aFailedPairingLeavesNoWatchBehindAndTheNextOneIsActive() async throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("phone"), withIntermediateDirectories: true)
        try Data("keep\n".utf8).write(to: URL(fileURLWithPath: directory.path("phone") + "/notes.txt"))
        // Nothing listens on port 1: every step fails, here at the connect.
        await #expect(throws: (any Error).self) {
            try await WatchRelayPairing.pair(
                relayURL: "ws://127.0.0.1:1/v1", phoneState: directory.path("phone"), watchState: directory.path("new/watchB"),
                requestTimeoutSeconds: 1, watchID: "B")
        }
        let fm = FileManager.default
        #expect(PhoneWatches(root: directory.path("phone")).ids.isEmpty, "an unpaired store would count as a watch")
        #expect(!fm.fileExists(atPath: directory.path("phone") + "/watches"))
        #expect(!fm.fileExists(atPath: directory.path("new")), "directories the pairing created are gone")
        #expect(fm.fileExists(atPath: directory.path("phone") + "/notes.txt"), "what was there stays")

        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("new/watchB"), watchID: "B")
        let watches = PhoneWatches(root: directory.path("phone"))
        #expect(watches.ids == ["B"] && watches.activeID == "B", "the phone's first watch is its active one")
        // A paired phone that fails to pair again keeps its store.
        await relay.shutdown()
        await #expect(throws: (any Error).self) {
            try await WatchRelayPairing.pair(
                relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watchC"),
                requestTimeoutSeconds: 1, watchID: "B")
        }
        #expect(fm.fileExists(atPath: directory.path("phone") + "/watches/B/session.db"))
        #expect(!fm.fileExists(atPath: directory.path("watchC")))
        #expect(PhoneWatches(root: directory.path("phone")).ids == ["B"])
        // What was there stays even when it looks new: a store that is a dangling link.
        try fm.createDirectory(atPath: directory.path("watchD"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: directory.path("elsewhere"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: directory.path("watchD") + "/session.db", withDestinationPath: directory.path("elsewhere") + "/real.db")
        await #expect(throws: (any Error).self) {
            try await WatchRelayPairing.pair(
                relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watchD"),
                requestTimeoutSeconds: 1, watchID: "D")
        }
        #expect((try? fm.destinationOfSymbolicLink(atPath: directory.path("watchD") + "/session.db")) != nil, "the link is the user's")
        #expect(!fm.fileExists(atPath: directory.path("phone") + "/watches/D"))
    }

    @Test func switchingToAWatchThePhoneHasNoStateForIsRefused() async throws {
        let h = try await TwoWatchHarness.start()
        await #expect(throws: WCError(.deviceNotPaired)) { try await h.phone.switchWatch(to: "C") }
        await #expect(throws: WCError(.invalidParameter)) { try await h.phone.switchWatch(to: "../x") }
        await #expect(throws: WCError(.sessionNotSupported)) { try await h.watchA.switchWatch(to: "B") }
        #expect(h.phone.activeWatchID == "default")
        await h.stop()
    }
}
