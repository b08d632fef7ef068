import Primitives
import RedisClient
import RelayConsole
import RelayRedisStore
import WebSocketTransport

/// One relay node of a cluster on one Redis, on its lws service thread (docs/REDIS.md,
/// "Several nodes"): every node accepts clients; the node holding the leader lease runs the
/// one ``RelayEngine``; the others are edges that forward their clients' connections to it
/// over Redis pub/sub (``ClusterMessage``) and write back what it answers.
///
/// As leader it hands its own connections' events to the engine as they are, and the
/// forwarded ones under IDs of ``RemoteLinks``; what the engine queues for a forwarded
/// connection is taken out of the batch and published to that connection's edge. As an edge,
/// a client connection is forwarded to the leader of the moment; when the leader changes, the
/// subscription breaks, or no leader is known, its clients are closed with **1001** (reason
/// "relay leader changing") and reconnect (the protocol's resume makes that lossless).
///
/// Other threads (the subscriber, the lease thread, the committer) reach it only through
/// ``WebSocketServer/post(_:)``. Everything runs on the service thread, one call at a time;
/// that is what `@unchecked Sendable` stands for.
final class ClusterNode: ServerEventHandler, @unchecked Sendable {
    /// The close code of a forwarded client when its leader changes: 1001, which PROTOCOL.md
    /// §2.3 already tells clients to answer by reconnecting with backoff and resuming. Not 1012
    /// ("service restart"): lws 4.1 clients take a 1012 close frame for a protocol error and
    /// report 1002.
    static let leaderChangingCode: UInt16 = 1001
    static let leaderChangingReason = "relay leader changing"

    /// A message from another node (posted by the subscriber thread).
    struct Inbound: Sendable { let message: ClusterMessage }
    /// The subscription is (again) up, or broke: what was published to us meanwhile is lost.
    struct Subscription: Sendable { let up: Bool }
    /// Another node leads (or nobody, nil): posted by the lease thread when that changes.
    struct LeaderSeen: Sendable { let lease: RedisLease? }
    /// This node took the lease and loaded the state: it runs `engine` from now on, while
    /// `validity` holds.
    struct BecomeLeader: Sendable {
        let lease: RedisLease
        let engine: RelayEngine
        let validity: LeaseValidity
    }
    /// This node's lease `epoch` is lost (another node took over, or the store fenced a batch).
    struct StepDown: Sendable { let epoch: Int64 }
    /// A pipeline of publishes flushed in `generation` failed: some of them may be lost.
    struct PublishFailed: Sendable { let generation: UInt64 }

    let nodeID: String
    private let publisher: RedisClient
    private let log: Logger
    /// The node's console (`serve --console`), told whether this node leads.
    private let console: ConsoleHub?
    private let clock: Primitives.Clock
    private var engine: RelayEngine?
    private var lease: RedisLease?
    /// Until when ``engine`` may act (``leading(_:)`` checks it before each use).
    private var validity: LeaseValidity?
    /// The leader this edge forwards to (nil while leading or while no leader is known).
    private var leader: RedisLease?
    private var subscribed = false
    /// Every client connection of this node's own lws context.
    private var local: Set<ConnectionID> = []
    /// Those forwarded to ``leader``.
    private var forwarded: Set<ConnectionID> = []
    /// Connections other nodes forward to this one while it leads.
    private var remote = RemoteLinks()
    /// PUBLISH commands of this turn, sent as one pipeline at its end.
    private var publishes: [RedisCommand] = []
    /// Failed publish pipelines handled so far (``PublishFailed``).
    private var publishGeneration: UInt64 = 0
    /// Posts to this node's transport, set once it exists (``attach(post:)``).
    private let mailbox = LockedState<(@Sendable (any Sendable) -> Bool)?>(nil)

