import Foundation
import Primitives
import TestSupport
import Testing
import WatchConnectivity

/// `transferFile` as a watch app uses it (``WorkoutRecorder`` sends its recordings,
/// ``RecordingLibrary`` on the phone keeps them), through a real relay, checked against Apple's
/// documented contract: `transferFile(_:metadata:)` ("If the file and its accompanying
/// dictionary can't be sent, the session object calls … didFinish … and reports an error"),
/// `outstandingFileTransfers` ("still transferring (i.e. have not been cancelled, failed, or
/// been received by the counterpart app)"), `session(_:didReceive:)` (the file is deleted when
/// the method returns), `session(_:didFinish:error:)` (on the sender, when the transfer
/// "finished, either successfully or unsuccessfully"), `WCSessionFileTransfer.cancel()`, and
/// the delegate overview's "All transfers are delivered in the order in which they were sent".
@Suite(.timeLimit(.minutes(5)))
struct FileTransferWalkthroughTests {
    /// A date with a fraction of a second, as `Date()` has.
    static func date(_ n: Int) -> Date { Date(timeIntervalSinceReferenceDate: 800_000_000.123_456 + Double(n) * 61.5) }

    /// Three recordings (1 MiB, 3 MiB + 1 byte, and 8 MiB, the largest `transferFile` takes here)
    /// queued while the phone app is not running: outstanding in the order sent, each with its
    /// size as `totalUnitCount` and nothing done; the phone comes, moves each into Documents
    /// byte for byte with its metadata (`Date` equal to the one sent), in the order sent, and its
    /// inbox is gone; the watch hears `didFinish` once per recording, without error, its
    /// progress whole and finished, and nothing is outstanding. `progress` only grows.
    @Test func aWatchSendsItsRecordingsAndThePhoneKeepsEachInDocuments() async throws {
        let h = try await WCHarness.start(activate: false)
        let (recorder, library) = try await h.apps(phoneRunning: false)
        let sizes = [1 << 20, (3 << 20) + 1, WCSession.fileSizeLimit]
        var sent: [(id: String, data: Data)] = []
        var transfers: [WCSessionFileTransfer] = []
        for (n, size) in sizes.enumerated() {
            let (url, data) = try recorder.record("run-\(n)", bytes: size)
            sent.append(("run-\(n)", data))
            transfers.append(recorder.send(url, id: "run-\(n)", takenAt: Self.date(n)))
        }
        #expect(h.watch.outstandingFileTransfers == transfers)
        for (transfer, size) in zip(transfers, sizes) {
            #expect(transfer.isTransferring)
            #expect(transfer.progress.totalUnitCount == Int64(size) && transfer.progress.completedUnitCount == 0)
            #expect(!transfer.progress.isFinished && transfer.progress.fractionCompleted == 0)
        }
        let largest = transfers[2]
        let samples = Task {
            var seen: [Double] = []
            while !Task.isCancelled, seen.last != 1 {
                seen.append(largest.progress.fractionCompleted)
                try? await Task.sleep(for: .milliseconds(5))
            }
            return seen
        }
        try await h.launch(library)
        try await eventually(180, "three didFinish") { recorder.finished.withLock { $0.count } >= 3 }
        samples.cancel()
        let fractions = await samples.value
        #expect(fractions == fractions.sorted(), "progress went back: \(fractions)")

        #expect(recorder.finished.withLock { $0 } == sizes.enumerated().map { n, size in
            WorkoutRecorder.Finished(id: "run-\(n)", code: nil, progress: "\(size)/\(size) true")
        })
        #expect(h.watch.outstandingFileTransfers.isEmpty && transfers.allSatisfy { !$0.isTransferring })
        #expect(largest.progress.fractionCompleted == 1)
        #expect(library.arrivals.withLock { $0 } == sent.map { "file \($0.id)" })
        for (n, (id, data)) in sent.enumerated() {
            #expect(library.stored(id) == data, "\(id) differs")
            #expect(library.takenAt.withLock { $0[id] } == Self.date(n))
        }
        #expect(library.problems.withLock { $0 }.isEmpty)
        let inbox = h.directory.path("phone/WatchConnectivity/Inbox")
        try await eventually { ((try? FileManager.default.contentsOfDirectory(atPath: inbox)) ?? []).isEmpty }
        // Apple: cancelling a transfer that is done "has no effect".
        transfers[0].cancel()
        h.watch.transferUserInfo(["note": "done"])
        try await eventually { library.arrivals.withLock { $0.last } == "note done" }
        #expect(recorder.finished.withLock { $0.count } == 3)
        await h.stop()
    }

    /// Metadata is a dictionary like userInfo's, and Apple sets it no size of its own: a
    /// recording's heart-rate samples (3,000 numbers, about 15 KB) go with a file of several
    /// chunks. (Chunk 0 carried them next to 45,000 of the file's bytes, past userInfo's 64 KiB:
    /// the relay refused it and the transfer failed with `payloadTooLarge` after it was queued.)
    @Test func metadataOfSeveralKilobytesTravelsWithAFileOfManyChunks() async throws {
        let h = try await WCHarness.start(activate: false)
        let (recorder, library) = try await h.apps()
        let (url, data) = try recorder.record("run-hr", bytes: 300_000)
        let rates = (0..<3000).map { 60.5 + Double($0 % 90) }
        let transfer = recorder.send(url, id: "run-hr", takenAt: Self.date(7), extra: ["heartRates": rates])
        try await eventually(60, "didFinish") { !recorder.finished.withLock { $0 }.isEmpty }
        #expect(recorder.finished.withLock { $0 } == [.init(id: "run-hr", code: nil, progress: "300000/300000 true")])
        #expect(library.stored("run-hr") == data)
        #expect(library.heartRates.withLock { $0["run-hr"] } == 3000)
        #expect(!transfer.isTransferring)
        await h.stop()
    }

    /// Cancelling one of three queued recordings: it leaves `outstandingFileTransfers` at once
    /// (the others stay, in order), a second `cancel()` does nothing, and the phone gets the other
    /// two. The cancelled one gets no `didFinish` (as a cancelled userInfo transfer: Apple
    /// documents none for either).
    @Test func cancellingOneOfThreeQueuedRecordingsSendsTheOtherTwo() async throws {
        let h = try await WCHarness.start(activate: false)
        let (recorder, library) = try await h.apps(phoneRunning: false)
        var transfers: [WCSessionFileTransfer] = []
        for n in 0..<3 {
            let (url, _) = try recorder.record("walk-\(n)", bytes: 100_000 * (n + 1))
            transfers.append(recorder.send(url, id: "walk-\(n)", takenAt: Self.date(n)))
        }
        transfers[1].cancel()
        #expect(!transfers[1].isTransferring)
        #expect(h.watch.outstandingFileTransfers == [transfers[0], transfers[2]])
        transfers[1].cancel()
        #expect(h.watch.outstandingFileTransfers == [transfers[0], transfers[2]])
        h.watch.transferUserInfo(["note": "after"])
        try await h.launch(library)
        try await eventually(30, "the note after the files") { library.arrivals.withLock { $0.last } == "note after" }
        #expect(library.arrivals.withLock { $0 } == ["file walk-0", "file walk-2", "note after"])
        try await eventually { recorder.finished.withLock { $0.count } >= 2 }
        #expect(recorder.finishedIDs == ["walk-0", "walk-2"])
        #expect(h.watch.outstandingFileTransfers.isEmpty)
        await h.stop()
    }

    /// Twenty recordings queued at once (the first one empty), a note (userInfo) after each: the
    /// phone hears them in exactly the order sent, files and notes interleaved, every file
    /// whole; the watch hears each `didFinish` once, in order.
    @Test func twentyRecordingsWithANoteAfterEachArriveInTheOrderSent() async throws {
        let h = try await WCHarness.start(activate: false)
        let (recorder, library) = try await h.apps()
        var expected: [String] = []
        var sent: [String: Data] = [:]
        for n in 0..<20 {
            let (url, data) = try recorder.record("lap-\(n)", bytes: n == 0 ? 0 : 20_000 + 37_000 * (n % 7))
            sent["lap-\(n)"] = data
            recorder.send(url, id: "lap-\(n)", takenAt: Self.date(n))
            h.watch.transferUserInfo(["note": n])
            expected += ["file lap-\(n)", "note \(n)"]
        }
        try await eventually(120, "everything") { library.arrivals.withLock { $0.count } >= 40 }
        #expect(library.arrivals.withLock { $0 } == expected)
        for (id, data) in sent { #expect(library.stored(id) == data, "\(id) differs") }
        try await eventually { recorder.finished.withLock { $0.count } >= 20 }
        #expect(recorder.finishedIDs == (0..<20).map { "lap-\($0)" })
        #expect(recorder.finished.withLock { $0 }.allSatisfy { $0.code == nil })
        await h.stop()
    }

    /// The relay restarts while a 6 MiB recording is on its way: the transfer stays outstanding
    /// and resumes; the phone gets the file once, intact, and the watch hears `didFinish` once.
    @Test func aRelayRestartDuringARecordingDeliversItOnceIntact() async throws {
        let h = try await WCHarness.start(activate: false)
        let (recorder, library) = try await h.apps()
        let (url, data) = try recorder.record("swim", bytes: 6 << 20)
        let transfer = recorder.send(url, id: "swim", takenAt: Self.date(1))
        try await eventually(60, "some of the file across") { transfer.progress.completedUnitCount > 0 }
        await h.relay.shutdown()
        let relay = try await h.relayAgain()
        try await eventually(120, "didFinish") { !recorder.finished.withLock { $0 }.isEmpty }
        h.watch.transferUserInfo(["note": "end"])
        try await eventually { library.arrivals.withLock { $0.last } == "note end" }
        #expect(library.arrivals.withLock { $0 } == ["file swim", "note end"])
        #expect(library.stored("swim") == data)
        #expect(recorder.finished.withLock { $0 } == [.init(id: "swim", code: nil, progress: "\(6 << 20)/\(6 << 20) true")])
        await h.stop(relay: relay)
    }
}
