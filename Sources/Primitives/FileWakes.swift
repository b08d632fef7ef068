/// Wakes its owner to look at a file again: once at the start (after the watch is armed, so
/// a change made before counts), on each change of the file (a ``FileChangeSignal``, where
/// inotify works), and — only where there is no inotify watch, or it ended on its own (its
/// thread stops on a `poll` or `read` error) — on one timer armed for the next check, every
/// `fallback`. While the watch lives no timer runs.
public final class FileWakes: Sendable {
    /// One element per reason to look again (coalesced); finishes after ``stop()``.
    public let wakes: AsyncStream<Void>
    private let sink: AsyncStream<Void>.Continuation

    /// Watches `name` in `directory` (inotify on the directory, filtered by name: a file
    /// replaced by a rename is a new inode, so a watch on the file itself would go stale).
    public convenience init(directory: String, name: String, fallback: Duration) {
        #if canImport(Glibc)
            let signal = FileChangeSignal(directory: directory, names: [name])
            self.init(changes: signal?.changes, onStop: { signal?.stop() }, fallback: fallback)
        #else
            self.init(changes: nil, fallback: fallback)
        #endif
    }

    /// Wakes on each element of `changes` (nil: none; a stream that ends falls back to the
    /// `fallback` timer), and on the timer; `onStop` runs once it stops.
    public init(changes: AsyncStream<Void>?, onStop: @escaping @Sendable () -> Void = {}, fallback: Duration) {
        let (wakes, sink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakes = wakes
        self.sink = sink
        sink.yield()  // the first look, after the watch was armed: a change made before it counts
        // The timer, and whether the wakes ended (then no timer may start).
        let timer = LockedState<(task: Task<Void, Never>?, ended: Bool)>((nil, false))
        /// The fallback's timer.
        @Sendable func arm() {
            let next = Task {
                while true {
                    do { try await Task.sleep(for: fallback) } catch { return }
                    sink.yield()
                }
            }
            let unused = timer.withLock { t -> Task<Void, Never>? in
                defer { t.task = t.ended ? nil : next }
                return t.ended ? next : t.task
            }
            unused?.cancel()
        }
        if changes == nil { arm() }
        let forward = Task {
            guard let changes else { return }
            for await _ in changes { sink.yield() }
            guard !Task.isCancelled else { return }
            arm()  // ended on its own: look now, then on the fallback
            sink.yield()
        }
        sink.onTermination = { _ in
            forward.cancel()
            timer.withLock { t -> Task<Void, Never>? in
                t.ended = true
                defer { t.task = nil }
                return t.task
            }?.cancel()
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