    /// - Parameter publisher: made with `haltsAfterFailure` (frames must not be skipped: the
    ///   node closes the forwarded connections after a failed publish, then resumes it).
    init(nodeID: String, publisher: RedisClient, log: Logger, console: ConsoleHub? = nil, clock: Primitives.Clock = .system) {
        self.nodeID = nodeID
        self.publisher = publisher
        self.log = log
        self.console = console
        self.clock = clock
        console?.setNode(nodeID, leads: false, at: clock.now())
    }

    /// Where a failed publish is reported (the transport's ``WebSocketServer/post(_:)``).
    func attach(post: @escaping @Sendable (any Sendable) -> Bool) {
        mailbox.withLock { $0 = post }
    }

    /// Closes the Redis connection the node publishes on (after the transport shut down).
    func closePublisher() async { await publisher.close() }

    // MARK: - ServerEventHandler

    func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
        switch event {
        case .opened(let id, _): local.insert(id)
        case .closed(let id, _, _): local.remove(id)
        default: break
        }
        if let engine = leading(&outbound) {
            engine.handle(event, outbound: &outbound)
            route(&outbound)
            return
        }
        switch event {
        case .opened(let id, let address):
            guard let leader, subscribed else {
                outbound.close(id, code: Self.leaderChangingCode, reason: Self.leaderChangingReason)
                return
            }
            forwarded.insert(id)
            publish(.opened(connection: name(id), address: address), to: leader.node)
        case .message(let id, let bytes): forward(id, .clientText(connection: name(id), bytes))
        case .binary(let id): forward(id, .clientBinary(connection: name(id)))
        case .tooLarge(let id, let size): forward(id, .clientTooLarge(connection: name(id), size: size))
        case .closed(let id, _, _):
            if forwarded.remove(id) != nil, let leader { publish(.clientGone(connection: name(id)), to: leader.node) }
        }
    }

    func received(_ message: any Sendable, outbound: inout OutboundBatch) {
        switch message {
        case let inbound as Inbound:
            if inbound.message.isForLeader {
                leaderReceived(inbound.message, &outbound)
            } else {
                edgeReceived(inbound.message, &outbound)
            }
        case let subscription as Subscription:
            let wasSubscribed = subscribed
            subscribed = subscription.up
            if !subscription.up {
                // Said only when it was up: at a start with Redis away there was nothing to lose.
                if wasSubscribed { log.warning("cluster subscription lost: forwarded connections are closed") }
                closeForwarded(&outbound)
                dropRemote(&outbound)
            }
        case let seen as LeaderSeen:
            guard engine == nil, seen.lease != leader else { return }
            log.info("cluster leader", ("leader", seen.lease?.description ?? "none"))
            closeForwarded(&outbound)
            leader = seen.lease
        case let become as BecomeLeader:
            guard engine == nil else { return }
            // ClusterLeadership's "cluster: leading" (with the pairs loaded) says it at info.
            log.debug("cluster: this node leads", ("lease", become.lease.description))
            closeForwarded(&outbound)
            leader = nil
            lease = become.lease
            engine = become.engine
            validity = become.validity
            console?.setNode(nodeID, leads: true, at: clock.now())
        case let failed as PublishFailed:
            // Whatever a forwarded connection was owed may have a hole now (a `deliver` lost and
            // the next one sent: the cumulative ack would cover the lost one). They all resume.
            guard failed.generation == publishGeneration else { return }
            log.warning("cluster: a publish failed: forwarded connections are closed")
            publishGeneration += 1
            publisher.resumeAfterFailure()
            closeForwarded(&outbound)
            dropRemote(&outbound)
        case let down as StepDown:
            guard engine != nil, lease?.epoch == down.epoch else { return }
            stepDown(&outbound)
        // Answered here when no engine may answer it (`leading` steps down if its time is over).
        case let request as RelayEngine.StatsRequest where leading(&outbound) == nil:
            request.reply.resume(returning: RelayEngine.Stats(connections: local.count, pairs: 0, queued: 0))
        default:
            guard let engine = leading(&outbound) else { return }
            engine.received(message, outbound: &outbound)
            route(&outbound)
        }
    }

    func timerFired(outbound: inout OutboundBatch) {
        guard let engine = leading(&outbound) else { return }
        engine.timerFired(outbound: &outbound)
        route(&outbound)
    }

    func endOfTurn(outbound: inout OutboundBatch) -> Duration? {
        var delay: Duration?
        if let engine = leading(&outbound) {
            delay = engine.endOfTurn(outbound: &outbound)
            route(&outbound)
        } else if let wait = console?.heartbeat(now: clock.now()) {
            // An edge's console pages get no pushes; the heartbeat still finds those gone.
            delay = .milliseconds(wait + 1)
        }
        flush()
        return delay
    }

    func finished() {
        // The edges' clients reconnect, to the node that leads next (the lease is released).
        for (_, name) in remote.all {
            publish(.close(connection: name, code: Self.leaderChangingCode, reason: Self.leaderChangingReason), toEdgeOf: name)
        }
        remote.removeAll()
        flush()
        engine?.finished()
    }

    // MARK: - Leader

    /// The engine, while this node may act on its lease: once its validity is over (the node
    /// stood still past it), the node steps down here, before the engine handles anything more,
    /// rather than when the lease thread's ``StepDown`` comes.
    private func leading(_ outbound: inout OutboundBatch) -> RelayEngine? {
        guard let engine else { return nil }
        if let validity, !validity.holds(at: .now) {
            stepDown(&outbound)
            return nil
        }
        return engine
    }

    /// Closes this node's clients and the ones forwarded to it, and drops its engine (after
    /// handing what it holds to the committer, whose batches are fenced if another node leads).
    private func stepDown(_ outbound: inout OutboundBatch) {
        guard let engine else { return }
        log.warning("cluster: this node no longer leads; its connections are closed", ("epoch", String(lease?.epoch ?? 0)))
        for id in local {
            outbound.close(id, code: Self.leaderChangingCode, reason: Self.leaderChangingReason)
        }
        dropRemote(&outbound)
        self.engine = nil
        lease = nil
        validity = nil
        engine.finished()
        engine.consoleStepDown()
        console?.setNode(nodeID, leads: false, at: clock.now())
    }

    private func leaderReceived(_ message: ClusterMessage, _ outbound: inout OutboundBatch) {
        let name = message.connection
        guard let engine = leading(&outbound) else {
            // The edge thinks this node leads; it does not (any more).
            if case .clientGone = message { return }
            publish(.close(connection: name, code: Self.leaderChangingCode, reason: Self.leaderChangingReason), toEdgeOf: name)
            return
        }
        if case .opened(_, let address) = message {
            guard let id = remote.open(name) else { return }
            engine.handle(.opened(id, remoteAddress: address), outbound: &outbound)
            route(&outbound)
            return
        }
        guard let id = remote.id(of: name) else {
            // A connection opened before this node led (or before its subscription broke).
            if case .clientGone = message { return }
            publish(.close(connection: name, code: Self.leaderChangingCode, reason: Self.leaderChangingReason), toEdgeOf: name)
            return
        }
        switch message {
        case .clientText(_, let bytes): engine.handle(.message(id, bytes), outbound: &outbound)
        case .clientBinary: engine.handle(.binary(id), outbound: &outbound)
        case .clientTooLarge(_, let size): engine.handle(.tooLarge(id, size: size), outbound: &outbound)
        case .clientGone:
            _ = remote.remove(id)
            engine.handle(.closed(id, code: nil, reason: ""), outbound: &outbound)
        default: return
        }
        route(&outbound)
    }

    /// Publishes what the engine queued for forwarded connections; a close of one is also its
    /// end for the engine (as lws reports `closed` after a close of its own connections).
    private func route(_ outbound: inout OutboundBatch) {
        guard let engine, !remote.isEmpty else { return }
        var items = outbound.removeItems(where: RemoteLinks.isRemote)
        while !items.isEmpty {
            var closed: [(ConnectionID, UInt16, String)] = []
            for item in items {
                switch item {
                case .text(let id, let bytes):
                    if let name = remote.name(of: id) { publish(.send(connection: name, bytes), toEdgeOf: name) }
                case .close(let id, let code, let reason):
                    guard let name = remote.remove(id) else { continue }
                    publish(.close(connection: name, code: code, reason: reason), toEdgeOf: name)
                    closed.append((id, code, reason))
                }
            }
            for (id, code, reason) in closed {
                engine.handle(.closed(id, code: code, reason: reason), outbound: &outbound)
            }
            items = remote.isEmpty ? [] : outbound.removeItems(where: RemoteLinks.isRemote)
        }
    }

    /// Ends every forwarded connection (their edges are told, if they can be reached).
    private func dropRemote(_ outbound: inout OutboundBatch) {
        let all = remote.all
        remote.removeAll()
        for (id, name) in all {
            publish(.close(connection: name, code: Self.leaderChangingCode, reason: Self.leaderChangingReason), toEdgeOf: name)
            engine?.handle(.closed(id, code: nil, reason: ""), outbound: &outbound)
        }
        if engine != nil { _ = outbound.removeItems(where: RemoteLinks.isRemote) }
    }

    // MARK: - Edge

    private func edgeReceived(_ message: ClusterMessage, _ outbound: inout OutboundBatch) {
        guard let id = localID(message.connection), forwarded.contains(id) else { return }
        switch message {
        case .send(_, let bytes): outbound.send(bytes, to: id)
        case .close(_, let code, let reason):
            forwarded.remove(id)
            outbound.close(id, code: code, reason: reason)
        default: break
        }
    }

    private func forward(_ id: ConnectionID, _ message: ClusterMessage) {
        guard forwarded.contains(id), let leader else { return }
        publish(message, to: leader.node)
    }

    /// Closes every forwarded client with 1001 and tells the leader it forwarded them to that
    /// they are gone: lws reports their `closed` once they are no longer in `forwarded`, so
    /// ``handle(_:outbound:)`` says nothing then. A leader that still runs (only this edge's
    /// subscription broke) would otherwise keep each as connected: its peer never told the
    /// device left, its connection counted against the quotas, until the device came back.
    private func closeForwarded(_ outbound: inout OutboundBatch) {
        for id in forwarded {
            outbound.close(id, code: Self.leaderChangingCode, reason: Self.leaderChangingReason)
            if let leader { publish(.clientGone(connection: name(id)), to: leader.node) }
        }
        forwarded.removeAll()
    }

    // MARK: - Names and publishing

    private func name(_ id: ConnectionID) -> String { "\(nodeID):\(id.rawValue)" }

    private func localID(_ name: String) -> ConnectionID? {
        guard ClusterMessage.edge(of: name) == nodeID, let colon = name.lastIndex(of: ":"),
            let raw = UInt64(name[name.index(after: colon)...])
        else { return nil }
        return ConnectionID(rawValue: raw)
    }

    private func publish(_ message: ClusterMessage, toEdgeOf name: String) {
        guard let edge = ClusterMessage.edge(of: name) else { return }
        publish(message, to: edge)
    }

    private func publish(_ message: ClusterMessage, to node: String) {
        publishes.append(
            RedisCommand(arguments: [Array("PUBLISH".utf8), Array(ClusterMessage.channel(of: node, database: publisher.endpoint.database).utf8), message.encoded]))
    }

    private func flush() {
        guard !publishes.isEmpty else { return }
        let generation = publishGeneration
        let mailbox = mailbox
        publisher.submit(publishes) { results in
            guard results.contains(where: { if case .failure = $0 { true } else { false } }) else { return }
            _ = mailbox.withLock { $0 }?(PublishFailed(generation: generation))
        }
        publishes.removeAll(keepingCapacity: true)
    }
}
