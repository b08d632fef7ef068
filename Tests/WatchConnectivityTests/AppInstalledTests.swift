import Foundation
import Primitives
import RelayServer
import TestSupport
import Testing
import WatchConnectivity

/// The counterpart app uninstalled and installed again (PROTOCOL.md §7.1), through a real relay
/// (lws, SQLite): `isWatchAppInstalled` / `isCompanionAppInstalled`, their delegate calls, and
/// sends failing with `watchAppNotInstalled` (7006) / `companionAppNotInstalled` (7018).
@Suite(.timeLimit(.minutes(3)))
struct AppInstalledTests {
    /// Phone side: the watch app goes, the phone hears `sessionWatchStateDidChange` with
    /// `isWatchAppInstalled` false (still paired), every send fails with 7006, and the flag
    /// survives a relay restart; the watch app running again installs it (and sends go).
    @Test func thePhoneSeesTheWatchAppUninstalledAcrossARestartAndInstalledAgain() async throws {
        let h = try await WCHarness.start()
        #expect(h.phone.isWatchAppInstalled)
        await h.watch.uninstallApp()
        try await eventually(10, "isWatchAppInstalled false") { !h.phone.isWatchAppInstalled }
        #expect(h.phone.isPaired, "still paired: only the app went")
        try await waitForCalls(h.phoneDelegate, "watchState")

        let messageError = LockedState<Int?>(nil)
        h.phone.sendMessage(["n": 1], replyHandler: nil) { error in
            messageError.withLock { $0 = (error as? WCError)?.code.rawValue }
        }
        try await eventually(10, "sendMessage's errorHandler") { messageError.withLock { $0 } != nil }
        #expect(messageError.withLock { $0 } == 7006)
        #expect(throws: WCError(.watchAppNotInstalled)) { try h.phone.updateApplicationContext(["n": 2]) }
        h.phone.transferUserInfo(["n": 3])
        try await waitForCalls(h.phoneDelegate, "didFinish")
        #expect(h.phoneDelegate.details("didFinish") == ["7006"])
        #expect(h.phone.activationState == .activated, "the session stays usable")
        // Too large is said first, as the relay does (PROTOCOL.md §4.1: the size, then the app).
        let tooLarge = String(repeating: "x", count: 300 * 1024)
        #expect(throws: WCError(.payloadTooLarge)) { try h.phone.updateApplicationContext(["big": tooLarge]) }
        let largeMessageError = LockedState<Int?>(nil)
        h.phone.sendMessage(["big": tooLarge], replyHandler: nil) { error in
            largeMessageError.withLock { $0 = (error as? WCError)?.code.rawValue }
        }
        try await eventually(10, "the large message's errorHandler") { largeMessageError.withLock { $0 } != nil }
        #expect(largeMessageError.withLock { $0 } == 7009)

        // A restarted relay still knows: a phone app started after it reads the flag at activation.
        await h.phone.close()
        await h.relay.shutdown()
        let relay = try await h.relayAgain()
        let phone = WCSession(environment: WCHarness.environment(relay, "phone", h.directory.path("phone")))
        let phoneDelegate = RecordingDelegate()
        phone.delegate = phoneDelegate
        try await h.activate(phone, phoneDelegate)
        #expect(phone.isPaired && !phone.isWatchAppInstalled)

        // The watch app runs again: installed, announced, and transfers reach it.
        let watch = WCSession(environment: WCHarness.environment(relay, "watch", h.directory.path("watch")))
        let watchDelegate = RecordingDelegate()
        watch.delegate = watchDelegate
        try await h.activate(watch, watchDelegate)
        try await eventually(10, "isWatchAppInstalled true") { phone.isWatchAppInstalled }
        try await waitForCalls(phoneDelegate, "watchState")
        phone.transferUserInfo(["n": 4])
        try await waitForCalls(watchDelegate, "userInfo")
        #expect(watchDelegate.details("userInfo") == ["4"])
        await phone.close()
        await watch.close()
        await relay.shutdown()
    }

    /// Watch side, the mirror: the phone app goes, the watch hears
    /// `sessionCompanionAppInstalledDidChange` with `isCompanionAppInstalled` false, its sends
    /// fail with 7018; the phone app running again installs it.
    @Test func theWatchSeesTheCompanionAppUninstalledAndInstalledAgain() async throws {
        let h = try await WCHarness.start()
        #expect(h.watch.isCompanionAppInstalled)
        await h.phone.uninstallApp()
        try await eventually(10, "isCompanionAppInstalled false") { !h.watch.isCompanionAppInstalled }
        try await waitForCalls(h.watchDelegate, "companionInstalled")
        #expect(h.watchDelegate.details("companionInstalled").last == "false")
        #expect(throws: WCError(.companionAppNotInstalled)) { try h.watch.updateApplicationContext(["n": 1]) }
        h.watch.transferUserInfo(["n": 2])
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["7018"])

        let phone = WCSession(environment: WCHarness.environment(h.relay, "phone", h.directory.path("phone")))
        let phoneDelegate = RecordingDelegate()
        phone.delegate = phoneDelegate
        try await h.activate(phone, phoneDelegate)
        try await eventually(10, "isCompanionAppInstalled true") { h.watch.isCompanionAppInstalled }
        try await waitForCalls(h.watchDelegate, "companionInstalled", count: 2)
        #expect(h.watchDelegate.details("companionInstalled").last == "true")
        h.watch.transferUserInfo(["n": 3])
        try await waitForCalls(phoneDelegate, "userInfo")
        await phone.close()
        await h.watch.close()
        await h.relay.shutdown()
    }
}
