import Foundation
import Primitives
import RedisClient
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

/// Several `watchrelay serve --store redis://…` nodes (child processes) on one redis-server:
/// a phone and a watch on different nodes behave as on one node, and a kill -9 of the leader
/// moves its clients to another node with nothing accepted lost or doubled (docs/REDIS.md).
@Suite(.timeLimit(.minutes(5)), .serialized)
struct ClusterTests {
    /// A redis-server and relay nodes on it, the first started leading.
    final class Cluster: @unchecked Sendable {
        // @unchecked: `nodes` is only touched by the owning test task.
        let redis: RedisServerProcess
        let directory = TemporaryDirectory()
        let clients: WebSocketClientContext
        var nodes: [String: RelayProcess] = [:]
        /// Short enough for a takeover test, long enough that a loaded machine renews in time.
        static let leaseTTL = Int(1500 * timeoutScale)

        /// With `debugLogs`, each node's debug log goes to ``log(_:)``.
        init(_ names: [String], debugLogs: Bool = false) async throws {
            redis = try await RedisServerProcess.start()
            clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
            // One after the other: each returns once it leads or knows the leader.
            for name in names {
                nodes[name] = try await RelayProcess.start(
                    db: directory.path("\(name).db"),
                    extra: ["--store", redis.url, "--node-id", name, "--lease-ttl-ms", String(Self.leaseTTL)],
                    debugLog: debugLogs ? directory.path("\(name).log") : nil)
            }
        }

        func url(_ name: String) -> String { nodes[name]!.url }

        /// What node `name` logged so far (started with `debugLogs`).
        func log(_ name: String) -> String {
            (try? String(contentsOfFile: directory.path("\(name).log"), encoding: .utf8)) ?? ""
        }

        func device(_ role: Role, on node: String, name: String? = nil) async throws -> TestDevice {
            try await TestDevice.connect(url(node), clients: clients, role: role, name: name ?? "Test \(role)")
        }

        func stop() async {
            await clients.shutdown()
            for node in nodes.values { await node.stop() }
            await redis.stop()
        }
    }

    /// How long a client may wait for a frame on a cluster (a forwarded frame crosses Redis twice).
    static let wait = 10 * timeoutScale
    /// How long until a dead leader's lease expired and another node leads.
    static let takeover = 30 * timeoutScale

    /// Pairs a phone on `phoneNode` with a watch on `watchNode`: the code is issued on one node
    /// and joined on the other.
    /// A phone connected to `url` that asked for a pairing code and got it: the node it talks
    /// to answers from the leader's core (its own, or forwarded).
    static func phoneWithCode(via url: String, _ clients: WebSocketClientContext) async throws -> (phone: TestDevice, code: PairCode) {
        let phone = try await TestDevice.connect(url, clients: clients, role: .phone, name: "Test phone")
        try await phone.hello()
        phone.send(.pairBegin(Request(id: "pb-1")))
        guard case .pairCode(let code) = try await phone.next(wait) else { throw TestFailure("pair.code via \(url)") }
        return (phone, code)
    }

    static func pair(_ cluster: Cluster, phone phoneNode: String, watch watchNode: String) async throws -> (
        phone: TestDevice, watch: TestDevice, phoneToken: String, watchToken: String
    ) {
        let phone = try await cluster.device(.phone, on: phoneNode)
        try await phone.hello()
        phone.send(.pairBegin(Request(id: "pb-1")))
        guard case .pairCode(let code) = try await phone.next(wait) else { throw TestFailure("expected pair.code") }
        let watch = try await cluster.device(.watch, on: watchNode)
        try await watch.hello()
        watch.send(.pairJoin(PairJoin(id: "pj-1", code: code.code)))
        guard case .paired(let wp) = try await watch.next(wait) else { throw TestFailure("expected paired (watch)") }
        guard case .paired(let pp) = try await phone.next(wait) else { throw TestFailure("expected paired (phone)") }
        return (phone, watch, pp.token, wp.token)
    }

