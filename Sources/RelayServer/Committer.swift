import Foundation
import RelayCore

/// Runs the group commits on a thread of its own, so an fsync never blocks a cooperative-pool
/// thread or the lws service thread.
///
/// One batch at a time (``CommitGate`` hands out the next only after the previous one is
/// committed). A failed commit is retried, with a growing pause, until it succeeds: the core
/// already counts the batch's changes as made, so they are never dropped. After
/// ``failuresBeforeReport`` failed attempts of one batch the committer reports it through
/// `failed`, once per batch, so the relay can close the connections waiting for it.
///
/// `@unchecked Sendable`: its mutable state (`queue`, `started`, `stopping`, `hasExited`,
/// `exited`) is read and written only with `condition` held; the committer calls the storage engine
/// only from the commit thread.
final class Committer: @unchecked Sendable {
    /// Failed attempts of one batch before `failed` is called.
    static let failuresBeforeReport = 3

    private let storage: any RelayStorage
    private let log: Logger
    private let committed: @Sendable (_ ticket: UInt64, _ mutations: Int) -> Void
    private let failed: @Sendable (_ ticket: UInt64) -> Void
    /// Guards ``queue`` and ``stopping`` (NSCondition: a pthread mutex, which TSan sees).
    private let condition = NSCondition()
    private var queue: [CommitGate.Batch] = []
    private var stopping = false
    private var exited: CheckedContinuation<Void, Never>?
    private var hasExited = false
    private var started = false

    /// Creates the committer; batches submitted before ``start()`` wait for it.
    /// - Parameters:
    ///   - committed: called on the commit thread after each batch is durable.
    ///   - failed: called on the commit thread when a batch failed repeatedly (it is still retried).
    init(
        storage: any RelayStorage, log: Logger,
        committed: @escaping @Sendable (_ ticket: UInt64, _ mutations: Int) -> Void,
        failed: @escaping @Sendable (_ ticket: UInt64) -> Void
    ) {
        self.storage = storage
        self.log = log
        self.committed = committed
        self.failed = failed
    }

    /// Starts the commit thread; call once.
    func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "watchrelay-commit"
        thread.start()
    }

    /// Queues a batch (from ``CommitGate/takeBatch()``); returns at once.
    func submit(_ batch: CommitGate.Batch) {
        condition.lock()
        queue.append(batch)
        condition.signal()
        condition.unlock()
    }

    /// Commits what was submitted, then ends the thread; returns once it ended.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            stopping = true
            if hasExited || !started {
                condition.unlock()
                continuation.resume()
                return
            }
            exited = continuation
            condition.signal()
            condition.unlock()
        }
    }

    private func run() {
        while let batch = next() {
            var attempt = 0
            while true {
                do {
                    try storage.apply(batch.mutations, urgent: batch.urgent)
                    break
                } catch {
                    attempt += 1
                    log.error("store commit failed", ("error", "\(error)"), ("attempt", String(attempt)))
                    if attempt == Self.failuresBeforeReport { failed(batch.ticket) }
                    Thread.sleep(forTimeInterval: Double(min(1000, 50 * attempt)) / 1000)
                }
            }
            committed(batch.ticket, batch.mutations.count)
        }
        condition.lock()
        hasExited = true
        let waiter = exited
        exited = nil
        condition.unlock()
        waiter?.resume()
    }

    /// The next batch, waiting for one; nil once stopped and the queue is empty.
    private func next() -> CommitGate.Batch? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        return queue.isEmpty ? nil : queue.removeFirst()
    }
}
