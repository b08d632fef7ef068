import Foundation
import Primitives
import RelayCore
import RelayProtocol
import RelayRedisStore

/// Runs the group commits on a thread of its own, so an fsync never blocks a cooperative-pool
/// thread or the lws service thread.
///
/// One batch at a time (``CommitGate`` hands out the next only after the previous one is
/// committed). A failed commit is retried, with a growing pause, until it succeeds: the core
/// already counts the batch's changes as made, so they are never dropped. From the
/// ``failuresBeforeReport``th failed attempt of one batch on, the committer reports every failed
/// attempt through `failed`, so the relay closes the connections waiting for it, and then each
/// connection that came to wait since (a `hello` that needs a commit: it would otherwise get no
/// answer until the store is back).
///
/// The one failure not retried: a Redis store refusing a batch as a deposed leader's
/// (``RedisRelayStorageError/fenced(_:)``). Another node leads; this batch and every later one
/// are dropped uncommitted (so nothing depending on them is ever sent) and `fenced` is called once.
///
/// `@unchecked Sendable`: its mutable state (`queue`, `started`, `stopping`, `hasExited`,
/// `exited`) is read and written only with `condition` held; `isFenced`, `gaveUp` and the storage
/// engine are touched only on the commit thread (and `storage` set in `init`, before the thread starts).
final class Committer: @unchecked Sendable {
    /// Failed attempts of one batch before `failed` is first called (then at every one).
    static let failuresBeforeReport = 3
    /// Failed attempts after ``stop()`` before the committer gives up on the store: the batch
    /// and every later one are dropped (none was acknowledged) and the thread ends, so a relay
    /// told to stop while its store is down exits (it retried for ever, and test nodes outlived
    /// their tests).
    static let attemptsAfterStop = 10

    /// Released on the commit thread as it ends, so a SQLite store is closed (its write-ahead
    /// log checkpointed and removed) before ``stop()`` returns: it used to close whenever its
    /// last holder let go, and `serve`'s exit usually came first (`relay.db-wal` left behind).
    private var storage: (any RelayStorage)?
    private let log: Logger
    private let committed: @Sendable (_ ticket: UInt64, _ mutations: Int) -> Void
    private let failed: @Sendable (_ ticket: UInt64) -> Void
    private let loaded: @Sendable (_ read: CommitGate.PayloadRead, _ payloads: [ExactID: Payload]) -> Void
    private let fenced: @Sendable () -> Void
    /// The store refused a batch as a deposed leader's: nothing more is committed.
    private var isFenced = false
    /// The store kept failing after ``stop()``: nothing more is committed or read.
    private var gaveUp = false
    /// Guards ``queue`` and ``stopping`` (NSCondition: a pthread mutex, which TSan sees).
    private let condition = NSCondition()
    private var queue: [Job] = []

    /// One piece of the committer's work, in submission order.
    private enum Job {
        case batch(CommitGate.Batch)
        case read(CommitGate.PayloadRead)
    }
    private var stopping = false
    private var exited: CheckedContinuation<Void, Never>?
    private var hasExited = false
    private var started = false

    /// Creates the committer; batches submitted before ``start()`` wait for it.
    /// - Parameters:
    ///   - committed: called on the commit thread after each batch is durable.
    ///   - failed: called on the commit thread at each failed attempt of a batch from the
    ///     ``failuresBeforeReport``th on (it is still retried, at most a second apart).
    ///   - loaded: called on the commit thread with the payloads of a ``submit(_:)-(CommitGate.PayloadRead)``.
    ///   - fenced: called once on the commit thread when the store refused a batch because
    ///     another node leads (that batch and all later ones are dropped).
    init(
        storage: any RelayStorage, log: Logger,
        committed: @escaping @Sendable (_ ticket: UInt64, _ mutations: Int) -> Void,
        failed: @escaping @Sendable (_ ticket: UInt64) -> Void,
        loaded: @escaping @Sendable (_ read: CommitGate.PayloadRead, _ payloads: [ExactID: Payload]) -> Void = { _, _ in },
        fenced: @escaping @Sendable () -> Void = {}
    ) {
        self.fenced = fenced
        self.storage = storage
        self.log = log
        self.committed = committed
        self.failed = failed
        self.loaded = loaded
    }

