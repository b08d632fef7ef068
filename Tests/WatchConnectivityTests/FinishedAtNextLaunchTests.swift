import Foundation
import RelayClient
import RelayProtocol
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
            let outbox = try Self.watchStore(h)
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
            let outbox = try Self.watchStore(h)
            try outbox.enqueue(
                id: "t-2", channel: .userInfo, payload: try PropertyListPayload.encode(["n": 8], channel: .userInfo))
            #expect(try outbox.accepted("t-2", relayID: "r-2", keep: true))
        }
        await h.watch.close()
        let (again, delegate) = try await Self.launchWatchAgain(h)
        try await Task.sleep(for: .milliseconds(300))
        try await waitForCalls(delegate, "didFinish")
        try await Task.sleep(for: .milliseconds(300))
        #expect(delegate.details("didFinish") == ["8"])
        await again.close()
        await h.stop()
    }

    /// A transfer the relay refused for good while the app was killed before its delegate
    /// heard `didFinish(error)`: the failure is kept (not sent again) and reported at the next
    /// launch with its code. (The row was deleted before the delegate call.)
    @Test func aFailureTheDelegateDidNotHearIsReportedAtTheNextLaunch() async throws {
        let h = try await WCHarness.start(activate: false)
        do {
            let outbox = try Self.watchStore(h)
            try outbox.enqueue(
                id: "t-9", channel: .userInfo, payload: try PropertyListPayload.encode(["n": 9], channel: .userInfo))
            try outbox.failed("t-9", code: WCError.Code.deviceNotPaired.rawValue)
            #expect(try outbox.next() == nil, "a failed transfer is not sent again")
        }
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["\(WCError.Code.deviceNotPaired.rawValue)"])
        #expect(h.watch.outstandingUserInfoTransfers.isEmpty)
        // The row goes once the delegate heard it (just after the call).
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.finishedTransfers(heldByRelaySession: []).isEmpty }
        await h.stop()
    }

    /// File transfers whose `didFinish` the app did not hear: one whose last chunk the relay
    /// reported received (the chunk's row went, the file's record stayed: it was outstanding
    /// forever), one whose last chunk the relay session wrote down as received and the app's
    /// store never heard of, and one that failed.
    @Test func filesFinishedOrFailedWhileTheAppWasKilledAreReportedAtTheNextLaunch() async throws {
        let h = try await WCHarness.start(activate: false)
        do {
            let outbox = try Self.watchStore(h)
            for (id, size) in [("f-1", 10), ("f-2", 20), ("f-3", 30)] {
                let record = SessionOutbox.FileRecord(
                    id: id, url: "file:///tmp/\(id).bin", metadata: nil, size: Int64(size), chunks: 1)
                try outbox.enqueueFile(record, chunks: [Payload(kind: PropertyListPayload.Channel.fileChunk.rawValue, ["fid": .string(id)])])
                #expect(try outbox.accepted("\(id):0", relayID: "r-\(id)", keep: true))
            }
            #expect(try outbox.finished(relayID: "r-f-1")?.id == "f-1:0")
            try outbox.failFile(
                "f-3", chunk: "f-3:0", code: WCError.Code.deviceNotPaired.rawValue,
                notice: Payload(kind: PropertyListPayload.Channel.fileCancel.rawValue, ["fid": .string("f-3")]))
        }
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "fileFinished", count: 3)
        #expect(h.watchDelegate.details("fileFinished") == ["10/10", "20/20", "\(WCError.Code.deviceNotPaired.rawValue)"])
        #expect(h.watch.outstandingFileTransfers.isEmpty)
        // Heard once: the next launch reports none of them again.
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.files().isEmpty }
        await h.watch.close()
        let (again, delegate) = try await Self.launchWatchAgain(h)
        try await Task.sleep(for: .milliseconds(300))
        #expect(delegate.details("fileFinished").isEmpty)
        await again.close()
        await h.stop()
    }

    /// A new watch app process on the watch's state: its session, activated, and its delegate.
    static func launchWatchAgain(_ h: WCHarness) async throws -> (WCSession, RecordingDelegate) {
        let again = WCSession(environment: WCHarness.environment(h.relay, "watch", h.directory.path("watch")))
        let delegate = RecordingDelegate()
        again.delegate = delegate
        try await h.activate(again, delegate)
        return (again, delegate)
    }

    /// The watch's device store, as the next launch will find it.
    static func watchStore(_ h: WCHarness) throws -> SessionOutbox {
        try SessionOutbox(directory: h.directory.path("watch"))
    }

    /// Unpairs from `role`'s side with a session of its own on that side's state (as the
    /// Watch app or `watchrelay` does), while that side's app is not using it.
    static func unpair(_ role: Role, _ h: WCHarness) async throws {
        let session = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: h.relay.url, role: role, deviceName: role.rawValue, stateDirectory: h.directory.path(role.rawValue)))
        try await session.activate()
        try await session.unpair()
        await session.close()
    }

    /// The send ids the watch's relay session holds (outstanding), read from its store.
    static func heldByRelaySession(_ h: WCHarness) async throws -> [String] {
        let session = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: h.relay.url, role: .watch, deviceName: "w", stateDirectory: h.directory.path("watch")))
        let ids = await session.outstandingUserInfoTransfers.map(\.id)
        await session.close()
        return ids
    }

    /// A file that failed while the app was killed before its delegate heard it: reported at the
    /// next launch, and its chunks the relay holds are still taken back (the launch deleted
    /// their rows, so the relay kept delivering chunks of a failed file).
    @Test func aFailedFileReportedAtLaunchStillTakesItsChunksBack() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.watch, h.watchDelegate)
        let file = h.directory.path("f.bin")
        try Data(count: 100_000).write(to: URL(fileURLWithPath: file))  // 3 chunks; the phone is away
        let transfer = h.watch.transferFile(URL(fileURLWithPath: file), metadata: nil)
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.next() == nil }
        await h.watch.close()
        let before = try await Self.heldByRelaySession(h)
        #expect(before.count == 3)
        try outbox.failFile(
            transfer.id, chunk: "\(transfer.id):2", code: WCError.Code.insufficientSpace.rawValue,
            notice: Payload(kind: PropertyListPayload.Channel.fileCancel.rawValue, ["fid": .string(transfer.id)]))
        let (again, delegate) = try await Self.launchWatchAgain(h)
        try await waitForCalls(delegate, "fileFinished")
        #expect(delegate.details("fileFinished") == ["\(WCError.Code.insufficientSpace.rawValue)"])
        try await eventually { try outbox.next() == nil }
        await again.close()
        let after = try await Self.heldByRelaySession(h)
        #expect(before.prefix(2).filter { after.contains($0) }.isEmpty, "chunks never taken back: \(after)")
        await h.stop()
    }

    /// Unpaired while the app was not running, the relay dropped the transfers and files it held
    /// of the pair, and the relay session forgot them: the next launch reports each as failed
    /// with `deviceNotPaired`, not as received (they were: the ids it no longer held were taken
    /// for received).
    @Test func transfersThePairLostWhileTheAppWasAwayFailWithDeviceNotPaired() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.watch, h.watchDelegate)
        let file = h.directory.path("g.bin")
        try Data(count: 10).write(to: URL(fileURLWithPath: file))
        h.watch.transferUserInfo(["n": 5])
        h.watch.transferFile(URL(fileURLWithPath: file), metadata: nil)
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.next() == nil }
        await h.watch.close()
        try await Self.unpair(.watch, h)
        let (again, delegate) = try await Self.launchWatchAgain(h)
        try await waitForCalls(delegate, "didFinish")
        try await waitForCalls(delegate, "fileFinished")
        let notPaired = "\(WCError.Code.deviceNotPaired.rawValue)"
        #expect(delegate.details("didFinish") == [notPaired])
        #expect(delegate.details("fileFinished") == [notPaired])
        #expect(again.outstandingUserInfoTransfers.isEmpty && again.outstandingFileTransfers.isEmpty)
        await again.close()
        await h.stop()
    }

    /// Paired again while the app was not running (`watchrelay pair` on its directory): the new
    /// pair holds none of the old one's transfers, and the relay dropped them with the old pair.
    /// They fail with `deviceNotPaired`, as after an unpair (they were reported received: the new
    /// relay session held none of their ids).
    @Test func transfersOfAPairReplacedWhileTheAppWasAwayFailWithDeviceNotPaired() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.watch, h.watchDelegate)
        h.watch.transferUserInfo(["n": 5])  // the phone app is not running: it waits at the relay
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.next() == nil }
        await h.watch.close()
        _ = try await WatchRelayPairing.pair(
            relayURL: h.relay.url, phoneState: h.directory.path("phone"), watchState: h.directory.path("watch"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let (again, delegate) = try await Self.launchWatchAgain(h)
        try await waitForCalls(delegate, "didFinish")
        #expect(delegate.details("didFinish") == ["\(WCError.Code.deviceNotPaired.rawValue)"])
        #expect(again.outstandingUserInfoTransfers.isEmpty)
        await again.close()
        await h.stop()
    }

    /// The same while the app runs: the phone unpairs, and the watch's transfers the relay held
    /// fail with `deviceNotPaired` at once (nothing reported them at all).
    @Test func transfersThePairLostWhileTheAppRunsFailWithDeviceNotPaired() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.watch, h.watchDelegate)
        h.watch.transferUserInfo(["n": 6])
        let outbox = try Self.watchStore(h)
        try await eventually { try outbox.next() == nil }
        try await Self.unpair(.phone, h)
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(h.watchDelegate.details("didFinish") == ["\(WCError.Code.deviceNotPaired.rawValue)"])
        #expect(h.watch.outstandingUserInfoTransfers.isEmpty)
        await h.stop()
    }
}
