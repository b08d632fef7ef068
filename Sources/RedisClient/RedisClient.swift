import Foundation
import Primitives

/// A Redis client driven from a thread of its own, with pipelining.
///
/// Callers hand over commands (``execute(_:)`` from async code, ``executeBlocking(_:)`` from a
/// thread of the caller's own); the client's thread takes every request queued at that moment,
/// writes all their commands at once and reads the replies in order, so concurrent callers
/// share round trips. Nothing ever blocks the cooperative pool or an lws service thread.
///
/// Each command's outcome is a value: a reply or a ``RedisError``. The connection is opened
/// lazily and reopened on the next request after it broke, so the client recovers by itself
/// when the server is back; requests made while it is down fail fast with
/// ``RedisError/unreachable(_:)``. The thread ends on ``close()`` or when the client is released.
public final class RedisClient: Sendable {
    /// The server.
    public let endpoint: RedisEndpoint
    private let core: RedisClientThread

    /// Starts the client's thread; connects on the first request.
    ///
    /// - Parameters:
    ///   - timeoutMilliseconds: for connecting and for each read and write; a server that does
    ///     not answer within it counts as unreachable.
    ///   - haltsAfterFailure: once a pipeline failed (the connection broke, or could not be
    ///     made), every request queued until ``resumeAfterFailure()`` fails too, unsent. For a
    ///     caller whose pipelines form one ordered stream (the relay's publishes): without it,
    ///     the next pipeline goes out on a new connection and the stream has a hole in the middle.
    public init(endpoint: RedisEndpoint, timeoutMilliseconds: Int = 2000, haltsAfterFailure: Bool = false) {
        self.endpoint = endpoint
        core = RedisClientThread(
            endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds, haltsAfterFailure: haltsAfterFailure)
    }

    /// Sends again what is queued from now on, after a failure halted a client made with
    /// `haltsAfterFailure` (requests queued before this call still fail unsent).
    public func resumeAfterFailure() {
        core.resumeAfterFailure()
    }

    deinit { core.requestStop() }

    /// Runs `commands` as one pipeline; returns one outcome per command, in order, once every
    /// reply arrived (or the connection failed).
    public func execute(_ commands: [RedisCommand]) async -> [Result<RedisValue, RedisError>] {
        await withCheckedContinuation { continuation in
            core.enqueue(commands) { continuation.resume(returning: $0) }
        }
    }

    /// Queues `commands` as one pipeline and returns at once; `complete` runs on the client's
    /// thread with the outcomes. Pipelines run in the order they were queued, on one
    /// connection, so what one caller sends in order reaches the server in that order (the
    /// relay's lws service thread publishes with it: it must never wait).
    public func submit(
        _ commands: [RedisCommand], then complete: @escaping @Sendable ([Result<RedisValue, RedisError>]) -> Void = { _ in }
    ) {
        core.enqueue(commands, complete)
    }

    /// The same as ``execute(_:)``, blocking the calling thread until the replies are in.
    ///
    /// For threads of the caller's own (the relay's committer), never a cooperative-pool or
    /// lws service thread.
    public func executeBlocking(_ commands: [RedisCommand]) -> [Result<RedisValue, RedisError>] {
        executeBlocking(commands, until: nil)
    }

    /// ``executeBlocking(_:)`` that stops waiting at `deadline`: then every command gets
    /// ``RedisError/unreachable(_:)``, though the pipeline may still run later (its replies are
    /// dropped). For a caller that must act by a time whatever the server does: a cluster
    /// leader, whose lease ends on Redis's clock whether or not its renewal got an answer.
    public func executeBlocking(
        _ commands: [RedisCommand], until deadline: ContinuousClock.Instant?
    ) -> [Result<RedisValue, RedisError>] {
        let box = ResultBox()
        // Only wakes the caller; the results pass under `box.lock`. A semaphore's deadline is on
        // the monotonic clock, as `deadline` is (NSCondition's is the wall clock's).
        let arrived = DispatchSemaphore(value: 0)
        core.enqueue(commands) { results in
            box.lock.lock()
            box.results = results
            box.lock.unlock()
            arrived.signal()
        }
        if let deadline {
            arrived.wait(until: deadline)
        } else {
            arrived.wait()
        }
        box.lock.lock()
        defer { box.lock.unlock() }
        return box.results ?? commands.map { _ in .failure(.unreachable("no reply in time from \(endpoint)")) }
    }

    /// Answers what is queued, closes the connection and ends the thread; returns once it ended.
    /// Requests made after this fail with ``RedisError/unreachable(_:)``.
    public func close() async {
        await withCheckedContinuation { continuation in
            core.requestStop { continuation.resume() }
        }
    }