    /// Starts the commit thread; call once.
    func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread.named("relay-commit") { [self] in run() }
        thread.start()
    }

    /// Queues a batch (from ``CommitGate/takeBatch()``); returns at once.
    func submit(_ batch: CommitGate.Batch) {
        enqueue(.batch(batch))
    }

    /// Queues a read of queued payloads; it runs after every batch submitted before it, and
    /// `loaded` gets its result. Returns at once.
    func submit(_ read: CommitGate.PayloadRead) {
        enqueue(.read(read))
    }

    private func enqueue(_ job: Job) {
        condition.lock()
        queue.append(job)
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
        if let storage {
            while let job = next() {
                switch job {
                case .batch(let batch): commit(batch, to: storage)
                case .read(let read): load(read, from: storage)
                }
            }
        }
        storage = nil
        condition.lock()
        hasExited = true
        let waiter = exited
        exited = nil
        condition.unlock()
        waiter?.resume()
    }

    private func commit(_ batch: CommitGate.Batch, to storage: any RelayStorage) {
        var attempt = 0
        var attemptsStopping = 0
        while true {
            if isFenced || gaveUp { return }
            do {
                try storage.apply(batch.mutations, urgent: batch.urgent)
                break
            } catch RedisRelayStorageError.fenced(let message) {
                log.warning("store refused the batch: another node leads", ("error", message))
                isFenced = true
                fenced()
                return
            } catch {
                attempt += 1
                log.error("store commit failed", ("error", "\(error)"), ("attempt", String(attempt)))
                if attempt >= Self.failuresBeforeReport { failed(batch.ticket) }
                if giveUpWhenStopping(&attemptsStopping) {
                    log.error("store still failing at stop: the batch and later ones are dropped (none was acknowledged)")
                    return
                }
                Thread.sleep(forTimeInterval: Double(min(1000, 50 * attempt)) / 1000)
            }
        }
        committed(batch.ticket, batch.mutations.count)
    }

    /// Reads the payloads, retrying with a growing pause until the store answers (the
    /// direction's delivery waits for them; nothing else does).
    private func load(_ read: CommitGate.PayloadRead, from storage: any RelayStorage) {
        var attempt = 0
        var attemptsStopping = 0
        while !gaveUp {
            do {
                let payloads = try storage.loadPayloads(read.pair, direction: read.direction, sendIDs: read.sendIDs)
                if payloads.count < read.sendIDs.count {
                    log.debug(
                        "queued payloads no longer stored", ("pair", read.pair.rawValue),
                        ("missing", String(read.sendIDs.count - payloads.count)))
                }
                loaded(read, payloads)
                return
            } catch {
                attempt += 1
                log.error("store read failed", ("error", "\(error)"), ("attempt", String(attempt)))
                if giveUpWhenStopping(&attemptsStopping) {
                    log.error("store still failing at stop: payloads not read")
                    return
                }
                Thread.sleep(forTimeInterval: Double(min(1000, 50 * attempt)) / 1000)
            }
        }
    }

    /// After a failed attempt: counts it if ``stop()`` was called, and gives up on the store
    /// (``gaveUp``) at the ``attemptsAfterStop``th such attempt.
    private func giveUpWhenStopping(_ attemptsStopping: inout Int) -> Bool {
        condition.lock()
        let isStopping = stopping
        condition.unlock()
        guard isStopping else { return false }
        attemptsStopping += 1
        if attemptsStopping >= Self.attemptsAfterStop { gaveUp = true }
        return gaveUp
    }

    /// The next batch, waiting for one; nil once stopped and the queue is empty.
    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        return queue.isEmpty ? nil : queue.removeFirst()
    }
}
