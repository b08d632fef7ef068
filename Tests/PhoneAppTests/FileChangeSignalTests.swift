import Foundation
import Primitives
import Testing
import TestSupport

@testable import PhoneApp

/// The phone notices another process's commit as an event (inotify), not on a timer.
@Suite struct FileChangeSignalTests {
    @Test func aWriteToAWatchedFileIsSignalledAndStopEndsTheStream() async throws {
        let directory = TemporaryDirectory()
        let signal = try #require(FileChangeSignal(directory: directory.path, names: ["phone.db-wal"]))
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path + "/phone.db-wal"))
        let changes = signal.changes
        try await withTimeout(5 * timeoutScale, "the change signal") {
            var iterator = changes.makeAsyncIterator()
            #expect(await iterator.next() != nil)
        }
        signal.stop()
        signal.stop()  // twice is harmless
        try await withTimeout(5 * timeoutScale, "the stream to finish after stop()") {
            for await _ in changes {}
        }
    }

    @Test func inotifyRecordsAreSplitIntoTheirNames() {
        // Two records: "phone.db" padded to 16 bytes, then "a" padded to 4.
        func record(_ name: String, length: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 12)
            bytes += [UInt8(length), 0, 0, 0]
            let padded = Array(name.utf8) + [UInt8](repeating: 0, count: length - name.utf8.count)
            return bytes + padded
        }
        let buffer = record("phone.db", length: 16) + record("a", length: 4) + [1, 2, 3]  // a cut-off tail
        #expect(FileChangeSignal.names(in: buffer[...]) == ["phone.db", "a"])
        #expect(FileChangeSignal.names(in: []) == [])
    }

    @Test func anOverflowRecordCountsAsAChange() {
        // wd -1, mask IN_Q_OVERFLOW (0x4000), cookie 0, len 0: what the kernel queues when it dropped events.
        let overflow: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        var modify = [UInt8](repeating: 0, count: 16)
        modify[4] = 0x02  // IN_MODIFY
        modify[12] = 4
        modify += Array("a".utf8) + [0, 0, 0]
        #expect(FileChangeSignal.overflowed(overflow[...]))
        #expect(FileChangeSignal.overflowed((modify + overflow)[...]))
        #expect(!FileChangeSignal.overflowed(modify[...]))
        #expect(FileChangeSignal.names(in: overflow[...]) == [])
    }

    @Test func aFavoriteAddedByAnotherProcessIsPushedWithNoPollTimer() async throws {
        // The fallback poll is an hour: only the inotify event can wake the phone.
        let h = try await PhoneHarness.start { $0.externalPollInterval = .seconds(3600) }
        let cli = try PhoneStore(directory: h.state.path)
        try cli.addFavorite("torvalds")
        #expect(try await h.watch.nextSnapshot().users.map(\.login) == ["torvalds"])
        try cli.addFavorite("octocat")
        #expect(try await h.watch.nextSnapshot().users.map(\.login) == ["torvalds", "octocat"])
        await h.stop()
    }
}
