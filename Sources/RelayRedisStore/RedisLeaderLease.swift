import RedisClient

/// Who leads a cluster of relay nodes on one Redis: `wr:leader` = `NODE:EPOCH`.
public struct RedisLease: Hashable, Sendable, CustomStringConvertible {
    /// The leading node's id (``RedisLeaderLease/validNodeID(_:)``).
    public let node: String
    /// Its fencing token: `wr:epoch` when it took the lease. Every leadership has a new one.
    public let epoch: Int64

    public init(node: String, epoch: Int64) {
        self.node = node
        self.epoch = epoch
    }

    /// Parses `NODE:EPOCH`.
    init?(_ value: String) {
        guard let colon = value.lastIndex(of: ":"), let epoch = Int64(value[value.index(after: colon)...]) else {
            return nil
        }
        self.init(node: String(value[..<colon]), epoch: epoch)
    }

    /// `NODE:EPOCH`, as stored.
    public var description: String { "\(node):\(epoch)" }
}

/// The leader lease of one node: at most one node at a time holds `wr:leader`, which expires
/// `ttlMilliseconds` after its last renewal.
///
/// ``acquire()`` takes the lease when nobody holds it, with the next `INCR wr:epoch` as its
/// epoch; the store of the node that took it carries that epoch in every batch
/// (``RedisRelayStorage/init(endpoint:timeoutMilliseconds:fencingEpoch:)``), and the apply
/// script refuses a batch whose epoch is no longer `wr:epoch`. So after a takeover the old
/// leader can commit nothing, even if it has not noticed yet (a paused process, a partition):
/// fencing, not the clock, keeps two leaders from both writing. The lease's TTL only decides how
/// soon a dead leader is replaced.
///
/// Each call is one script (atomic) and blocks the calling thread: call it from a thread of
/// the caller's own (the relay's lease thread).
///
/// **Timing.** Redis counts the TTL from when it ran the call that took or renewed the lease,
/// which is after the holder sent it; so the holder may act as leader until ``validity`` after
/// *sending* a call Redis confirmed, never longer, and gives up waiting for a reply at that
/// time (`until:`). ``validity`` is three quarters of the TTL: the last quarter covers the
/// holder's own step-down (closing its clients) and a clock that runs a little slower than
/// Redis's. It renews every ``renewalInterval`` (a third), so one lost or slow renewal is
/// retried before the validity ends.
public final class RedisLeaderLease: Sendable {
    /// This node's id.
    public let node: String
    /// How long the lease lasts after each renewal.
    public let ttlMilliseconds: Int
    private let client: RedisClient

    /// How long after sending a call that took or renewed the lease (and that Redis confirmed)
    /// the holder may act as leader: three quarters of the TTL, so it stops before Redis can
    /// have let the lease expire.
    public var validity: Duration { .milliseconds(ttlMilliseconds * 3 / 4) }

    /// How often the holder renews: a third of the TTL.
    public var renewalInterval: Duration { .milliseconds(ttlMilliseconds / 3) }

    /// The read, write and connect timeout of the client a lease with `ttlMilliseconds` should
    /// use: a third of the TTL (at least 50 ms, at most the 2 s of ``RedisClient``'s default),
    /// so a stalled connection is given up and reopened by the next renewal, not after the
    /// lease's validity is over. (The calls also stop waiting at their `until:` whatever the
    /// socket does.)
    public static func clientTimeoutMilliseconds(ttlMilliseconds: Int) -> Int {
        min(2000, max(50, ttlMilliseconds / 3))
    }

    /// A lease for `node` (check it with ``validNodeID(_:)``) through `client`.
    public init(client: RedisClient, node: String, ttlMilliseconds: Int) {
        precondition(Self.validNodeID(node), "invalid node id \(node)")
        self.client = client
        self.node = node
        self.ttlMilliseconds = ttlMilliseconds
    }

    /// Whether `id` can name a node: 1–64 of `A–Z a–z 0–9 _ -` (it is part of keys, channels
    /// and connection ids).
    public static func validNodeID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { c in
                (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95
            }
    }

    /// Takes the lease if nobody holds it; returns the lease as it is now (this node's or another's).
    /// - Throws: ``RedisRelayStorageError`` when Redis cannot be asked.
    public func acquire() throws(RedisRelayStorageError) -> RedisLease {
        try tryAcquire().lease
    }

