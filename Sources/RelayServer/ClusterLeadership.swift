import Foundation
import Primitives
import RedisClient
import RelayConsole
import RelayCore
import RelayRedisStore

/// The lease thread of a cluster node: every third of the lease's TTL it renews this node's
/// lease, or, while another node leads, tries to take it (it is free once the leader stopped
/// or its lease expired). On taking it, it loads the state from Redis (as a single node does at
/// start), builds the engine and its committer (whose store carries the lease's epoch) and hands
/// them to the ``ClusterNode``; on losing it (renewal refused, or a batch fenced) it tells the
/// node to step down and stops that committer. Blocking Redis calls happen here, never on the
/// lws service thread or the cooperative pool.
///
/// `@unchecked Sendable`: `stopping`, `committer`, `fencedEpoch`, `hasExited` and `exited` are
/// touched only with `condition` held; the rest is immutable or confined to the lease thread.
final class ClusterLeadership: @unchecked Sendable {
    /// What the node needs to build an engine when it takes the lease.
    struct Context: Sendable {
        let configuration: RelayServerConfiguration
        let endpoint: RedisEndpoint
        let environment: RelayEnvironment
        let clock: Primitives.Clock
        let log: Logger
        let metrics: RelayMetrics
        /// The node's console (`serve --console`): every engine it leads with reports to it.
        let console: ConsoleHub?
        /// Posts to the node's transport (false once it is shut down).
        let post: @Sendable (any Sendable) -> Bool
    }

    private let context: Context
    private let lease: RedisLeaderLease
    private let client: RedisClient
    private let condition = NSCondition()
    private var stopping = false
    private var hasExited = false
    private var exited: [CheckedContinuation<Void, Never>] = []
    /// The committer of the leadership in force.
    private var committer: Committer?
    /// Set by the committer's thread when the store refused a batch of this epoch.
    private var fencedEpoch: Int64?

    init(context: Context, nodeID: String, ttlMilliseconds: Int) {
        self.context = context
        client = RedisClient(endpoint: context.endpoint)
        lease = RedisLeaderLease(client: client, node: nodeID, ttlMilliseconds: ttlMilliseconds)
    }

