import Foundation
import Primitives
import TestSupport
import Testing
import WatchConnectivity

/// `transferFile`: chunks carried as durable userInfo items, progress, cancel, the receiver's
/// temporary inbox deleted when the delegate returns.
@Suite(.timeLimit(.minutes(3)))
struct FileTransferTests {
    /// A file of `size` pseudo-random bytes in `directory`.
    static func file(_ name: String, size: Int, in directory: TemporaryDirectory) throws -> (URL, Data) {
        var generator = SeededGenerator(seed: UInt64(size))
        let data = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let url = URL(fileURLWithPath: directory.path(name))
        try data.write(to: url)
        return (url, data)
    }

    @Test func aMovedFileArrivesWholeWithItsMetadataAndTheSenderSeesProgressAndDidFinish() async throws {
        let kept = TemporaryDirectory()
        let receiver = RecordingDelegate(moveFilesTo: kept.path)
        let h = try await WCHarness.start(watchDelegate: receiver)
        let (url, data) = try Self.file("report.bin", size: 200_000, in: h.directory)
        let transfer = h.phone.transferFile(url, metadata: ["n": 7])
        #expect(transfer.isTransferring && h.phone.outstandingFileTransfers.count == 1)
        #expect(transfer.progress.totalUnitCount == 200_000 && transfer.file.fileURL == url)
        try await waitForCalls(receiver, "file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept.path("report.bin"))) == data)
        let seen = try #require(receiver.files.withLock { $0.first })
        #expect(seen.existed && seen.metadata == "7" && seen.url.lastPathComponent == "report.bin")
        try await waitForCalls(h.phoneDelegate, "fileFinished")
        #expect(h.phoneDelegate.details("fileFinished") == ["200000/200000"])
        #expect(!transfer.isTransferring && h.phone.outstandingFileTransfers.isEmpty)
        await h.stop()
    }

    @Test func aFileTheDelegateDoesNotMoveIsDeletedWhenTheMethodReturns() async throws {
        let h = try await WCHarness.start()
        let (url, _) = try Self.file("notes.txt", size: 1000, in: h.directory)
        h.watch.transferFile(url, metadata: nil)
        try await waitForCalls(h.phoneDelegate, "file")
        let seen = try #require(h.phoneDelegate.files.withLock { $0.first })
        #expect(seen.existed && seen.metadata == "none")
        // The inbox goes as a whole, but a recursive delete removes the file before its
        // directory: wait for both.
        try await eventually { !FileManager.default.fileExists(atPath: seen.url.path) }
        try await eventually { !FileManager.default.fileExists(atPath: seen.url.deletingLastPathComponent().path) }
        try await waitForCalls(h.watchDelegate, "fileFinished")
        await h.stop()
    }

    @Test func filesOverTheLimitUnreadableFilesDirectoriesAndBadMetadataFailThroughDidFinish() async throws {
        let h = try await WCHarness.start()
        let big = URL(fileURLWithPath: h.directory.path("big.bin"))
        _ = FileManager.default.createFile(atPath: big.path, contents: nil)
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: UInt64(WCSession.fileSizeLimit + 1))
        try handle.close()
        h.phone.transferFile(big, metadata: nil)
        h.phone.transferFile(URL(fileURLWithPath: h.directory.path("missing.bin")), metadata: nil)
        let (small, _) = try Self.file("small.bin", size: 10, in: h.directory)
        h.phone.transferFile(small, metadata: ["url": URL(fileURLWithPath: "/")])
        // Apple: errors occur "if the specified URL doesn't contain a valid file" (no code named).
        h.phone.transferFile(URL(fileURLWithPath: h.directory.path), metadata: nil)
        // Metadata larger than a userInfo may be (the relay's 64 KiB).
        h.phone.transferFile(small, metadata: ["notes": String(repeating: "n", count: 70_000)])
        try await waitForCalls(h.phoneDelegate, "fileFinished", count: 5)
        #expect(h.phoneDelegate.details("fileFinished") == ["7009", "7013", "7010", "7013", "7009"])
        #expect(h.phone.outstandingFileTransfers.isEmpty)
        await h.stop()
    }

    /// The file is looked at before it is read: a FIFO (which a read would wait on for a writer,
    /// blocking the caller) fails at once with `fileAccessDenied`, and a sparse 4 GiB file with
    /// `payloadTooLarge`, neither of them read.
    @Test func aFIFOAndAHugeFileFailWithoutBeingRead() async throws {
        let h = try await WCHarness.start()
        let fifo = h.directory.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let huge = URL(fileURLWithPath: h.directory.path("huge.mov"))
        _ = FileManager.default.createFile(atPath: huge.path, contents: nil)
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 4 << 30)
        try handle.close()
        let phone = h.phone
        // On a thread of its own: the old code blocked in the FIFO's read for ever.
        let returned = LockedState(false)
        Thread {
            phone.transferFile(URL(fileURLWithPath: fifo), metadata: nil)
            phone.transferFile(huge, metadata: ["take": 3])
            returned.withLock { $0 = true }
        }.start()
        try await eventually(10, "transferFile returned") { returned.withLock { $0 } }
        try await waitForCalls(h.phoneDelegate, "fileFinished", count: 2)
        #expect(h.phoneDelegate.details("fileFinished") == ["7013", "7009"])
        await h.stop()
    }

    /// A symbolic link is followed, as a read of the URL follows it: the file it points to is
    /// sent (under the link's name). A link to a FIFO is still refused unread.
    @Test func aSymbolicLinkToAFileSendsTheFileAndOneToAFIFOFails() async throws {
        let kept = TemporaryDirectory()
        let receiver = RecordingDelegate(moveFilesTo: kept.path)
        let h = try await WCHarness.start(watchDelegate: receiver)
        let (target, data) = try Self.file("recording.m4a", size: 1000, in: h.directory)
        let link = URL(fileURLWithPath: h.directory.path("latest.m4a"))
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let fifo = h.directory.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let fifoLink = h.directory.path("pipe-link")
        try FileManager.default.createSymbolicLink(atPath: fifoLink, withDestinationPath: fifo)
        let phone = h.phone
        let returned = LockedState(false)
        Thread {
            phone.transferFile(URL(fileURLWithPath: fifoLink), metadata: nil)
            phone.transferFile(link, metadata: nil)
            returned.withLock { $0 = true }
        }.start()
        try await eventually(10, "transferFile returned") { returned.withLock { $0 } }
        try await waitForCalls(h.phoneDelegate, "fileFinished", count: 2)
        #expect(h.phoneDelegate.details("fileFinished").sorted() == ["1000/1000", "7013"])
        try await waitForCalls(receiver, "file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept.path("latest.m4a"))) == data)
        await h.stop()
    }

    @Test func aCancelledFileNeverReachesTheDelegate() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let (url, _) = try Self.file("draft.bin", size: 120_000, in: h.directory)
        let transfer = h.phone.transferFile(url, metadata: nil)
        transfer.cancel()
        #expect(!transfer.isTransferring && h.phone.outstandingFileTransfers.isEmpty)
        h.phone.transferUserInfo(["n": 1])
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo")
        #expect(h.watchDelegate.names().filter { $0 == "file" }.isEmpty)
        await h.stop()
    }
}
