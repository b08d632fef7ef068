import Foundation
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

/// A relay that keeps a hot budget of one delivery window of payloads in memory and reads the rest from its
/// store: more items than the window, queued while the watch is away, survive a restart (which
/// loads no unsent payload) and arrive complete and in order, read window by window.
@Suite(.timeLimit(.minutes(3)))
struct QueuedPayloadRestartTests {
    static let window = 4
    static let queued = 30

    @Test(arguments: TestStore.all)
    func moreItemsThanTheWindowQueuedWhileTheWatchIsAwayAllArriveInOrderAfterARestart(store: TestStore) async throws {
        let dir = TemporaryDirectory()
        let redis = store == .redis ? try await RedisServerProcess.start() : nil
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let configure: (inout RelayServerConfiguration) -> Void = { c in
            c.redis = redis?.endpoint
            c.relay.inFlightItems = Self.window
            c.relay.hotPayloadItems = Self.window
        }
        let first = try await RelayServer.startForTest(in: dir.path, configure)
        let (phone, watch, _, watchToken) = try await pairDevices(url: first.url, clients: clients)
        watch.connection.close()
        _ = try await phone.next()  // peer: the watch left
        let ids = (1...Self.queued).map { "u-\($0)" }
        for (n, id) in ids.enumerated() { phone.send(userInfo(id, n)) }
        var accepted = 0
        while accepted < ids.count {
            if case .accepted = try await phone.next() { accepted += 1 }
        }
        #expect(await first.stats.queued == Self.queued)
        await first.shutdown()

        let second = try await RelayServer.startForTest(in: dir.path, configure)
        #expect(await second.stats.queued == Self.queued, "every accepted item is still queued")
        let watch2 = try await TestDevice.connect(second.url, clients: clients, role: .watch, name: "Test watch")
        try await watch2.hello(token: watchToken, lastSeq: 0)
        var received: [Deliver] = []
        while received.count < ids.count {
            guard case .deliver(let d) = try await watch2.next(Double(10 * timeoutScale)) else { continue }
            #expect(d.seq > received.last?.seq ?? 0, "each item once, seqs rising")
            received.append(d)
            watch2.send(.ack(Ack(seq: d.seq)))
        }
        #expect(received.map(\.id) == ids, "FIFO across the store reads and the restart")
        #expect(received.map { $0.payload.members["n"] } == (0..<ids.count).map { .int(Int64($0)) }, "payloads as sent")
        await clients.shutdown()
        await second.shutdown()
        await redis?.stop()
    }
}
