/// Runs a check on every change signal, and again a few times after a signal whose check found
/// nothing new.
///
/// Why: inotify reports another process's SQLite commit by its writes to `phone.db-wal`, and
/// those come *before* the commit is visible. SQLite appends the frames, syncs the WAL
/// (`synchronous=FULL`: milliseconds, more on a loaded disk), and only then publishes the commit
/// in the shared-memory index, a write to an `mmap` that inotify never reports. A check run on
/// the last WAL write can therefore find `data_version` unchanged, and with no event after it
/// the commit would wait for the fallback poll (an hour in the test that caught this, under
/// ThreadSanitizer). So a check that finds nothing is retried after each of ``delays``, until
/// one finds a change, the next signal arrives, or the delays run out. A retry costs one
/// `PRAGMA data_version`.
enum SettledChecks {
    /// The waits before each retry: about 3.4 s in all, past a WAL sync on a busy disk.
    static let delays: [Duration] = [
        .milliseconds(10), .milliseconds(40), .milliseconds(160), .milliseconds(640), .milliseconds(2560),
    ]

    /// What woke the loop: a change signal, or the retry timer.
    private enum Wake: Sendable {
        case signal
        case retry
    }

    /// Checks on each element of `changes` until the stream ends (or the task is cancelled);
    /// returns after its retry timer has stopped.
    ///
    /// Every check runs here, one at a time: a signal that arrives during a retry's wait only
    /// restarts the retries, and never cancels a check that has found a change and is handling
    /// it (a cancelled check would have recorded the new `data_version` and dropped its work).
    /// - Parameter check: true when it found (and handled) a change.
    static func follow(
        _ changes: AsyncStream<Void>, delays: [Duration] = delays, check: @escaping @Sendable () async -> Bool
    ) async {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { wake.yield(.signal) }
                wake.finish()
            }
            var timer: Task<Void, Never>?
            var pending = delays[...]
            for await reason in wakes {
                timer?.cancel()
                timer = nil
                if case .signal = reason { pending = delays[...] }
                if await check() {
                    pending = []
                    continue
                }
                guard let delay = pending.popFirst() else { continue }
                // One timer, armed for the next retry's time and cancelled by any wake (not a
                // poll: at most five per signal that found nothing). It only wakes this loop; a
                // tick left by a timer cancelled too late costs one more check.
                timer = Task {
                    try? await Task.sleep(for: delay)
                    if !Task.isCancelled { wake.yield(.retry) }
                }
            }
            timer?.cancel()
            group.cancelAll()
        }
    }
}