    /// ``acquire()``, also saying whether this call took the lease. A lease already held under
    /// this node's id was not taken by this call: it may be a previous process's with the same
    /// id (restarted within the TTL), which must not be reused (its state, its epoch).
    /// - Throws: ``RedisRelayStorageError`` when Redis cannot be asked.
    ///
    /// - Parameter deadline: when to stop waiting for the reply (then it throws
    ///   ``RedisRelayStorageError/unreachable(_:)``); nil: the client's timeout.
    public func tryAcquire(until deadline: ContinuousClock.Instant? = nil) throws(RedisRelayStorageError) -> (
        lease: RedisLease, taken: Bool
    ) {
        let reply = try run(Self.acquireScript, until: deadline, String(ttlMilliseconds))
        guard let parts = reply.elements, parts.count == 2, let text = parts[0].text, let lease = RedisLease(text),
            let taken = parts[1].integer
        else {
            throw .unexpectedReply("lease: \(reply)")
        }
        return (lease, taken == 1)
    }

    /// Extends `lease` (this node's) by the TTL; false when it is no longer this node's (another
    /// node took over: step down). A lease that expired while nobody took over (Redis was
    /// away longer than the TTL) is taken back with the same epoch.
    /// - Parameter deadline: when to stop waiting for the reply: the end of the lease's
    ///   ``validity`` (then it throws ``RedisRelayStorageError/unreachable(_:)``).
    /// - Throws: ``RedisRelayStorageError`` when Redis cannot be asked, or did not answer by
    ///   `deadline` (the lease may still be ours, or expire).
    public func renew(_ lease: RedisLease, until deadline: ContinuousClock.Instant? = nil) throws(RedisRelayStorageError)
        -> Bool
    {
        try run(Self.renewScript, until: deadline, String(ttlMilliseconds), lease.description, String(lease.epoch))
            .integer == 1
    }

    /// Gives up `lease` if it is still this node's (a clean shutdown: another node may take
    /// over at once instead of after the TTL).
    public func release(_ lease: RedisLease, until deadline: ContinuousClock.Instant? = nil) throws(RedisRelayStorageError) {
        _ = try run(Self.releaseScript, until: deadline, lease.description)
    }

    /// The lease as it is now, nil when nobody holds it.
    public func current() throws(RedisRelayStorageError) -> RedisLease? {
        let reply = try single(RedisCommand("GET", RedisRelayScripts.prefix + "leader"))
        return reply.text.flatMap(RedisLease.init)
    }

    private func run(_ script: String, until deadline: ContinuousClock.Instant?, _ arguments: String...)
        throws(RedisRelayStorageError) -> RedisValue
    {
        try single(RedisCommand(["EVAL", script, "0", RedisRelayScripts.prefix, node] + arguments), until: deadline)
    }

    private func single(_ command: RedisCommand, until deadline: ContinuousClock.Instant? = nil) throws(RedisRelayStorageError)
        -> RedisValue
    {
        switch client.executeBlocking([command], until: deadline)[0] {
        case .success(let value): return value
        case .failure(let error): throw RedisRelayStorageError(error)
        }
    }

    /// `PREFIX NODE TTL` → `{the lease value after the call, 1 if this call took it else 0}`.
    static let acquireScript = #"""
        local pre, node, ttl = ARGV[1], ARGV[2], ARGV[3]
        local held = redis.call('GET', pre .. 'leader')
        if held then return {held, 0} end
        local value = node .. ':' .. redis.call('INCR', pre .. 'epoch')
        redis.call('SET', pre .. 'leader', value, 'PX', ttl)
        return {value, 1}
        """#

    /// `PREFIX NODE TTL VALUE EPOCH` → 1 renewed, 0 lost.
    static let renewScript = #"""
        local pre, ttl, value, epoch = ARGV[1], ARGV[3], ARGV[4], ARGV[5]
        local held = redis.call('GET', pre .. 'leader')
        if held == value then
          redis.call('PEXPIRE', pre .. 'leader', ttl)
          return 1
        end
        if not held and redis.call('GET', pre .. 'epoch') == epoch then
          redis.call('SET', pre .. 'leader', value, 'PX', ttl)
          return 1
        end
        return 0
        """#

    /// `PREFIX NODE VALUE` → 1 released, 0 not ours.
    static let releaseScript = #"""
        local pre, value = ARGV[1], ARGV[3]
        if redis.call('GET', pre .. 'leader') == value then
          redis.call('DEL', pre .. 'leader')
          return 1
        end
        return 0
        """#
}
