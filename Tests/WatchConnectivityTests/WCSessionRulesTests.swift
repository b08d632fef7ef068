import Foundation
import Primitives
import RelayServer
import TestSupport
import Testing
@testable import WatchConnectivity

/// WatchConnectivity's rules, end to end through a real relay on loopback.
@Suite(.timeLimit(.minutes(3)))
struct WCSessionRulesTests {
    @Test func activationCompletesOnTheDelegateQueueAndTheStateDirectoriesArePaired() async throws {
        let h = try await WCHarness.start()
        #expect(h.phone.activationState == .activated && h.watch.activationState == .activated)
        #expect(h.phone.isPaired && h.phone.isWatchAppInstalled && h.watch.isCompanionAppInstalled)
        #expect(h.phone.watchDirectoryURL != nil && h.watch.watchDirectoryURL == nil)
        let activation = try #require(h.phoneDelegate.calls.withLock { $0.first })
        #expect(activation.name == "activation" && activation.detail == "2")
        #expect(!activation.onMainThread)
        try await eventually { h.phone.isReachable && h.watch.isReachable }
        await h.stop()
    }

    /// The counterpart that comes while the app is still in `activationDidComplete` (which read
    /// `isReachable` false) is announced by `sessionReachabilityDidChange`: the activation's
    /// refresh took the new value silently, and the relay's own event then found no change, so
    /// an app that enables its send button from that call never did.
    @Test func aCounterpartThatComesDuringActivationIsAnnounced() async throws {
        let release = DispatchSemaphore(value: 0)
        let phoneDelegate = RecordingDelegate(onActivation: { _ in release.wait() })
        let h = try await WCHarness.start(activate: false, phoneDelegate: phoneDelegate)
        h.phone.activate()
        try await eventually { h.phone.activationState == .activated }
        #expect(!h.phone.isReachable)
        try await h.activate(h.watch, h.watchDelegate)
        try await eventually { h.watch.isReachable }
        // The relay told the phone's connection at the same moment; let it read that.
        try await Task.sleep(for: .milliseconds(500))
        release.signal()
        try await eventually { h.phone.isReachable }
        try await waitForCalls(phoneDelegate, "reachability")
        #expect(phoneDelegate.details("reachability") == ["true"])
        await h.stop()
    }

    @Test func sendsBeforeActivationFailWithSessionNotActivated() async throws {
        let h = try await WCHarness.start(activate: false)
        #expect(throws: WCError(.sessionNotActivated)) { try h.phone.updateApplicationContext(["n": 1]) }
        let failed = LockedState<Int?>(nil)
        h.watch.sendMessage(["n": 1], replyHandler: nil) { error in failed.withLock { $0 = (error as? WCError)?.code.rawValue } }
        try await eventually { failed.withLock { $0 } == 7004 }
        await h.stop()
    }

