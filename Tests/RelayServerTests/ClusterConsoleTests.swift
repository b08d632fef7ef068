import Foundation
import Primitives
import RelayConsole
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

/// `serve --console` on the nodes of a cluster (two in-process nodes on one redis-server): the
/// leader's console shows every device of the cluster, those on the other node too, and its
/// faults reach them; an edge's shows no devices and says it is an edge; when the leader goes,
/// the other node's console takes over. What `simulate --cluster` reads its counters from.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ClusterConsoleTests {
    static let token = "cluster-console-token"
    let bearer = "Authorization: Bearer \(ClusterConsoleTests.token)"

    static func node(
        _ id: String, redis: RedisServerProcess, in directory: TemporaryDirectory,
        console: ConsoleConfiguration = ConsoleConfiguration(token: ClusterConsoleTests.token)
    ) async throws -> RelayServer {
        try await RelayServer.startForTest(in: directory.path + "/" + id) {
            $0.redis = redis.endpoint
            $0.cluster = ClusterConfiguration(nodeID: id, leaseTTLMilliseconds: 1000)
            $0.console = console
        }
    }

    func state(_ node: RelayServer) async throws -> ConsoleJSON.State {
        let r = try await PlainHTTP.request(port: node.port, "/console/api/state", headers: [bearer])
        #expect(r.status == 200, "\(r.status) \(r.body)")
        return try JSONDecoder().decode(ConsoleJSON.State.self, from: Data(r.body.utf8))
    }

    /// Waits until `node`'s console state satisfies `condition`; returns that state.
    func state(
        _ node: RelayServer, _ what: String, where condition: @escaping @Sendable (ConsoleJSON.State) -> Bool
    ) async throws -> ConsoleJSON.State {
        let found = LockedState<ConsoleJSON.State?>(nil)
        try await eventually(10, what) {
            let s = try await self.state(node)
            guard condition(s) else { return false }
            found.withLock { $0 = s }
            return true
        }
        return try #require(found.withLock { $0 })
    }

    @Test func theLeadersConsoleShowsAndFaultsDevicesOnEveryNodeAndAnEdgesShowsNone() async throws {
        let directory = TemporaryDirectory()
        for id in ["a", "b"] { try FileManager.default.createDirectory(atPath: directory.path + "/" + id, withIntermediateDirectories: true) }
        let redis = try await RedisServerProcess.start()
        let a = try await Self.node("a", redis: redis, in: directory)
        let b = try await Self.node("b", redis: redis, in: directory)
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        #expect(a.consoleURL != nil && b.consoleURL != nil, "every node serves its console")

        // a started first on a free lease: it leads (shown with its engine's first
        // inspection, within one push interval); b is an edge.
        _ = try await state(a, "a's console to show it leads") { $0.node == ConsoleJSON.Node(id: "a", leads: true) }
        let edge = try await state(b)
        #expect(edge.node == ConsoleJSON.Node(id: "b", leads: false))

        // The phone on a, the watch on b: the pair is on the leader's console, with both devices.
        let phone = try await TestDevice.connect(a.url, clients: clients, role: .phone, name: "Phone on a")
        try await phone.hello()
        phone.send(.pairBegin(Request(id: "pb")))
        guard case .pairCode(let code) = try await phone.next() else { throw TestFailure("pair.code") }
        let watch = try await TestDevice.connect(b.url, clients: clients, role: .watch, name: "Watch on b")
        try await watch.hello()
        watch.send(.pairJoin(PairJoin(id: "pj", code: code.code)))
        guard case .paired = try await watch.next() else { throw TestFailure("paired (watch)") }
        guard case .paired = try await phone.next() else { throw TestFailure("paired (phone)") }
        let shown = try await state(a, "the leader's console to show both devices connected") { s in
            s.pairs.count == 1 && s.pairs[0].devices.allSatisfy(\.connected)
        }
        #expect(Set(shown.pairs[0].devices.map(\.name)) == ["Phone on a", "Watch on b"])
        #expect(try await state(b).pairs.isEmpty, "an edge's console shows no devices")
        let refused = try await PlainHTTP.request(
            port: b.port, "/console/api/faults?target=pair:\(shown.pairs[0].id)&kind=unreachable", method: "POST",
            headers: [bearer])
        #expect(refused.status == 409, "an edge takes no faults: \(refused.body)")

        // A fault set on the leader's console reaches the watch on the other node.
        let watchID = try #require(shown.pairs[0].devices.first { $0.role == "watch" }?.id)
        let set = try await PlainHTTP.request(
            port: a.port, "/console/api/faults?target=device:\(watchID)&kind=disconnect", method: "POST", headers: [bearer])
        #expect(set.status == 200, "\(set.body)")
        #expect(try await watch.closed(10 * timeoutScale) == CloseCode.goingAway.rawValue)

        // The leader goes (a clean shutdown releases its lease): b leads, and its console says so.
        await a.shutdown()
        _ = try await state(b, "b to lead") { $0.node?.leads == true }

        await clients.shutdown()
        await b.shutdown()
        await redis.stop()
    }

    /// An edge's console pages get no pushes, but heartbeats all the same: a page that went
    /// away frees its place there too.
    @Test func anEdgesConsoleNoticesAPageThatWentAway() async throws {
        let directory = TemporaryDirectory()
        for id in ["a", "b"] { try FileManager.default.createDirectory(atPath: directory.path + "/" + id, withIntermediateDirectories: true) }
        let redis = try await RedisServerProcess.start()
        let a = try await Self.node("a", redis: redis, in: directory)
        _ = try await state(a, "a's console to show it leads") { $0.node == ConsoleJSON.Node(id: "a", leads: true) }
        let b = try await Self.node(
            "b", redis: redis, in: directory,
            console: ConsoleConfiguration(token: Self.token, maxEventStreams: 1, heartbeatMilliseconds: 200))
        #expect(try await state(b).node == ConsoleJSON.Node(id: "b", leads: false))
        let path = "/console/api/events?token=\(Self.token)"
        let page = try await EventStreamClient.open(port: b.port, path)
        #expect(page.status == 200)
        #expect(try await PlainHTTP.request(port: b.port, path).status == 503)
        for _ in 0..<50 where page.comments == 0 { _ = await page.next(within: 0.2) }
        #expect(page.comments > 0, "heartbeats on an edge")
        page.close()
        try await eventually(10, "the edge to notice the page went away") {
            try await EventStreamClient.open(port: b.port, path).status == 200
        }
        await b.shutdown()
        await a.shutdown()
        await redis.stop()
    }
}
