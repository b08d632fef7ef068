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
}