    /// WatchConnectivity hands received transfers only to a delegate. A watch app that sets
    /// its delegate late gets everything that came meanwhile, in order; nothing is acknowledged
    /// (and lost) before. Sends need a delegate too ("A delegate must exist before the session
    /// will allow sends", WCSession.h).
    @Test func transfersWaitForADelegateAndSendsNeedOne() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let watchDelegate = h.watchDelegate
        h.watch.delegate = nil
        #expect(throws: WCError(.sessionMissingDelegate)) { try h.watch.updateApplicationContext(["n": 0]) }
        let missing = LockedState<Int?>(nil)
        h.watch.sendMessage(["n": 0], replyHandler: nil) { error in missing.withLock { $0 = (error as? WCError)?.code.rawValue } }
        try await eventually { missing.withLock { $0 } == 7003 }
        h.watch.activate()
        try await eventually { h.watch.activationState == .activated }
        for n in 1...3 { h.phone.transferUserInfo(["n": n]) }
        try h.phone.updateApplicationContext(["n": 4])
        // The first item reached the watch and waits for its delegate.
        try await eventually { h.watch.hasContentPending }
        #expect(h.phone.outstandingUserInfoTransfers.count == 3)
        h.watch.delegate = watchDelegate
        try await waitForCalls(watchDelegate, "userInfo", count: 3)
        try await waitForCalls(watchDelegate, "context")
        #expect(watchDelegate.details("userInfo") == ["1", "2", "3"])
        #expect(watchDelegate.details("context") == ["4"])
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 3)
        await h.stop()
    }

    @Test func sendMessageWhileTheWatchIsInTheBackgroundFailsWithNotReachable() async throws {
        let h = try await WCHarness.start(watchForeground: false)
        try await eventually { !h.phone.isReachable }
        let failed = LockedState<WCError.Code?>(nil)
        h.phone.sendMessage(["n": 1], replyHandler: { _ in }) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } == .notReachable }
        #expect(h.watchDelegate.details("messageWithReply").isEmpty)
        await h.stop()
    }

    @Test func aWatchMessageWakesABackgroundPhoneButAPhoneMessageNeverWakesTheWatch() async throws {
        // The phone app is in the background (its foreground state is not what makes it
        // reachable); the watch app is in the foreground.
        let h = try await WCHarness.start(phoneForeground: false)
        try await eventually { h.watch.isReachable }
        let reply = LockedState<String?>(nil)
        h.watch.sendMessage(["n": 7], replyHandler: { answer in reply.withLock { $0 = "\(answer["echo"] ?? "")" } })
        try await eventually { reply.withLock { $0 } == "7" }
        #expect(h.phoneDelegate.details("messageWithReply") == ["7"])

        // The watch app goes to the background: the phone can't wake it.
        h.watch.setApplicationForeground(false)
        try await eventually { !h.phone.isReachable }
        try await waitForCalls(h.phoneDelegate, "reachability")
        let failed = LockedState<WCError.Code?>(nil)
        h.phone.sendMessage(["n": 8], replyHandler: nil) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } == .notReachable }
        #expect(h.watchDelegate.details("message").isEmpty)

        // Nor is the phone reachable for a watch app in the background ("the WatchKit extension
        // is running in the foreground", Apple's isReachable): its own messages fail too.
        #expect(!h.watch.isReachable)
        try await waitForCalls(h.watchDelegate, "reachability")
        #expect(h.watchDelegate.details("reachability").last == "false")
        let watchFailed = LockedState<WCError.Code?>(nil)
        h.watch.sendMessage(["n": 9], replyHandler: { _ in }) { error in watchFailed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { watchFailed.withLock { $0 } == .notReachable }
        h.watch.setApplicationForeground(true)
        try await eventually { h.watch.isReachable && h.phone.isReachable }
        #expect(h.watchDelegate.details("reachability").last == "true")
        #expect(h.phoneDelegate.details("messageWithReply") == ["7"])
        await h.stop()
    }

    @Test func messagesWithoutReplyAndMessageDataArriveInOrder() async throws {
        let h = try await WCHarness.start()
        for n in 1...3 { h.watch.sendMessage(["n": n], replyHandler: nil) }
        h.watch.sendMessage(["delete": "octocat"], replyHandler: nil)
        try await waitForCalls(h.phoneDelegate, "message", count: 4)
        #expect(h.phoneDelegate.details("message") == ["1", "2", "3", "delete:octocat"])
        let answer = LockedState<Data?>(nil)
        h.phone.sendMessageData(Data([1, 2, 3]), replyHandler: { data in answer.withLock { $0 = data } })
        try await eventually { answer.withLock { $0 } == Data([3, 2, 1]) }
        await h.stop()
    }

    @Test func aMessageWithReplyToADelegateWithoutTheReplyVariantFailsWithDeliveryFailed() async throws {
        let minimal = MinimalDelegate()
        let h = try await WCHarness.start(phoneApp: minimal, activated: { minimal.activated.withLock { $0 } })
        try await eventually { h.watch.isReachable }
        let failed = LockedState<WCError.Code?>(nil)
        h.watch.sendMessage(["n": 1], replyHandler: { _ in }) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } == .deliveryFailed }
        await h.stop()
    }

    @Test func payloadsOverWatchConnectivitysSizesArePayloadTooLarge() async throws {
        let h = try await WCHarness.start()
        let big = String(repeating: "x", count: 70_000)
        #expect(throws: WCError(.payloadTooLarge)) { try h.phone.updateApplicationContext(["s": String(repeating: "x", count: 270_000)]) }
        try h.phone.updateApplicationContext(["s": big])  // 64 KiB < context limit of 256 KiB
        let failed = LockedState<WCError.Code?>(nil)
        h.phone.sendMessage(["s": big], replyHandler: nil) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } == .payloadTooLarge }
        let transfer = h.phone.transferUserInfo(["s": big])
        try await waitForCalls(h.phoneDelegate, "didFinish")
        #expect(h.phoneDelegate.details("didFinish") == ["7009"])
        #expect(!transfer.isTransferring && h.phone.outstandingUserInfoTransfers.isEmpty)
        try await waitForCalls(h.watchDelegate, "context")
        await h.stop()
    }

    @Test func nonPropertyListValuesArePayloadUnsupportedTypes() async throws {
        let h = try await WCHarness.start()
        #expect(throws: WCError(.payloadUnsupportedTypes)) { try h.phone.updateApplicationContext(["url": URL(fileURLWithPath: "/")]) }
        let failed = LockedState<WCError.Code?>(nil)
        h.watch.sendMessage(["id": UUID()], replyHandler: nil) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } == .payloadUnsupportedTypes }
        let refused = h.watch.transferUserInfo(["null": NSNull(), "n": 1])
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["7010"])
        // The failed transfer's userInfo is the app's dictionary (it was the relay's `kind`
        // and `tid`), and a refused complication transfer spends no budget.
        #expect(refused.userInfo["n"] as? Int == 1 && refused.userInfo["null"] is NSNull && refused.userInfo.count == 2)
        let budget = h.phone.remainingComplicationUserInfoTransfers
        let complication = h.phone.transferCurrentComplicationUserInfo(["null": NSNull()])
        try await waitForCalls(h.phoneDelegate, "didFinish")
        #expect(h.phoneDelegate.details("didFinish") == ["7010"])
        #expect(h.phone.remainingComplicationUserInfoTransfers == budget && !complication.isCurrentComplicationInfo)
        #expect(complication.userInfo.keys.sorted() == ["null"])
        await h.stop()
    }

    /// A reply larger than a message may be fails the sender at once with `payloadTooLarge`
    /// (it was dropped without a word, and the sender waited for its reply timeout).
    @Test func aReplyTooLargeForAMessageFailsTheSenderWithPayloadTooLarge() async throws {
        let h = try await WCHarness.start()
        try await eventually { h.phone.isReachable }
        let failed = LockedState<WCError.Code?>(nil)
        let started = ContinuousClock.now
        h.phone.sendMessage(["replyBytes": 70_000], replyHandler: { _ in }) { error in failed.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failed.withLock { $0 } != nil }
        #expect(failed.withLock { $0 } == .payloadTooLarge)
        #expect(ContinuousClock.now - started < .seconds(10 * timeoutScale), "not the reply timeout")
        // The same for messageData's reply.
        let failedData = LockedState<WCError.Code?>(nil)
        h.phone.sendMessageData(Data("big".utf8), replyHandler: { _ in }) { error in failedData.withLock { $0 = (error as? WCError)?.code } }
        try await eventually { failedData.withLock { $0 } != nil }
        #expect(failedData.withLock { $0 } == .payloadTooLarge)
        // A reply within the limit still arrives.
        let reply = LockedState<Int?>(nil)
        h.phone.sendMessage(["replyBytes": 60_000], replyHandler: { r in reply.withLock { $0 = (r["big"] as? String)?.count } })
        try await eventually { reply.withLock { $0 } == 60_000 }
        await h.stop()
    }

    /// What `isSupported()` says on stderr when it is false: the variable missing or wrong.
    @Test func anEnvironmentThatSelectsNoDeviceSaysWhy() {
        let complete = ["WATCHRELAY_URL": "ws://127.0.0.1:1/v1", "WATCHRELAY_ROLE": "watch", "WATCHRELAY_STATE": "/tmp/w"]
        #expect(WCSessionEnvironment.problem(in: complete) == nil && WCSessionEnvironment(complete) != nil)
        #expect(WCSessionEnvironment.problem(in: [:]) == "WATCHRELAY_URL, WATCHRELAY_ROLE, WATCHRELAY_STATE not set")
        var wrong = complete
        wrong["WATCHRELAY_ROLE"] = "iphone"
        #expect(WCSessionEnvironment.problem(in: wrong) == "WATCHRELAY_ROLE is 'iphone', not phone or watch")
        #expect(WCSessionEnvironment(wrong) == nil)
        wrong["WATCHRELAY_STATE"] = ""
        #expect(WCSessionEnvironment.problem(in: wrong) == "WATCHRELAY_STATE not set")
        // A URL that could never connect (the console's http://, a host left out) selects no
        // device either: the session retried it for ever.
        for url in ["http://127.0.0.1:8765/v1", "127.0.0.1:8765/v1", "ws:///v1"] {
            var bad = complete
            bad["WATCHRELAY_URL"] = url
            #expect(WCSessionEnvironment(bad) == nil, "\(url)")
            #expect(WCSessionEnvironment.problem(in: bad) == "WATCHRELAY_URL is '\(url)', not a ws:// or wss:// URL")
        }
        var secure = complete
        secure["WATCHRELAY_URL"] = "WSS://relay.example:443/v1"
        #expect(WCSessionEnvironment(secure) != nil && WCSessionEnvironment.problem(in: secure) == nil)
    }

    /// An app that activates without asking `isSupported()` (watch apps often don't: sessions are
    /// "always available on watchOS") hears which variable is missing on stderr, not only
    /// `sessionNotSupported` in its activation callback.
    @Test func activatingWithoutADeviceSaysWhichVariableIsMissing() async throws {
        let directory = TemporaryDirectory()
        let probe = try AppProcess(
            "wc-probe", executable: buildDirectory + "/wc-probe", relayURL: "", role: "watch",
            state: directory.path("watch"))
        defer { probe.terminate() }
        let activation = try await probe.line(startingWith: "not activated")
        #expect(activation.contains("sessionNotSupported"), "\(activation)")
        probe.type("quit")
        let result = try await probe.exit()
        #expect(
            result.stderr.contains("activate() fails with sessionNotSupported: WATCHRELAY_URL not set. Start the app with"),
            "\(result.stderr)")
    }

    /// `WATCHRELAY_URL=ws://127.0.0.1:PORT` (the /v1 left out) reaches a relay that closes the
    /// upgrade without a word: the app heard only "no answer from the relay … read failed".
    @Test func aRelayURLWithoutAPathIsSaidWhenTheRelayDoesNotAnswer() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        let url = String(relay.url.dropLast("/v1".count))
        let probe = try AppProcess(
            "wc-probe", executable: buildDirectory + "/wc-probe", relayURL: url, role: "watch",
            state: directory.path("watch"), extra: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
        defer { probe.terminate() }
        try await probe.line(startingWith: "activated")
        probe.type("quit")
        let result = try await probe.exit()
        #expect(
            result.stderr.contains("no answer from the relay at \(url) (WATCHRELAY_URL has no path: the relay's URL ends in /v1)"),
            "\(result.stderr)")
        await relay.shutdown()
    }

    /// `watchrelay pair` run again on the state directories of running apps connects as those
    /// devices, and the relay closes the apps' connections for it (4001). A replaced session
    /// does not connect again; the app only heard its counterpart go unreachable, and its
    /// transfers queued for ever. It says on stderr what happened and what to do.
    @Test func anAppWhoseDeviceAnotherProcessConnectedAsSaysSo() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        func pair() async throws {
            _ = try await WatchRelayPairing.pair(
                relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"),
                requestTimeoutSeconds: 10 * timeoutScale)
        }
        try await pair()
        let probe = try AppProcess(
            "wc-probe", executable: buildDirectory + "/wc-probe", relayURL: relay.url, role: "watch",
            state: directory.path("watch"))
        defer { probe.terminate() }
        try await probe.line(startingWith: "activated")
        try await pair()
        let said = try await probe.errorLine(startingWith: "WatchConnectivity: another process connected to the relay as this device")
        #expect(said.contains(directory.path("watch")) && said.contains("until the app is started again"), "\(said)")
        probe.type("quit")
        _ = try await probe.exit()
        await relay.shutdown()
    }

    /// Sessions and transfers are `NSObject`s, as Apple's: the idioms of iOS code compile and work.
    @Test func sessionsAndTransfersAreEqualOnlyToThemselvesAsNSObjects() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let first = h.phone.transferUserInfo(["n": 1])
        let second = h.phone.transferUserInfo(["n": 2])
        let outstanding = h.phone.outstandingUserInfoTransfers
        #expect(outstanding.contains(first) && outstanding.firstIndex(of: second) == 1)
        #expect(Set(outstanding) == Set([first, second]) && first != second && first.isEqual(first))
        #expect(h.phone == h.phone && h.phone != h.watch && !h.phone.isEqual(h.watch))
        await h.stop()
    }

    @Test func delegateMethodsRunSeriallyInOrderOnOneBackgroundQueue() async throws {
        let slow = RecordingDelegate(userInfoDelay: 0.01)
        let h = try await WCHarness.start(watchDelegate: slow)
        for n in 1...20 { h.phone.transferUserInfo(["n": n]) }
        try h.phone.updateApplicationContext(["n": 99])
        try await waitForCalls(slow, "userInfo", count: 20)
        try await waitForCalls(slow, "context")
        #expect(slow.details("userInfo") == (1...20).map(String.init))
        let calls = slow.calls.withLock { $0 }
        #expect(calls.allSatisfy { !$0.onMainThread })
        #expect(!slow.overlapped.withLock { $0 })
        // All transfers are delivered in the order sent: the context after the 20 userInfos.
        #expect(calls.firstIndex { $0.name == "context" }! > calls.lastIndex { $0.name == "userInfo" }!)
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 20)
        #expect(h.phone.outstandingUserInfoTransfers.isEmpty)
        // As on Apple's, the property is the new context already inside the delegate call (it
        // was set after the call, and this test's read raced it under ThreadSanitizer).
        #expect(slow.receivedContextDuringCall.withLock { $0 } == slow.details("context"))
        #expect(h.watch.receivedApplicationContext["n"] as? Int == 99)
        #expect(h.phone.applicationContext["n"] as? Int == 99)
        await h.stop()
    }

    @Test func complicationTransfersSpendTheBudgetThenFallBackToUserInfo() async throws {
        let h = try await WCHarness.start { $0.relay.limits.complicationsPerDay = 2 }
        #expect(h.phone.isComplicationEnabled && h.phone.remainingComplicationUserInfoTransfers == 2)
        let transfers = (1...3).map { h.phone.transferCurrentComplicationUserInfo(["n": $0]) }
        // One current complication info at a time: the second untags the first (Apple's
        // header); the third went as plain userInfo and untags nothing.
        #expect(transfers.map(\.isCurrentComplicationInfo) == [false, true, false])
        try await waitForCalls(h.watchDelegate, "userInfo", count: 3)
        #expect(Set(h.watchDelegate.details("userInfo")) == ["1", "2", "3"])
        try await eventually { h.phone.remainingComplicationUserInfoTransfers == 0 }
        // The watch can't send complication info.
        h.watch.transferCurrentComplicationUserInfo(["n": 4])
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["7002"])
        await h.stop()
    }

    @Test func aCancelledTransferNeverArrives() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let first = h.phone.transferUserInfo(["n": 1])
        h.phone.transferUserInfo(["n": 2])
        first.cancel()
        #expect(!first.isTransferring && h.phone.outstandingUserInfoTransfers.count == 1)
        // The cancel reaches the relay before the watch comes: the phone's outbox has taken it
        // back there (or never sent it) and sent the other. A watch connecting before that may
        // be given the first (it was on its way; a make test under load saw it arrive).
        let phone = h.phone
        try await eventually(10, "the phone's outbox drained") {
            guard let outbox = phone.parts.withLock({ $0.outbox }) else { return false }
            return try outbox.next() == nil
        }
        #expect(await h.relay.stats.queued == 1)
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(h.phoneDelegate, "didFinish")
        #expect(h.watchDelegate.details("userInfo") == ["2"])
        await h.stop()
    }

    /// A context identical to the last one sent is not sent again, as on a device (the
    /// familiar "didReceiveApplicationContext is not called twice": apps add a timestamp).
    @Test func anIdenticalContextIsNotDeliveredAgain() async throws {
        let h = try await WCHarness.start()
        try h.phone.updateApplicationContext(["n": 1, "s": "same"])
        try await waitForCalls(h.watchDelegate, "context")
        try h.phone.updateApplicationContext(["s": "same", "n": 1])  // the same dictionary
        try h.phone.updateApplicationContext(["n": 2, "s": "same"])
        try await waitForCalls(h.watchDelegate, "context", count: 2)  // (latest wins: else 2 might never go)
        try h.phone.updateApplicationContext(["n": 1, "s": "same"])  // differs from the last (2)
        try await waitForCalls(h.watchDelegate, "context", count: 3)
        try await Task.sleep(for: .milliseconds(200))
        #expect(h.watchDelegate.details("context") == ["1", "2", "1"])
        #expect(h.phone.applicationContext["n"] as? Int == 1)
        await h.stop()
    }

    /// A context the relay refused for good (a full queue) was not sent: the same dictionary,
    /// once there is room, goes (it was skipped as equal to the last one sent).
    @Test func aRefusedContextCanBeSentAgain() async throws {
        let h = try await WCHarness.start(activate: false) { $0.relay.maxQueuedItemsPerDirection = 1 }
        try await h.activate(h.watch, h.watchDelegate)
        h.watch.transferUserInfo(["n": 1])
        try await eventually { h.watch.outstandingUserInfoTransfers.first?.isTransferring == true }
        try await Task.sleep(for: .milliseconds(200))
        try h.watch.updateApplicationContext(["n": 2])  // refused: the direction holds its one item
        try await Task.sleep(for: .milliseconds(300))
        try await h.activate(h.phone, h.phoneDelegate)
        try await waitForCalls(h.phoneDelegate, "userInfo")
        try await waitForCalls(h.watchDelegate, "didFinish")  // acked: room again
        try h.watch.updateApplicationContext(["n": 2])
        try await waitForCalls(h.phoneDelegate, "context")
        #expect(h.phoneDelegate.details("context") == ["2"])
        await h.stop()
    }
}