    /// The same as ``close()``, blocking the calling thread until the client's thread ended.
    ///
    /// For threads of the caller's own (the relay's lease and loader threads), never a
    /// cooperative-pool or lws service thread: it waits for the pipeline under way, if any.
    public func closeBlocking() {
        let ended = DispatchSemaphore(value: 0)
        core.requestStop { ended.signal() }
        ended.wait()
    }
}

/// The client's thread and what it shares with callers.
private final class RedisClientThread: @unchecked Sendable {
    /// One caller's pipeline and where its replies go.
    struct Request {
        var commands: [RedisCommand]
        var complete: @Sendable ([Result<RedisValue, RedisError>]) -> Void
        /// How many ``resumeAfterFailure()`` calls came before it was queued.
        var generation: UInt64
    }

    // @unchecked Sendable: `queue`, `stopping`, `exitWaiters`, `hasExited`, `generation` and
    // `failedGeneration` are only touched with `condition` held (NSCondition: a pthread mutex, which ThreadSanitizer sees);
    // `connection` only on the client's own thread.
    private let condition = NSCondition()
    private var queue: [Request] = []
    private var stopping = false
    private var exitWaiters: [@Sendable () -> Void] = []
    private var hasExited = false
    private var connection: RedisConnection?
    private let endpoint: RedisEndpoint
    private let timeoutMilliseconds: Int
    private let haltsAfterFailure: Bool
    /// ``resumeAfterFailure()`` calls so far.
    private var generation: UInt64 = 0
    /// The generation in which a pipeline last failed (only with `haltsAfterFailure`): requests
    /// queued in it or before fail unsent.
    private var failedGeneration: UInt64?

    init(endpoint: RedisEndpoint, timeoutMilliseconds: Int, haltsAfterFailure: Bool) {
        self.endpoint = endpoint
        self.timeoutMilliseconds = timeoutMilliseconds
        self.haltsAfterFailure = haltsAfterFailure
        let thread = Thread.named("redis-client") { [self] in run() }
        thread.start()
    }

    func enqueue(_ commands: [RedisCommand], _ complete: @escaping @Sendable ([Result<RedisValue, RedisError>]) -> Void) {
        guard !commands.isEmpty else { return complete([]) }
        condition.lock()
        if stopping {
            condition.unlock()
            return complete(commands.map { _ in .failure(.unreachable("the client is closed")) })
        }
        queue.append(Request(commands: commands, complete: complete, generation: generation))
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread after what is queued; `exited` runs once it ended.
    func requestStop(_ exited: @escaping @Sendable () -> Void = {}) {
        condition.lock()
        stopping = true
        if hasExited {
            condition.unlock()
            return exited()
        }
        exitWaiters.append(exited)
        condition.signal()
        condition.unlock()
    }

    func resumeAfterFailure() {
        condition.lock()
        generation += 1
        condition.unlock()
    }

    private func run() {
        while let (requests, refused) = next() {
            for request in refused {
                request.complete(request.commands.map { _ in .failure(.unreachable("not sent: an earlier pipeline failed")) })
            }
            let results = pipeline(requests.flatMap(\.commands))
            if haltsAfterFailure, !requests.isEmpty, connection?.isBroken ?? true {
                condition.lock()
                failedGeneration = generation
                condition.unlock()
            }
            var start = 0
            for request in requests {
                request.complete(Array(results[start..<start + request.commands.count]))
                start += request.commands.count
            }
        }
        connection = nil
        condition.lock()
        hasExited = true
        let waiters = exitWaiters
        exitWaiters = []
        condition.unlock()
        for waiter in waiters { waiter() }
    }

    /// Runs the commands on the connection, opening it first if needed.
    private func pipeline(_ commands: [RedisCommand]) -> [Result<RedisValue, RedisError>] {
        guard !commands.isEmpty else { return [] }
        if connection?.isBroken ?? true {
            connection = nil
            do {
                connection = try RedisConnection(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
            } catch {
                return commands.map { _ in .failure(error) }
            }
        }
        return connection?.run(commands) ?? commands.map { _ in .failure(.unreachable("no connection")) }
    }

    /// Every queued request, waiting for one, and apart those to fail unsent (queued before a
    /// failure was resumed after); nil once stopping and nothing is queued.
    private func next() -> (send: [Request], refused: [Request])? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        if queue.isEmpty { return nil }
        let requests = queue
        queue = []
        guard let failedGeneration else { return (requests, []) }
        return (requests.filter { $0.generation > failedGeneration }, requests.filter { $0.generation <= failedGeneration })
    }
}

/// Where ``RedisClient/executeBlocking(_:until:)``'s replies wait.
private final class ResultBox: @unchecked Sendable {
    // @unchecked Sendable: `results` is read and written only with `lock` held (NSLock, a
    // pthread mutex, which ThreadSanitizer sees).
    let lock = NSLock()
    var results: [Result<RedisValue, RedisError>]?
}