    /// Starts the thread; returns after its first round: this node leads (its state loaded),
    /// or it knows who does.
    /// - Throws: a ``RedisRelayStorageError`` when Redis cannot be reached, or the state not loaded.
    func start() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let first = FirstRound(continuation)
            let thread = Thread { [self] in run(first) }
            thread.name = "watchrelay-lease"
            thread.start()
        }
    }

    /// Ends the thread, stops the committer (after what it holds is committed) and releases
    /// the lease, so another node can take over at once. Call after the transport shut down.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            stopping = true
            if hasExited {
                condition.unlock()
                continuation.resume()
                return
            }
            exited.append(continuation)
            condition.signal()
            condition.unlock()
        }
        await client.close()
    }

    private func run(_ first: FirstRound) {
        var leading: RedisLease?
        var seen: RedisLease??
        var firstRound = true
        // Failed rounds in a row: the first is logged, the rest only counted until one works
        // (Redis down made a line every third of the TTL, 3 a second at --lease-ttl-ms 1000).
        var failures = 0
        while !isStopping {
            do {
                if let current = leading {
                    if try fenced(current) || !lease.renew(current) {
                        context.log.warning("cluster: lease lost", ("lease", current.description))
                        leading = nil
                        seen = nil
                        stepDown(current)
                    }
                } else {
                    let (now, taken) = try lease.tryAcquire()
                    if taken {
                        try lead(now)
                        leading = now
                    } else if seen != .some(now) {
                        if now.node == lease.node {
                            context.log.warning(
                                "cluster: the lease is held under this node's id by another process (a restart "
                                    + "within the lease's TTL, or two nodes with one id): waiting for it to expire",
                                ("lease", now.description))
                        }
                        seen = now
                        _ = context.post(ClusterNode.LeaderSeen(lease: now))
                    }
                }
                if firstRound { first.resume(.success(())) }
                if failures > 0 {
                    context.log.info("cluster: lease rounds work again", ("failed_rounds", String(failures)))
                    failures = 0
                }
            } catch {
                failures += 1
                if failures == 1 {
                    context.log.warning(
                        "cluster: lease round failed (again silently until one works)", ("error", "\(error)"))
                }
                if firstRound {
                    first.resume(.failure(error))
                    break
                }
            }
            firstRound = false
            pause()
        }
        condition.lock()
        let last = committer
        committer = nil
        condition.unlock()
        if let leading {
            waitUntilStopped(last)
            try? lease.release(leading)
        }
        condition.lock()
        hasExited = true
        let waiters = exited
        exited = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Loads the state with the lease's epoch and hands the engine to the node.
    private func lead(_ now: RedisLease) throws {
        let c = context
        let storage = RedisRelayStorage(endpoint: c.endpoint, fencingEpoch: now.epoch)
        do {
            if let warning = storage.durabilityWarning() { c.log.warning(warning) }
            let time = c.clock.now()
            let pairs =
                c.configuration.relay.loadsPayloadsOnDemand ? try storage.loadIndex(now: time) : try storage.loadAll(now: time)
            let core = RelayState(
                configuration: c.configuration.relay, environment: c.environment, pairs: pairs,
                wrongPairingCodes: try storage.loadWrongPairingCodes(now: time))
            let engine = RelayEngine(
                core: core, metrics: c.metrics, clock: c.clock, log: c.log, console: c.console,
                maxQueuedBytesPerConnection: c.configuration.maxQueuedBytesPerConnection)
            let committer = Committer.posting(storage: storage, log: c.log, post: c.post) { [weak self] in
                self?.fenced(epoch: now.epoch)
            }
            engine.attach(committer: committer)
            committer.start()
            condition.lock()
            self.committer = committer
            condition.unlock()
            c.log.info("cluster: leading", ("lease", now.description), ("pairs", String(pairs.count)))
            _ = c.post(ClusterNode.BecomeLeader(lease: now, engine: engine))
        } catch {
            try? lease.release(now)
            throw error
        }
    }

    private func stepDown(_ old: RedisLease) {
        _ = context.post(ClusterNode.StepDown(epoch: old.epoch))
        condition.lock()
        let last = committer
        committer = nil
        condition.unlock()
        // Its batches are refused by now; stopping it drops them (nothing was confirmed).
        waitUntilStopped(last)
    }

    /// The store refused a batch of `epoch` (called on the committer's thread): the lease
    /// thread steps down at once instead of at its next renewal.
    private func fenced(epoch: Int64) {
        condition.lock()
        fencedEpoch = epoch
        condition.signal()
        condition.unlock()
    }

    private func fenced(_ current: RedisLease) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return fencedEpoch == current.epoch
    }

    private func waitUntilStopped(_ committer: Committer?) {
        guard let committer else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            await committer.stop()
            done.signal()
        }
        done.wait()
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// Waits a third of the TTL, or less if stopped or fenced meanwhile.
    private func pause() {
        condition.lock()
        if !stopping {
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(lease.ttlMilliseconds) / 3000))
        }
        condition.unlock()
    }
}

/// The first round's outcome, handed to ``ClusterLeadership/start()`` once.
private typealias FirstRound = LockedState<CheckedContinuation<Void, any Error>?>

extension LockedState where Value == CheckedContinuation<Void, any Error>? {
    /// Resumes the waiting ``ClusterLeadership/start()`` with `result`, the first time only.
    fileprivate func resume(_ result: Result<Void, any Error>) {
        withLock { (waiting: inout Value) -> Value in
            let taken = waiting
            waiting = nil
            return taken
        }?.resume(with: result)
    }
}
