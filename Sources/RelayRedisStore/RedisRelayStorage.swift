import Foundation
import RedisClient
import RelayCore
import RelayProtocol

/// The relay's durable state in Redis, as a ``RelayStorage`` engine (`serve --store redis://…`).
///
/// Every batch is one atomic Lua script (``RedisRelayScripts``, which also documents the keys);
/// ``apply(_:urgent:)`` returns once Redis answered, which with `appendonly yes` and
/// `appendfsync always` is after the batch reached the disk. The calls block the calling
/// thread (the relay's committer) while the ``RedisClient``'s own thread does the I/O.
///
/// A batch whose reply was lost (Redis died after running it) is retried by the committer
/// with the same mutations; it carries the same batch number then, and the script skips a
/// number it already applied, so nothing is applied twice. `urgent` changes nothing: Redis
/// fsyncs every write under `appendfsync always`.
public final class RedisRelayStorage: RelayStorage, @unchecked Sendable {
    /// The client (its thread does the network I/O).
    public let client: RedisClient
    /// Names this store's batches in `wr:applied`.
    private let instance: String
    // @unchecked Sendable: `lastBatch` and `unconfirmed` are only touched with `lock` held
    // (NSLock, which ThreadSanitizer sees); calls are one at a time anyway (one committer).
    private let lock = NSLock()
    private var lastBatch: Int64 = 0
    /// The batch that failed without a reply, by number, until it is applied.
    private var unconfirmed: (number: Int64, mutations: [StoreMutation])?

    /// The leader's epoch its batches carry (nil: not fenced, one node alone on its Redis).
    public let fencingEpoch: Int64?

