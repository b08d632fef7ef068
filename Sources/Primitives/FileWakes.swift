/// Wakes its owner to look at a file again: once at the start, on each change of the file (a
/// ``FileChangeSignal``, where inotify works), and on one timer armed for the next check — a
/// slow `safetyNet` while the inotify watch lives, the quicker `fallback` where there is none
/// or it ended on its own.
///
/// Why a safety net at all: a WatchConnectivity phone app that woke on inotify events only once
/// missed a `watchrelay switch-watch` for good in one CI run (not reproduced). One defect
/// explains that symptom — when the signal's stream ended on its own (its thread stops on a
/// `poll` or `read` error, e.g. a descriptor closed under it), the owner stopped looking —
/// and the `fallback` fixes it; the net bounds any other lost event at `safetyNet`.
public final class FileWakes: Sendable {
    /// One element per reason to look again (coalesced); finishes after ``stop()``.
    public let wakes: AsyncStream<Void>
    private let sink: AsyncStream<Void>.Continuation

    /// Watches `name` in `directory` (inotify on the directory, filtered by name: a file
    /// replaced by a rename is a new inode, so a watch on the file itself would go stale).
    public convenience init(directory: String, name: String, safetyNet: Duration, fallback: Duration) {
        #if canImport(Glibc)
            let signal = FileChangeSignal(directory: directory, names: [name])
            self.init(changes: signal?.changes, onStop: { signal?.stop() }, safetyNet: safetyNet, fallback: fallback)
        #else
            self.init(changes: nil, safetyNet: safetyNet, fallback: fallback)
        #endif
    }

    /// Wakes on each element of `changes` (nil: none; a stream that ends falls back to the
    /// `fallback` timer), and on the timer; `onStop` runs once it stops.
    public init(
        changes: AsyncStream<Void>?, onStop: @escaping @Sendable () -> Void = {}, safetyNet: Duration,
        fallback: Duration
    ) {
        let (wakes, sink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakes = wakes
        self.sink = sink
        sink.yield()  // the first look, after the watch was armed: a change made before it counts
        let live = LockedState(changes != nil)
        let forward = Task {
            if let changes {
                for await _ in changes { sink.yield() }
            }
            live.withLock { $0 = false }
            sink.yield()  // ended (on its own, or stopped): look once more, then on the fallback
        }
        let timer = Task {
            while true {
                do { try await Task.sleep(for: live.withLock { $0 } ? safetyNet : fallback) } catch { return }
                sink.yield()
            }
        }
        sink.onTermination = { _ in
            forward.cancel()
            timer.cancel()
            onStop()
        }
    }

    deinit {
        stop()
    }

    /// Ends the wakes, the timer and the inotify watch; safe to call more than once.
    public func stop() {
        sink.finish()
    }
}
