import Foundation
import TestSupport
import Testing

@testable import WatchConnectivity

/// A transfer the counterpart received is reported by `didFinish` even when the app was killed
/// between the relay's `transferred` and the delegate call: at its next launch, as on a device.
/// (The row was deleted before the call, so such a transfer was never reported: the apps' chaos
/// soak found four, `scripts/chaos_soak_apps.py`, "heard finished for every transfer".)
@Suite(.timeLimit(.minutes(3)))
struct FinishedAtNextLaunchTests {
    @Test func aTransferFinishedWhileTheAppWasKilledIsReportedAtTheNextLaunch() async throws {
        let h = try await WCHarness.start(activate: false)
        // What the watch's store holds when a kill came right after the relay's `transferred`:
        // the transfer accepted as `r-1`, then marked received by the counterpart.
        do {
            let outbox = try SessionOutbox(directory: h.directory.path("watch"))
            try outbox.enqueue(
                id: "t-1", channel: .userInfo, payload: try PropertyListPayload.encode(["n": 7], channel: .userInfo))
            #expect(try outbox.accepted("t-1", relayID: "r-1", keep: true))
            #expect(try outbox.finished(relayID: "r-1")?.id == "t-1")
            #expect(try outbox.next() == nil, "a finished transfer is not sent again")
        }
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["7"])
        #expect(h.watch.outstandingUserInfoTransfers.isEmpty)
        // Heard once: the launch after does not report it again, and `r-2`, which the relay
        // session never held (its `transferred` was written down there, then the app was
        // killed), is reported at that launch.
        do {
            let outbox = try SessionOutbox(directory: h.directory.path("watch"))
            try outbox.enqueue(
                id: "t-2", channel: .userInfo, payload: try PropertyListPayload.encode(["n": 8], channel: .userInfo))
            #expect(try outbox.accepted("t-2", relayID: "r-2", keep: true))
        }
        await h.watch.close()
        let again = WCSession(environment: WCHarness.environment(h.relay, "watch", h.directory.path("watch")))
        let delegate = RecordingDelegate()
        again.delegate = delegate
        try await h.activate(again, delegate)
        try await Task.sleep(for: .milliseconds(300))
        try await waitForCalls(delegate, "didFinish")
        try await Task.sleep(for: .milliseconds(300))
        #expect(delegate.details("didFinish") == ["8"])
        await again.close()
        await h.stop()
    }
}