    @Test func aPairAcrossTwoNodesBehavesAsOnOneNode() async throws {
        let cluster = try await Cluster(["a", "b"])
        // The phone on the leader, the watch forwarded by the other node.
        let (phone, watch, _, watchToken) = try await Self.pair(cluster, phone: "a", watch: "b")

        // Message and reply across the nodes.
        watch.send(.send(Send(id: "m1", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted(let a) = try await watch.next(Self.wait) else { throw TestFailure("accepted") }
        #expect(a.re == "m1")
        guard case .deliver(let d) = try await phone.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(d.mode == .message && d.wantsReply == true && d.from == .watch)
        phone.send(.reply(ClientReply(id: "r1", re: "m1", payload: Payload(kind: "a"))))
        guard case .reply(let r) = try await watch.next(Self.wait) else { throw TestFailure("reply") }
        #expect(r.re == "m1" && r.payload.kind == "a")

        // userInfo FIFO with cumulative ack, transferred and outstanding.
        for i in 1...5 { phone.send(userInfo("u\(i)", i)) }
        var seqs: [Int64] = []
        for i in 1...5 {
            guard case .accepted(let a) = try await phone.next(Self.wait) else { throw TestFailure("accepted") }
            #expect(a.re == "u\(i)")
            guard case .deliver(let d) = try await watch.next(Self.wait) else { throw TestFailure("deliver") }
            #expect(d.id == "u\(i)")
            seqs.append(d.seq)
        }
        #expect(seqs == seqs.sorted() && Set(seqs).count == 5)
        watch.send(.ack(Ack(seq: seqs[2])))
        guard case .transferred(let t) = try await phone.next(Self.wait) else { throw TestFailure("transferred") }
        #expect(t.ids == ["u1", "u2", "u3"])
        phone.send(.outstanding(Request(id: "o1")))
        guard case .outstanding(let o) = try await phone.next(Self.wait) else { throw TestFailure("outstanding") }
        #expect(o.ids == ["u4", "u5"])
        watch.send(.ack(Ack(seq: seqs[4])))
        guard case .transferred = try await phone.next(Self.wait) else { throw TestFailure("transferred") }

        // Context latest-wins while the watch is away; it comes back through the other node.
        watch.connection.close()
        _ = try await watch.closed(Self.wait)
        guard case .peer(let gone) = try await phone.next(Self.wait) else { throw TestFailure("peer") }
        #expect(gone.connected == false, "presence of a device on another node is seen")
        for r in 1...3 {
            phone.send(.send(Send(id: "c\(r)", mode: .context, payload: Payload(kind: "ctx", ["r": .int(Int64(r))]))))
            guard case .accepted = try await phone.next(Self.wait) else { throw TestFailure("accepted") }
        }
        let watch2 = try await cluster.device(.watch, on: "b")
        try await watch2.hello(token: watchToken, lastSeq: seqs[4])
        guard case .deliver(let c) = try await watch2.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(c.id == "c3" && c.mode == .context)
        guard case .peer(let back) = try await phone.next(Self.wait) else { throw TestFailure("peer") }
        #expect(back.connected)
        await cluster.stop()
    }

    @Test func aSecondConnectionOfADeviceOnAnotherNodeReplacesTheFirstWith4001() async throws {
        let cluster = try await Cluster(["a", "b"])
        let (phone, watch, phoneToken, _) = try await Self.pair(cluster, phone: "b", watch: "a")
        let phone2 = try await cluster.device(.phone, on: "a")
        let welcome = try await phone2.hello(token: phoneToken)
        #expect(welcome.paired)
        #expect(try await phone.closed(Self.wait) == 4001, "the first connection, on the other node, is replaced")
        // The new connection serves: a userInfo reaches the watch.
        phone2.send(userInfo("u1"))
        guard case .accepted = try await phone2.next(Self.wait) else { throw TestFailure("accepted") }
        guard case .deliver(let d) = try await watch.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(d.id == "u1")
        await cluster.stop()
    }

    /// Sends `ids` from the phone until every one is accepted, reconnecting (with the same ids:
    /// duplicates are recognised) whenever the node closes it; returns the phone connected.
    static func sendAll(_ ids: [String], phone: TestDevice, token: String, cluster: Cluster, nodes: [String]) async throws
        -> TestDevice
    {
        var phone = phone
        var accepted = Set<String>()
        var round = 0
        while accepted.count < ids.count {
            for (i, id) in ids.enumerated() where !accepted.contains(id) { phone.send(userInfo(id, i)) }
            do {
                while accepted.count < ids.count {
                    if case .accepted(let a) = try await phone.next(takeover) { accepted.insert(a.re) }
                }
            } catch {
                // Closed with 1001 (its leader changed) or dropped with a dead node: reconnect
                // to a live node, as a client does with backoff.
                round += 1
                guard round < 10 else { throw error }
                phone = try await reconnect(.phone, token: token, cluster: cluster, nodes: nodes)
            }
        }
        return phone
    }

    /// Connects and says hello with `token` to the first of `nodes` that welcomes it.
    static func reconnect(_ role: Role, token: String, lastSeq: Int64? = nil, cluster: Cluster, nodes: [String])
        async throws -> TestDevice
    {
        let deadline = ContinuousClock.now + .seconds(takeover)
        while true {
            for node in nodes {
                if let device = try? await cluster.device(role, on: node),
                    (try? await device.hello(token: token, lastSeq: lastSeq)) != nil
                {
                    return device
                }
            }
            guard ContinuousClock.now < deadline else { throw TestFailure("no node welcomed the \(role)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Receives until `count` distinct seqs arrived, acking each; a redelivery (same seq after a
    /// reconnect) is skipped, as the protocol's receivers do. `seen` is what the watch got
    /// before (seq → id). Returns the ids in seq order, `seen`'s included.
    static func receive(
        _ count: Int, watch: TestDevice, token: String, cluster: Cluster, nodes: [String], seen: [Int64: String] = [:]
    ) async throws -> [String] {
        var watch = watch
        var bySeq = seen
        var round = 0
        while bySeq.count < count {
            do {
                guard case .deliver(let d) = try await watch.next(takeover) else { continue }
                if let seen = bySeq[d.seq] { #expect(seen == d.id, "one seq, one item") }
                bySeq[d.seq] = d.id
                watch.send(.ack(Ack(seq: d.seq)))
            } catch {
                round += 1
                guard round < 10 else { throw error }
                watch = try await reconnect(.watch, token: token, lastSeq: bySeq.keys.max(), cluster: cluster, nodes: nodes)
            }
        }
        return bySeq.sorted { $0.key < $1.key }.map(\.value)
    }

    @Test func killNineOfTheLeaderMovesItsClientsToTheOtherNodeAndLosesNothing() async throws {
        let cluster = try await Cluster(["a", "b"])
        // The watch on the leader (it dies with it), the phone forwarded by b (closed with 1001
        // when b takes over).
        let (phone, watch, phoneToken, watchToken) = try await Self.pair(cluster, phone: "b", watch: "a")
        let ids = (0..<30).map { "u\($0)" }
        for (i, id) in ids.prefix(10).enumerated() { phone.send(userInfo(id, i)) }
        var early = 0
        while early < 5 {
            if case .accepted = try await phone.next(Self.wait) { early += 1 }
        }
        await cluster.nodes["a"]!.kill9()
        let survivors = ["b"]
        let phone2 = try await Self.sendAll(ids, phone: phone, token: phoneToken, cluster: cluster, nodes: survivors)
        let delivered = try await Self.receive(ids.count, watch: watch, token: watchToken, cluster: cluster, nodes: survivors)
        #expect(delivered == ids, "every accepted item once, in FIFO order, after the takeover")
        // The watch's last acks travel on another connection: ask until they are in.
        var outstanding: [String]?
        var asked = 0
        let deadline = ContinuousClock.now + .seconds(Self.wait)
        while outstanding != [], ContinuousClock.now < deadline {
            asked += 1
            phone2.send(.outstanding(Request(id: "o\(asked)")))
            outstanding = nil
            while outstanding == nil {
                if case .outstanding(let o) = try await phone2.next(Self.wait) { outstanding = o.ids }
            }
            if outstanding != [] { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(outstanding == [], "everything delivered was acked: nothing left, nothing doubled")
        await cluster.stop()
    }

    @Test func aThreeNodeClusterSurvivesItsLeadersDeathWithThePairOnTheOtherTwo() async throws {
        let cluster = try await Cluster(["a", "b", "c"])
        let (phone, watch, phoneToken, watchToken) = try await Self.pair(cluster, phone: "b", watch: "c")
        phone.send(.send(Send(id: "m1", mode: .message, payload: Payload(kind: "q"), wantsReply: true)))
        guard case .accepted = try await phone.next(Self.wait) else { throw TestFailure("accepted") }
        guard case .deliver(let m) = try await watch.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(m.id == "m1")
        watch.send(.reply(ClientReply(id: "r1", re: "m1", payload: Payload(kind: "a"))))
        guard case .reply = try await phone.next(Self.wait) else { throw TestFailure("reply") }

        await cluster.nodes["a"]!.kill9()
        let ids = (0..<20).map { "v\($0)" }
        let survivors = ["b", "c"]
        _ = try await Self.sendAll(ids, phone: phone, token: phoneToken, cluster: cluster, nodes: survivors)
        let delivered = try await Self.receive(ids.count, watch: watch, token: watchToken, cluster: cluster, nodes: survivors)
        #expect(delivered == ids)
        await cluster.stop()
    }

    /// Two in-process nodes on a fresh redis-server, `a` leading, and a phone on `a` paired with
    /// a watch forwarded by `b`.
    struct InProcessPair {
        let redis: RedisServerProcess
        let directory: TemporaryDirectory
        let clients: WebSocketClientContext
        let a: RelayServer
        let b: RelayServer
        let phone: TestDevice
        let watch: TestDevice
        let phoneToken: String
        let watchToken: String

        static func start() async throws -> InProcessPair {
            let redis = try await RedisServerProcess.start()
            let dir = TemporaryDirectory()
            let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
            @Sendable func node(_ id: String) async throws -> RelayServer {
                try await RelayServer.startForTest(in: dir.path) {
                    $0.redis = redis.endpoint
                    $0.cluster = ClusterConfiguration(nodeID: id, leaseTTLMilliseconds: Cluster.leaseTTL)
                }
            }
            let a = try await node("a")
            let b = try await node("b")
            let (phone, code) = try await phoneWithCode(via: a.url, clients)
            let watch = try await TestDevice.connect(b.url, clients: clients, role: .watch, name: "Test watch")
            try await watch.hello()
            watch.send(.pairJoin(PairJoin(id: "pj-1", code: code.code)))
            guard case .paired(let wp) = try await watch.next(wait) else { throw TestFailure("paired (watch)") }
            guard case .paired(let pp) = try await phone.next(wait) else { throw TestFailure("paired (phone)") }
            return InProcessPair(
                redis: redis, directory: dir, clients: clients, a: a, b: b, phone: phone, watch: watch,
                phoneToken: pp.token, watchToken: wp.token)
        }
    }

    @Test func twoNodesInOneProcessHandOverAtACleanStop() async throws {
        let pair = try await InProcessPair.start()
        let (redis, clients, a, b, phone, watch) = (pair.redis, pair.clients, pair.a, pair.b, pair.phone, pair.watch)
        phone.send(userInfo("u1"))
        guard case .accepted = try await phone.next(Self.wait) else { throw TestFailure("accepted") }
        guard case .deliver(let d1) = try await watch.next(Self.wait) else { throw TestFailure("deliver") }
        watch.send(.ack(Ack(seq: d1.seq)))
        #expect(await b.stats.connections == 1, "an edge counts its own clients")

        // The leader stops: it commits what it holds and releases the lease; b takes over at its
        // next round, and closes the watch it forwarded with 1001 (relay leader changing).
        await a.shutdown()
        #expect(try await phone.closed(Self.wait) == 1001)
        let watchClose = try await watch.closed(Self.takeover)
        #expect(watchClose == 1001)
        let phone2 = try await Self.reconnect(.phone, token: pair.phoneToken, urls: [b.url], clients: clients)
        let watch2 = try await Self.reconnect(
            .watch, token: pair.watchToken, lastSeq: d1.seq, urls: [b.url], clients: clients)
        phone2.send(userInfo("u2"))
        while true {
            // The watch's return (peer) may come first.
            if case .accepted = try await phone2.next(Self.wait) { break }
        }
        guard case .deliver(let d2) = try await watch2.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(d2.id == "u2" && d2.seq > d1.seq, "u1 was acked before the handover: not again")
        #expect(await b.stats.pairs == 1)
        await clients.shutdown()
        await b.shutdown()
        await redis.stop()
    }

    /// ``reconnect(_:token:lastSeq:cluster:nodes:)`` for in-process nodes.
    static func reconnect(_ role: Role, token: String, lastSeq: Int64? = nil, urls: [String], clients: WebSocketClientContext)
        async throws -> TestDevice
    {
        let deadline = ContinuousClock.now + .seconds(takeover)
        while true {
            for url in urls {
                if let device = try? await TestDevice.connect(url, clients: clients, role: role, name: "Test \(role)"),
                    (try? await device.hello(token: token, lastSeq: lastSeq)) != nil
                {
                    return device
                }
            }
            guard ContinuousClock.now < deadline else { throw TestFailure("no node welcomed the \(role)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Freezes `node` (SIGSTOP) and returns its pid once `successor` took the lease; the caller
    /// resumes it (SIGCONT).
    static func freeze(_ node: String, until successor: String, in cluster: Cluster) async throws -> pid_t {
        let pid = cluster.nodes[node]!.process.processIdentifier
        try await cluster.nodes[node]!.freeze()
        let redis = RedisClient(endpoint: cluster.redis.endpoint)
        do {
            try await eventually(takeover, "\(successor) to take the lease") {
                let leader = await redis.execute([RedisCommand("GET", "wr:leader")])[0]
                return (try? leader.get())?.text?.hasPrefix("\(successor):") == true
            }
        } catch {
            await redis.close()
            kill(pid, SIGCONT)
            throw error
        }
        await redis.close()
        return pid
    }

    /// What `device` receives until its connection ends, and how it ended.
    static func framesUntilEnd(_ device: TestDevice) async -> (frames: [RelayFrame], end: String) {
        var frames: [RelayFrame] = []
        while true {
            do { frames.append(try await device.next(takeover)) } catch { return (frames, String(describing: error)) }
        }
    }

    /// A phone on `a` paired with a watch forwarded by `b`, and `u1` sent, accepted and
    /// delivered (not acked).
    static func pairWithOneDelivered(_ cluster: Cluster) async throws -> (
        phone: TestDevice, watch: TestDevice, phoneToken: String, watchToken: String, delivered: Deliver
    ) {
        let (phone, watch, phoneToken, watchToken) = try await pair(cluster, phone: "a", watch: "b")
        phone.send(userInfo("u1"))
        guard case .accepted = try await phone.next(wait) else { throw TestFailure("accepted") }
        guard case .deliver(let d1) = try await watch.next(wait) else { throw TestFailure("deliver") }
        return (phone, watch, phoneToken, watchToken, d1)
    }

    @Test func aPausedLeaderIsDeposedCommitsNothingAndStepsDownToForward() async throws {
        let cluster = try await Cluster(["a", "b"])
        let (phone, watch, phoneToken, watchToken, d1) = try await Self.pairWithOneDelivered(cluster)
        watch.send(.ack(Ack(seq: d1.seq)))
        guard case .transferred = try await phone.next(Self.wait) else { throw TestFailure("transferred") }

        // a stands still (a partition, a long GC pause) past its lease: b takes over.
        let a = try await Self.freeze("a", until: "b", in: cluster)
        phone.send(userInfo("u2"))
        #expect(try await watch.closed(Self.wait) == 1001, "b stopped forwarding to a")
        kill(a, SIGCONT)
        // a steps down before it reads u2, or a commit of it with its old epoch is fenced:
        // no `accepted`, and its own clients are closed.
        let (frames, end) = await Self.framesUntilEnd(phone)
        #expect(!frames.contains { if case .accepted = $0 { true } else { false } }, "\(frames)")
        #expect(end.contains("closed (1001 relay leader changing)"), "\(end)")
        // The deposed node now forwards: the phone comes back through a, the watch through b.
        let phone2 = try await Self.reconnect(.phone, token: phoneToken, cluster: cluster, nodes: ["a"])
        phone2.send(userInfo("u2"))
        while true {
            if case .accepted(let ok) = try await phone2.next(Self.wait) {
                #expect(ok.re == "u2")
                break
            }
        }
        let watch2 = try await Self.reconnect(.watch, token: watchToken, lastSeq: d1.seq, cluster: cluster, nodes: ["b"])
        guard case .deliver(let d2) = try await watch2.next(Self.wait) else { throw TestFailure("deliver") }
        #expect(d2.id == "u2" && d2.seq > d1.seq)
        await cluster.stop()
    }

    @Test func killNineOfRedisUnderAClusterLosesNothingAcceptedAndTheNodesRecoverByThemselves() async throws {
        let cluster = try await Cluster(["a", "b"])
        // The phone forwarded by b (its subscription breaks with redis), the watch on the leader.
        let (phone, watch, phoneToken, watchToken) = try await Self.pair(cluster, phone: "b", watch: "a")
        let ids = (0..<20).map { "r\($0)" }
        for (i, id) in ids.prefix(10).enumerated() { phone.send(userInfo(id, i)) }
        var accepted = 0
        while accepted < 10 {
            if case .accepted = try await phone.next(Self.wait) { accepted += 1 }
        }
        await cluster.redis.kill9()
        for (i, id) in ids.enumerated().dropFirst(10) { phone.send(userInfo(id, i)) }
        try await Task.sleep(for: .milliseconds(200))
        try await cluster.redis.restart()
        // Whatever was not accepted is sent again, through whichever node welcomes the phone.
        _ = try await Self.sendAll(ids, phone: phone, token: phoneToken, cluster: cluster, nodes: ["b", "a"])
        let delivered = try await Self.receive(ids.count, watch: watch, token: watchToken, cluster: cluster, nodes: ["a", "b"])
        #expect(delivered == ids, "every accepted item once, in FIFO order, across the redis restart")
        await cluster.stop()
    }

    /// Redis down under a leading node: the failed lease rounds are said once, not every third
    /// of the TTL (3 lines a second at a 1 s TTL), and their end once it works again. The node
    /// started with Redis up, so nothing says a subscription was lost that never was.
    @Test func aRedisOutageIsLoggedOnceAndItsEndOnce() async throws {
        let redis = try await RedisServerProcess.start()
        let dir = TemporaryDirectory()
        let lines = LockedLines()
        var configuration = RelayServerConfiguration()
        configuration.port = 0
        configuration.databasePath = dir.path("relay.db")
        configuration.redis = redis.endpoint
        configuration.cluster = ClusterConfiguration(nodeID: "a", leaseTTLMilliseconds: 600)
        let node = try await RelayServer.start(configuration, log: Logger(level: .info) { lines.append($0) })
        await redis.kill9()
        try await Task.sleep(for: .milliseconds(1500))  // about 7 rounds at TTL / 3
        #expect(lines.count { $0.contains("lease round failed") } == 1, "\(lines.all)")
        try await redis.restart()
        try await eventually(10, "the lease rounds to work again") { lines.count { $0.contains("lease rounds work again") } == 1 }
        #expect(lines.count { $0.contains("this node leads") } == 0, "said once, by 'cluster: leading'")
        await node.shutdown()
        await redis.stop()
    }

    @Test func aNodeRestartedWithinItsLeaseWaitsForItAndLeadsWithANewEpoch() async throws {
        let cluster = try await Cluster(["a"])
        let (phone, _, phoneToken, _) = try await Self.pair(cluster, phone: "a", watch: "a")
        phone.send(userInfo("u1"))
        guard case .accepted = try await phone.next(Self.wait) else { throw TestFailure("accepted") }
        await cluster.nodes["a"]!.kill9()
        // Restarted at once: its old lease (epoch 1) still holds; the new process must not reuse it.
        cluster.nodes["a"] = try await RelayProcess.start(
            db: cluster.directory.path("a2.db"),
            extra: ["--store", cluster.redis.url, "--node-id", "a", "--lease-ttl-ms", String(Cluster.leaseTTL)])
        let redis = RedisClient(endpoint: cluster.redis.endpoint)
        try await eventually(Self.takeover, "the restarted node to take a new lease") {
            let leader = await redis.execute([RedisCommand("GET", "wr:leader")])[0]
            return (try? leader.get())?.text == "a:2"
        }
        await redis.close()
        let phone2 = try await Self.reconnect(.phone, token: phoneToken, cluster: cluster, nodes: ["a"])
        phone2.send(.outstanding(Request(id: "o1")))
        while true {
            if case .outstanding(let o) = try await phone2.next(Self.wait) {
                #expect(o.ids == ["u1"], "the state the first process committed, loaded by the second")
                break
            }
        }
        await cluster.stop()
    }
}

/// Log lines a test's `Logger` sink collects, from any thread.
final class LockedLines: Sendable {
    private let lines = LockedState<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func count(where matches: (String) -> Bool) -> Int { all.filter(matches).count }
}
