import Foundation
import TestSupport
import Testing
import WatchConnectivity

/// The iPhone app uninstalled on a phone with several watches (PROTOCOL.md §6.5, §7.1): on iOS
/// it is gone for every watch (a watch app is the counterpart of one iPhone app), not only
/// for the active one; a real relay on loopback.
@Suite(.timeLimit(.minutes(3)))
struct MultiWatchUninstallTests {
    @Test func uninstallingThePhoneAppUninstallsItForEveryWatchAndActivatingInstallsItForThatWatchOnly() async throws {
        let h = try await TwoWatchHarness.start()
        try await h.activate(h.phone, h.phoneDelegate)
        try await h.activate(h.watchA, h.watchADelegate)
        try await h.activate(h.watchB, h.watchBDelegate)
        #expect(h.watchA.isCompanionAppInstalled && h.watchB.isCompanionAppInstalled)

        // The phone is connected as watch A's identity; B's is told too.
        #expect(await h.phone.uninstallApp())
        try await eventually(10, "watch A: isCompanionAppInstalled false") { !h.watchA.isCompanionAppInstalled }
        try await eventually(10, "watch B: isCompanionAppInstalled false") { !h.watchB.isCompanionAppInstalled }
        try await waitForCalls(h.watchBDelegate, "companionInstalled")
        #expect(h.watchBDelegate.details("companionInstalled").last == "false")

        // The app runs again, for watch A (the active one): installed again for A's pair only.
        let phone = WCSession(environment: WCHarness.environment(h.relay, "phone", h.directory.path("phone")))
        let phoneDelegate = RecordingDelegate()
        phone.delegate = phoneDelegate
        try await h.activate(phone, phoneDelegate)
        try await eventually(10, "watch A: isCompanionAppInstalled true") { h.watchA.isCompanionAppInstalled }
        // B's own next welcome says what the relay holds for B's pair now.
        await h.watchB.close()
        let watchB = WCSession(environment: WCHarness.environment(h.relay, "watch", h.directory.path("watchB")))
        let watchBDelegate = RecordingDelegate()
        watchB.delegate = watchBDelegate
        try await h.activate(watchB, watchBDelegate)
        #expect(watchB.isPaired && !watchB.isCompanionAppInstalled, "B's pair still has the iPhone app uninstalled")

        // Switched to B, the phone app's activation installs it again for B.
        try await phone.switchWatch(to: "B")
        try await h.activate(phone, phoneDelegate, count: 2)
        try await eventually(10, "watch B: isCompanionAppInstalled true") { watchB.isCompanionAppInstalled }
        #expect(h.watchA.isCompanionAppInstalled)
        await phone.close()
        await watchB.close()
        await h.stop()
    }
}