    /// A store on `endpoint`; connects on the first call.
    ///
    /// - Parameter fencingEpoch: the epoch of the lease this node leads with
    ///   (``RedisLeaderLease``): once another node took the lease, every batch fails with
    ///   ``RedisRelayStorageError/fenced(_:)`` and changes nothing.
    public init(endpoint: RedisEndpoint, timeoutMilliseconds: Int = 2000, fencingEpoch: Int64? = nil) {
        client = RedisClient(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
        instance = UUID().uuidString
        self.fencingEpoch = fencingEpoch
    }

    /// Applies `mutations` in order in one script: all of them are durable when this returns,
    /// or (when it throws) the committer may retry them.
    ///
    /// - Throws: ``RedisRelayStorageError/unreachable(_:)`` while Redis is down,
    ///   ``RedisRelayStorageError/fenced(_:)`` once another node leads,
    ///   ``RedisRelayStorageError/rejected(_:)`` for another error reply.
    public func apply(_ mutations: [StoreMutation], urgent: Bool) throws {
        guard !mutations.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        let number: Int64
        if let unconfirmed, unconfirmed.mutations == mutations {
            number = unconfirmed.number
        } else {
            lastBatch += 1
            number = lastBatch
        }
        var arguments: [[UInt8]] = ["EVAL", RedisRelayScripts.apply, "0", RedisRelayScripts.prefix, instance].map {
            Array($0.utf8)
        }
        arguments.append(Array(String(number).utf8))
        arguments.append(Array(String(RedisRelayScripts.finishedLimit).utf8))
        arguments.append(Array((fencingEpoch.map(String.init) ?? "").utf8))
        // The batch is retried as sent (`unconfirmed` compares the mutations as given); what goes
        // to the script is the same batch with each item's seq folded into its insert.
        for mutation in StoreMutation.coalesced(mutations) {
            RedisMutationEncoder.append(mutation, to: &arguments)
        }
        let reply = client.executeBlocking([RedisCommand(arguments: arguments)])[0]
        switch reply {
        case .success:
            unconfirmed = nil
        case .failure(let error):
            unconfirmed = (number, mutations)
            throw RedisRelayStorageError(error)
        }
    }

    /// Everything stored, pairs in creation order, after pruning complication uses older than 24 h.
    ///
    /// Each pair is read by one script (a consistent view of that pair); all pairs' scripts
    /// go in one pipeline.
    /// - Throws: ``RedisRelayStorageError``.
    public func loadAll(now: Timestamp) throws -> [PairSnapshot] {
        let ids = try single(RedisCommand("ZRANGE", RedisRelayScripts.prefix + "pairs", "0", "-1"))
        guard let elements = ids.elements else { throw RedisRelayStorageError.unexpectedReply("pairs: \(ids)") }
        let pairs = elements.compactMap(\.text)
        let cutoff = String(now.millisecondsSinceEpoch - RedisRelayScripts.complicationWindowMilliseconds)
        var snapshots: [PairSnapshot] = []
        snapshots.reserveCapacity(pairs.count)
        // Chunks keep one pipeline's replies to a bounded size.
        var start = 0
        while start < pairs.count {
            let chunk = pairs[start..<min(pairs.count, start + 500)]
            let commands = chunk.map {
                RedisCommand("EVAL", RedisRelayScripts.loadPair, "0", RedisRelayScripts.prefix, $0, cutoff)
            }
            for (pair, reply) in zip(chunk, client.executeBlocking(commands)) {
                let value: RedisValue
                do { value = try reply.get() } catch { throw RedisRelayStorageError(error) }
                if let snapshot = try RedisSnapshotDecoder.snapshot(pair: PairID(pair), value) {
                    snapshots.append(snapshot)
                }
            }
            start += chunk.count
        }
        return snapshots
    }

    /// ``loadAll(now:)`` with the payloads of unsent items dropped once decoded (their sizes
    /// kept). Each pair's reply still arrives whole, so the start briefly holds one pair's
    /// queue; afterwards only the delivery windows stay in memory.
    /// - Throws: ``RedisRelayStorageError``.
    public func loadIndex(now: Timestamp) throws -> [PairSnapshot] {
        var snapshots = try loadAll(now: now)
        for p in snapshots.indices {
            for role in Role.all {
                let items = snapshots[p].directions[role]?.items ?? []
                snapshots[p].directions[role]?.items = items.map { $0.seq == nil ? $0.withoutPayload() : $0 }
            }
        }
        return snapshots
    }

    /// The wrong pairing codes that still count at `now`, oldest first, after removing the ones
    /// that no longer do (one script).
    /// - Throws: ``RedisRelayStorageError``.
    public func loadWrongPairingCodes(now: Timestamp) throws -> [WrongPairingCode] {
        let reply = try single(
            RedisCommand(
                "EVAL", RedisRelayScripts.loadWrongPairingCodes, "0", RedisRelayScripts.prefix,
                String(now.millisecondsSinceEpoch)))
        guard let entries = reply.elements else { throw RedisRelayStorageError.unexpectedReply("wrong codes: \(reply)") }
        return try entries.map { entry in
            guard let text = entry.text else { throw RedisRelayStorageError.unexpectedReply("wrong codes: \(reply)") }
            return try RedisSnapshotDecoder.wrongPairingCode(text)
        }
    }

    /// The stored payloads of `sendIDs` queued in `direction` of `pair` (one `HMGET`); ids not
    /// stored are left out.
    /// - Throws: ``RedisRelayStorageError``.
    public func loadPayloads(_ pair: PairID, direction: Role, sendIDs: [String]) throws -> [ExactID: Payload] {
        guard !sendIDs.isEmpty else { return [:] }
        let key = RedisRelayScripts.prefix + "pair:" + pair.rawValue + ":" + direction.rawValue + ":items"
        let reply = try single(RedisCommand(["HMGET", key] + sendIDs))
        guard let values = reply.elements, values.count == sendIDs.count else {
            throw RedisRelayStorageError.unexpectedReply("HMGET \(key): \(reply)")
        }
        var payloads: [ExactID: Payload] = [:]
        for (sendID, value) in zip(sendIDs, values) {
            guard case .bulk(let bytes) = value else { continue }
            payloads[ExactID(sendID)] = try RedisSnapshotDecoder.item(sendID: sendID, bytes, seq: nil, key: key).payload
        }
        return payloads
    }

    /// What weakens durability on this server, or nil if it runs `appendonly yes` with
    /// `appendfsync always` (nil too when `CONFIG` is not allowed: nothing to tell).
    public func durabilityWarning() -> String? {
        let replies = client.executeBlocking([
            RedisCommand("CONFIG", "GET", "appendonly"), RedisCommand("CONFIG", "GET", "appendfsync"),
        ])
        guard case .success(let aof) = replies[0], case .success(let fsync) = replies[1],
            let appendonly = aof.elements?.last?.text, let appendfsync = fsync.elements?.last?.text
        else { return nil }
        if appendonly == "yes" && appendfsync == "always" { return nil }
        return "redis runs appendonly \(appendonly), appendfsync \(appendfsync): an accepted item can be lost "
            + "when redis-server dies (use appendonly yes, appendfsync always)"
    }

    private func single(_ command: RedisCommand) throws -> RedisValue {
        do { return try client.executeBlocking([command])[0].get() } catch { throw RedisRelayStorageError(error) }
    }
}
