import Foundation
import Primitives
import TestSupport
import Testing
import WatchConnectivity

/// A receiver that can't store a file's chunk or assemble the file: nothing is acknowledged or
/// reported received, the relay delivers the chunk again (the receiver reconnects) until the
/// cause is gone, and then the file arrives once, before what was sent after it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct FileTransferInboxFailureTests {
    /// Makes `<phone state>/WatchConnectivity/<name>` a plain file, where the receiver needs a
    /// directory; returns its path.
    static func blockPhoneDirectory(_ name: String, _ h: WCHarness) throws -> String {
        let root = h.directory.path("phone") + "/WatchConnectivity"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let path = root + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        return path
    }

    /// Waits until the phone released the chunk at least once (its connection dropped, so the
    /// watch heard it unreachable: nothing else in these tests drops it), or until `delegate`
    /// had a call named `instead` (what the defect did).
    static func waitForARelease(_ h: WCHarness, or instead: String, of delegate: RecordingDelegate) async throws {
        let watchCalls = h.watchDelegate.calls
        let calls = delegate.calls
        try await eventually(20, "the phone reconnecting to have the chunk again, or \(instead)") {
            watchCalls.withLock { $0.contains { $0.name == "reachability" && $0.detail == "false" } }
                || calls.withLock { $0.contains { $0.name == instead } }
        }
    }

    /// Before: the chunk stayed unacknowledged, was skipped as handled when it came again, and
    /// held every later ack below it (the userInfo sent after it never finished).
    @Test func aChunkThatCannotBeStoredComesAgainOnceItCanBeAndHoldsNoLaterAck() async throws {
        let kept = TemporaryDirectory()
        let h = try await WCHarness.start(phoneDelegate: RecordingDelegate(moveFilesTo: kept.path))
        let blocked = try Self.blockPhoneDirectory("Partial", h)
        let (url, data) = try FileTransferTests.file("b.bin", size: 1000, in: h.directory)
        h.watch.transferFile(url, metadata: nil)
        h.watch.transferUserInfo(["n": 1])
        try await Self.waitForARelease(h, or: "userInfo", of: h.phoneDelegate)
        #expect(!h.phoneDelegate.names().contains("file"))
        #expect(!h.phoneDelegate.names().contains("userInfo"), "what was sent after the file waits for it")
        #expect(!h.watchDelegate.names().contains("fileFinished"))

        try FileManager.default.removeItem(atPath: blocked)
        try await waitForCalls(h.phoneDelegate, "file", within: 20)
        try await waitForCalls(h.phoneDelegate, "userInfo", within: 20)
        #expect(h.phoneDelegate.names().filter { ["file", "userInfo"].contains($0) } == ["file", "userInfo"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept.path("b.bin"))) == data)
        // The acks passed the chunk: both transfers finished at the sender.
        try await waitForCalls(h.watchDelegate, "fileFinished", within: 20)
        try await waitForCalls(h.watchDelegate, "didFinish", within: 20)
        #expect(h.watchDelegate.details("fileFinished") == ["1000/1000"])
        #expect(h.watchDelegate.details("didFinish") == ["1"])
        await h.stop()
    }

    /// Before: the last chunk was acknowledged, its chunks deleted, and the sender told the
    /// file was received, while the delegate never got it.
    @Test func aFileThatCannotBeAssembledKeepsItsChunksAndArrivesOnceItCanBe() async throws {
        let h = try await WCHarness.start()
        let blocked = try Self.blockPhoneDirectory("Inbox", h)
        let (url, _) = try FileTransferTests.file("a.bin", size: 1000, in: h.directory)
        h.watch.transferFile(url, metadata: ["n": 3])
        try await Self.waitForARelease(h, or: "fileFinished", of: h.watchDelegate)
        #expect(!h.watchDelegate.names().contains("fileFinished"), "the sender was told of a file never delivered")
        let partial = h.directory.path("phone") + "/WatchConnectivity/Partial"
        let files = try FileManager.default.contentsOfDirectory(atPath: partial)
        #expect(files.count == 1, "the chunks are kept")
        #expect(files.first.map { FileManager.default.fileExists(atPath: partial + "/" + $0 + "/0") } == true)

        try FileManager.default.removeItem(atPath: blocked)
        try await waitForCalls(h.phoneDelegate, "file", within: 20)
        try await waitForCalls(h.watchDelegate, "fileFinished", within: 20)
        #expect(h.watchDelegate.details("fileFinished") == ["1000/1000"])
        let seen = try #require(h.phoneDelegate.files.withLock { $0.first })
        #expect(seen.existed && seen.metadata == "3")
        try await eventually { (try? FileManager.default.contentsOfDirectory(atPath: partial))?.isEmpty ?? true }
        #expect(h.phoneDelegate.names().filter { $0 == "file" }.count == 1)
        await h.stop()
    }
}
