import Foundation
import Primitives
import RedisClient
import RelayConsole
import RelayCore
import RelayRedisStore

/// The lease thread of a cluster node: every third of the lease's TTL it renews this node's
/// lease, or, while another node leads, tries to take it (it is free once the leader stopped
/// or its lease expired). On taking it, a loader thread reads the state from Redis (as a single
/// node does at start) and builds the engine, while this thread keeps renewing the lease (a
/// large store can take longer to load than the TTL: unrenewed, the lease expired and a second
/// node led too). Once loaded, it builds the committer (whose store carries the lease's epoch)
/// and hands the engine to the ``ClusterNode``; on losing the lease (renewal refused, a batch
/// fenced, or no renewal confirmed within ``RedisLeaderLease/validity``) it tells the node to
/// step down and stops that committer. Blocking Redis calls happen here and on the loader
/// thread, never on the lws service thread or the cooperative pool.
///
/// A stop ends the loads under way too: their stores' clients are closed (a load fails at its
/// next call) and the lease thread waits for their threads, so no thread of a stopped node still
/// reads Redis.
///
/// The node's service thread checks the lease's validity too (``LeaseValidity``), before its
/// engine handles anything: a node resumed after standing still past it steps down before it
/// answers a frame, rather than when this thread's next round posts the step-down.
///
/// `@unchecked Sendable`: `stopping`, `committer`, `fencedEpoch`, `loadingEpoch`, `loaded`,
/// `loads`, `hasExited` and `exited` are touched only with `condition` held; `held`, `validity`,
/// `loading`, `abandoned` and `seen` only on the lease thread; the rest is immutable.
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

    /// What the loader thread built for a leadership.
    private struct Loaded: Sendable {
        let storage: RedisRelayStorage
        let engine: RelayEngine
        let pairs: Int
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
    /// The epoch whose state the loader thread reads now (a loader of another epoch drops what it read).
    private var loadingEpoch: Int64?
    /// What the loader of ``loadingEpoch`` read, once it is done.
    private var loaded: Result<Loaded, any Error>?
    /// The store of each loader thread still running, by its epoch (a lost leadership's load
    /// may still run beside the next one's). A thread closes its store's client, unless it
    /// hands it over, and leaves this before it ends.
    private var loads: [Int64: RedisRelayStorage] = [:]
    /// Wakes the lease thread before its pause ends: stopped, a batch fenced, the state loaded.
    /// A semaphore, whose timeout is on the monotonic clock (NSCondition's is the wall clock's:
    /// a clock set back would stretch a pause past the lease's validity).
    private let wakeUp = DispatchSemaphore(value: 0)

    /// This node's lease, while it holds it (loading or leading), and until when it may act on
    /// it (``RedisLeaderLease/validity`` after sending the last call Redis confirmed).
    private var held: (lease: RedisLease, validUntil: ContinuousClock.Instant)?
    /// ``held``'s validity as the node's service thread sees it, once the engine is handed over.
    private var validity: LeaseValidity?
    /// Whether ``held``'s state is being loaded (the engine not handed over yet).
    private var loading = false
    /// A lease this node gave up because no renewal was confirmed in time: Redis may still
    /// hold it (a renewal answered too late), so it is released before taking a new one.
    private var abandoned: RedisLease?
    /// The lease of another node, as last posted to the node.
    private var seen: RedisLease??

    init(context: Context, nodeID: String, ttlMilliseconds: Int) {
        self.context = context
        client = RedisClient(
            endpoint: context.endpoint,
            timeoutMilliseconds: RedisLeaderLease.clientTimeoutMilliseconds(ttlMilliseconds: ttlMilliseconds))
        lease = RedisLeaderLease(client: client, node: nodeID, ttlMilliseconds: ttlMilliseconds)
    }

    /// Starts the thread; returns once this node leads (its state loaded), or knows who does.
    /// - Throws: a ``RedisRelayStorageError`` when Redis cannot be reached (at the first round,
    ///   or after this node lost the lease it was loading under), or the state not loaded.
    func start() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let first = FirstRound(continuation)
            let thread = Thread.named("relay-lease") { [self] in run(first) }
            thread.start()
        }
    }

    /// Ends the thread and a load under way, stops the committer (after what it holds is
    /// committed) and releases the lease, so another node can take over at once. Call after the transport shut down.
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
            condition.unlock()
            wakeUp.signal()
        }
        await client.close()
    }

    private func run(_ first: FirstRound) {
        // Until ``start()`` returned: once this node leads with its state loaded, or knows who leads.
        var starting = true
        var firstRound = true
        // Failed rounds in a row: the first is logged, the rest only counted until one works
        // (Redis down made a line every third of the TTL, 3 a second at --lease-ttl-ms 1000).
        var failures = 0
        while !isStopping {
            do {
                let answered = try round()
                if starting, !loading, held != nil || seen != nil {
                    first.resume(.success(()))
                    starting = false
                }
                if answered, failures > 0 {
                    context.log.info("cluster: lease rounds work again", ("failed_rounds", String(failures)))
                    failures = 0
                }
            } catch {
                failures += 1
                if failures == 1 {
                    context.log.warning(
                        "cluster: lease round failed (again silently until one works)", ("error", "\(error)"))
                }
                // The start fails when Redis does not answer its first round or when the state
                // cannot be loaded; not for a renewal that failed while the state loads: that
                // one is retried within the lease's validity, as a running leader's is (it ended
                // the start, and `serve` with it, though the lease was still this node's).
                if starting, firstRound || !loading {
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
        loadingEpoch = nil
        condition.unlock()
        endLoads()
        if let held {
            waitUntilStopped(last)
            try? lease.release(held.lease)
        }
        first.resume(.failure(RedisRelayStorageError.unreachable("the node stopped before its first lease round ended")))
        condition.lock()
        hasExited = true
        let waiters = exited
        exited = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// One round: renew the lease held (and hand over the state once loaded), or try to take it.
    /// Returns whether Redis answered (false: the node let go of its lease without asking).
    private func round() throws -> Bool {
        if let held {
            let current = held.lease
            if fenced(current) {
                lose(current, "a batch of its epoch was fenced")
                return false
            }
            if ContinuousClock.now >= held.validUntil {
                // Redis may let it expire any moment now, and another node lead: stop acting first.
                abandoned = current
                lose(current, "no renewal confirmed in time")
                return false
            }
            let sent = ContinuousClock.now
            if try !lease.renew(current, until: held.validUntil) {
                lose(current, "another node holds it")
                return true
            }
            let until = sent + lease.validity
            if let validity, !validity.extend(to: until) {
                // The service thread saw the validity end first (the node stood still) and
                // stepped down; Redis holds the lease a while yet.
                abandoned = current
                lose(current, "its validity ended before a renewal was confirmed")
                return true
            }
            self.held = (current, until)
            if loading, let result = takeLoaded() {
                loading = false
                try handOver(current, until: until, result)
            }
            return true
        }
        if let old = abandoned {
            try lease.release(old, until: ContinuousClock.now + lease.validity)
            abandoned = nil
        }
        let sent = ContinuousClock.now
        let (now, taken) = try lease.tryAcquire(until: sent + lease.validity)
        if taken {
            held = (now, sent + lease.validity)
            startLoading(now)
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
        return true
    }

    /// Reads the state with the lease's epoch on a thread of its own (the lease thread renews
    /// meanwhile); what it read is handed over at the first round after it is done.
    private func startLoading(_ now: RedisLease) {
        loading = true
        let storage = RedisRelayStorage(endpoint: context.endpoint, fencingEpoch: now.epoch)
        condition.lock()
        loadingEpoch = now.epoch
        loaded = nil
        loads[now.epoch] = storage
        condition.unlock()
        let thread = Thread.named("relay-load") { [self] in
            let result = Result<Loaded, any Error> { try load(now, from: storage) }
            condition.lock()
            let current = loadingEpoch == now.epoch
            let handedOver = current && (try? result.get()) != nil
            if current { loaded = result }
            // Handed over, the store is the lease thread's (its committer's, or closed at a stop).
            if handedOver { finishLoad(now.epoch) }
            condition.unlock()
            if current { wakeUp.signal() }
            guard !handedOver else { return }
            // Its connection ends with this thread, not whenever the store is released.
            storage.client.closeBlocking()
            condition.lock()
            finishLoad(now.epoch)
            condition.unlock()
        }
        thread.start()
    }

    /// The loader of `epoch` no longer touches its store (`condition` held).
    private func finishLoad(_ epoch: Int64) {
        loads[epoch] = nil
        condition.broadcast()
    }

    /// Ends the loads under way (at a stop): their stores' clients are closed, so each fails at
    /// its next call to Redis, and this returns once their threads are done with them; a load done but not
    /// handed over has its store closed too.
    private func endLoads() {
        condition.lock()
        let reading = Array(loads.values)
        let unused = loaded
        loaded = nil
        condition.unlock()
        for storage in reading { storage.client.closeBlocking() }
        close(unused)
        condition.lock()
        while !loads.isEmpty { condition.wait() }
        condition.unlock()
    }

    /// Closes the store of a load that is dropped, not handed over.
    private func close(_ unused: Result<Loaded, any Error>?) {
        if case .success(let done)? = unused { done.storage.client.closeBlocking() }
    }

    /// The state of the cluster, read with `now`'s epoch from `storage`, in a new engine (on
    /// the loader thread).
    private func load(_ now: RedisLease, from storage: RedisRelayStorage) throws -> Loaded {
        let c = context
        c.configuration.clusterLoadHook?()
        if let warning = storage.durabilityWarning() { c.log.warning(warning) }
        let core = try c.configuration.loadCore(from: storage, environment: c.environment, now: c.clock.now())
        let engine = RelayEngine(
            core: core, metrics: c.metrics, clock: c.clock, log: c.log, console: c.console,
            maxQueuedBytesPerConnection: c.configuration.maxQueuedBytesPerConnection)
        return Loaded(storage: storage, engine: engine, pairs: core.pairCount)
    }

    /// What the loader read, if it is done.
    private func takeLoaded() -> Result<Loaded, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        guard let result = loaded else { return nil }
        loaded = nil
        loadingEpoch = nil
        return result
    }

    /// Gives the loaded engine its committer and hands it to the node with the lease's validity
    /// (it was just renewed, valid `until`); a failed load gives the lease up.
    private func handOver(_ now: RedisLease, until: ContinuousClock.Instant, _ result: Result<Loaded, any Error>) throws {
        let c = context
        let loaded: Loaded
        do {
            loaded = try result.get()
        } catch {
            held = nil
            try? lease.release(now, until: ContinuousClock.now + lease.validity)
            throw error
        }
        let committer = Committer.posting(storage: loaded.storage, log: c.log, post: c.post) { [weak self] in
            self?.fenced(epoch: now.epoch)
        }
        loaded.engine.attach(committer: committer)
        committer.start()
        condition.lock()
        self.committer = committer
        condition.unlock()
        let validity = LeaseValidity(until: until) { [wakeUp] in wakeUp.signal() }
        self.validity = validity
        c.log.info("cluster: leading", ("lease", now.description), ("pairs", String(loaded.pairs)))
        _ = c.post(ClusterNode.BecomeLeader(lease: now, engine: loaded.engine, validity: validity))
    }

    /// This node no longer holds `old` (or may not act on it): the node closes its clients and
    /// drops its engine, the committer stops, a load under way is dropped when it ends.
    private func lose(_ old: RedisLease, _ why: String) {
        context.log.warning("cluster: lease lost", ("lease", old.description), ("why", why))
        held = nil
        validity = nil
        seen = nil
        loading = false
        _ = context.post(ClusterNode.StepDown(epoch: old.epoch))
        condition.lock()
        let last = committer
        committer = nil
        loadingEpoch = nil
        let unused = loaded
        loaded = nil
        condition.unlock()
        close(unused)
        // Its batches are refused by now; stopping it drops them (nothing was confirmed).
        waitUntilStopped(last)
    }

    /// The store refused a batch of `epoch` (called on the committer's thread): the lease
    /// thread steps down at once instead of at its next renewal.
    private func fenced(epoch: Int64) {
        condition.lock()
        fencedEpoch = epoch
        condition.unlock()
        wakeUp.signal()
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

    /// Waits a third of the TTL, or less: until the held lease's validity ends, or the thread is
    /// woken (stopped, fenced, loaded) meanwhile.
    private func pause() {
        var until = ContinuousClock.now + lease.renewalInterval
        if let held { until = min(until, held.validUntil) }
        wakeUp.wait(until: until)
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
