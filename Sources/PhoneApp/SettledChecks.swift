/// Runs a check on every change signal, and again a few times after each signal and after each
/// check that found a change.
///
/// Why: inotify reports another process's SQLite commit by its writes to `phone.db-wal`, and
/// those come *before* the commit is visible. SQLite appends the frames (and syncs them when
/// `synchronous=FULL`), and only then publishes the commit in the shared-memory index, a write to
/// an `mmap` that inotify never reports. A check run on the last WAL write can therefore find
/// `data_version` unchanged, and with no file event after it the commit would wait for the next
/// one, however long that takes. One signal can also stand for two commits (unread inotify events
/// merge, and the signal stream keeps only the newest), so a check that finds the first may run
/// before the second is visible. So after a signal, and after a check that found a change, the
/// check runs again after each of ``delays`` until they run out; the next signal or found change
/// starts them over. A retry that finds nothing costs one `PRAGMA data_version`.
enum SettledChecks {
    /// The waits before each retry: about 3.4 s in all, past a WAL sync on a busy disk.
    static let delays: [Duration] = [
        .milliseconds(10), .milliseconds(40), .milliseconds(160), .milliseconds(640), .milliseconds(2560),
    ]

    /// Arms the retry timer: calls `fire` after `delay` unless the returned timer is cancelled
    /// first. ``follow(_:delays:arm:check:)`` calls it on its own task, between checks.
    typealias Arm = @Sendable (_ delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any RetryTimer

    /// A one-shot timer: a task that sleeps for the delay, then fires unless cancelled.
    static let sleepingTimer: Arm = { delay, fire in
        Task {
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { fire() }
        }
    }

    /// What woke the loop: a change signal, or the retry timer armed as `generation`.
    private enum Wake: Sendable {
        case signal
        case retry(generation: Int)
    }

    /// Checks on each element of `changes` until the stream ends (or the task is cancelled);
    /// cancels its retry timer before it returns.
    ///
    /// Every check runs here, one at a time: a signal that arrives during a retry's wait only
    /// restarts the retries, and never cancels a check that has found a change and is handling
    /// it (a cancelled check would have recorded the new `data_version` and dropped its work).
    /// Each timer carries the generation it was armed in, so a tick from a timer cancelled too
    /// late is ignored instead of standing in for the retry armed after it.
    /// - Parameter check: true when it found (and handled) a change.
    static func follow(
        _ changes: AsyncStream<Void>, delays: [Duration] = delays, arm: Arm = sleepingTimer,
        check: @escaping @Sendable () async -> Bool
    ) async {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes { wake.yield(.signal) }
                wake.finish()
            }
            var timer: (any RetryTimer)?
            var generation = 0
            var pending = delays[...]
            for await reason in wakes {
                if case .retry(let armed) = reason, armed != generation { continue }  // a stale tick
                timer?.cancel()
                timer = nil
                generation += 1
                if case .signal = reason { pending = delays[...] }
                if await check() { pending = delays[...] }
                guard let delay = pending.popFirst() else { continue }
                // One timer at a time, armed for the next retry and cancelled by any wake: at most
                // `delays.count` checks after the last signal or found change, not a poll.
                let current = generation
                timer = arm(delay) { wake.yield(.retry(generation: current)) }
            }
            timer?.cancel()
            group.cancelAll()
        }
    }
}

/// A retry timer ``SettledChecks`` can cancel (a `Task` is one).
protocol RetryTimer: Sendable {
    func cancel()
}

extension Task: RetryTimer where Success == Void, Failure == Never {}
