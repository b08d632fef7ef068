import Foundation

/// A serial executor with a thread of its own, for an actor whose work may block: a SQLite
/// write waiting out another process's lock (up to its busy timeout), a checkpoint's `fsync`.
/// On the cooperative pool such a wait parks one of its few threads (two on a two-core
/// machine) and everything else in the process waits with it; here it parks only this thread.
///
/// An actor uses it with
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }`
/// and a `nonisolated let executor = ThreadExecutor(name:)`. Jobs run one at a time, in the
/// order they were enqueued. The thread ends once the executor is released (the actor is gone,
/// and with it every job for it) and its queue is empty.
public final class ThreadExecutor: SerialExecutor, Sendable {
    /// The queue the thread takes jobs from, shared with it (the thread does not keep the
    /// executor alive: that would keep the thread alive for ever).
    private let queue: JobQueue

    /// Starts the executor's thread, named `name` (as `top` and `gdb` show it).
    public init(name: String) {
        queue = JobQueue()
        let queue = self.queue
        let thread = Thread.named(name) { queue.run() }
        queue.executor = UnownedSerialExecutor(ordinary: self)
        thread.start()
    }

    deinit {
        queue.finish()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.append(UnownedJob(job))
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool { queue.isCurrent }

}

/// The jobs of a ``ThreadExecutor`` and its thread's loop.
///
/// `@unchecked Sendable`: `jobs`, `finished` and `thread` are read and written only with
/// `condition` held (NSCondition: a pthread mutex, which ThreadSanitizer sees); `executor` is set
/// in ``ThreadExecutor/init(name:)`` before the thread starts, and only read after.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs = FIFOArray<UnownedJob>()
    private var finished = false
    private var thread: Thread?
    var executor: UnownedSerialExecutor?

    func append(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return thread == Thread.current
    }

    func run() {
        condition.lock()
        thread = Thread.current
        condition.unlock()
        while let job = next() {
            job.runSynchronously(on: executor!)
        }
        // The thread object holds its closure, which holds this queue: let go of it.
        condition.lock()
        thread = nil
        condition.unlock()
    }

    /// The next job, waiting for one; nil once the executor is gone and nothing is left.
    private func next() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty {
            if finished { return nil }
            condition.wait()
        }
        return jobs.removeFirst()
    }
}
