import Foundation
import Primitives
import TestSupport
import Testing

/// `FileWakes`: a look at the start, one per change of the file, and the fallback timer once
/// the change stream ended on its own (a follower would otherwise never look again).
@Suite struct FileWakesTests {
    @Test func itWakesOnceAtTheStartAndOnAChangeWithNoTimerDue() async throws {
        let directory = TemporaryDirectory()
        // No safety net, the fallback an hour: only the start and the inotify event can wake it.
        let wakes = FileWakes(directory: directory.path, name: "active-watch", fallback: .seconds(3600))
        let stream = wakes.wakes
        try await withTimeout(10 * timeoutScale, "the first look and the change") {
            var looks = stream.makeAsyncIterator()
            #expect(await looks.next() != nil, "the first look")
            // Replaced by a rename, as PhoneWatches.setActive writes it.
            try Data("B\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/active-watch"), options: .atomic)
            #expect(await looks.next() != nil, "the change")
            try Data("C\n".utf8).write(to: URL(fileURLWithPath: directory.path + "/active-watch"), options: .atomic)
            #expect(await looks.next() != nil, "the next change: the watch on the directory did not go stale")
        }
        wakes.stop()
        try await withTimeout(5 * timeoutScale, "the wakes to finish after stop()") { for await _ in stream {} }
    }

    @Test func aChangeStreamThatEndsOnItsOwnFallsBackToTheTimer() async throws {
        let (changes, ended) = AsyncStream.makeStream(of: Void.self)
        let stopped = LockedState(false)
        let wakes = FileWakes(
            changes: changes, onStop: { stopped.withLock { $0 = true } }, fallback: .milliseconds(10))
        ended.finish()  // the inotify thread gave up
        let stream = wakes.wakes
        try await withTimeout(10 * timeoutScale, "looks after the stream ended") {
            var looks = stream.makeAsyncIterator()
            // The first look, the look at the end, then the fallback's (there is no other timer).
            for _ in 0..<5 { #expect(await looks.next() != nil) }
        }
        wakes.stop()
        #expect(stopped.withLock { $0 })
    }
}
