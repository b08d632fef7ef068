import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// `kill -9` of the relay while durable traffic is in flight loses nothing accepted and hands
/// nothing to the receiving app twice.
@Suite(.timeLimit(.minutes(10)), .serialized)
struct RestartTests {
    static let itemsPerRound = 120

    /// 3 rounds in `make test`; `make soak` runs 20 (`WATCHRELAY_SOAK_ROUNDS`).
    static let rounds = soakRounds(default: 3)

    @Test(arguments: rounds)
    func relayKilledMidFlowDeliversEveryAcceptedItemExactlyOnce(round: Int) async throws {
        let dir = TemporaryDirectory()
        let db = dir.path + "/relay.db"
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        var relay = try await RelayProcess.start(db: db)
        defer { relay.terminate() }

        // Pair on the first incarnation.
        let phone0 = try await TestDevice.connect(relay.url, clients: clients, role: .phone, name: "P")
        try await phone0.hello()
        phone0.send(.pairBegin(Request(id: "pb")))
        guard case .pairCode(let code) = try await phone0.next() else { throw TestFailure("code") }
        let watch0 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        try await watch0.hello(foreground: false)
        watch0.send(.pairJoin(PairJoin(id: "pj", code: code.code)))
        guard case .paired(let wp) = try await watch0.next(), case .paired(let pp) = try await phone0.next() else {
            throw TestFailure("paired")
        }
        watch0.connection.close()

        // The phone fires every send; the relay is killed after a random number of accepts.
        let ids = (0..<Self.itemsPerRound).map { "r\(round)-\($0)" }
        var accepted = Set<String>()
        for (i, id) in ids.enumerated() { phone0.send(userInfo(id, i)) }
        let killAfter = [7, 40, 95][round % 3]
        while accepted.count < killAfter {
            let f = try await phone0.next()
            if case .accepted(let a) = f { accepted.insert(a.re) }
        }
        await relay.kill9()

        // Second incarnation: the phone retries every send it has no `accepted` for (same ids).
        relay = try await RelayProcess.start(db: db)
        let phone = try await TestDevice.connect(relay.url, clients: clients, role: .phone, name: "P")
        try await phone.hello(token: pp.token)
        for (i, id) in ids.enumerated() where !accepted.contains(id) { phone.send(userInfo(id, i)) }
        while accepted.count < ids.count {
            let f = try await phone.next()
            if case .accepted(let a) = f { accepted.insert(a.re) }
        }

        // The watch takes half, acking as it goes, then the relay dies again mid-delivery.
        var processed: [String] = []
        var lastSeq: Int64 = 0
        func receive(_ watch: TestDevice, until count: Int) async throws {
            while processed.count < count {
                guard case .deliver(let d) = try await watch.next() else { continue }
                if d.seq <= lastSeq { continue }  // a redelivery the app already handled
                processed.append(d.id)
                lastSeq = d.seq
                watch.send(.ack(Ack(seq: d.seq)))
            }
        }
        let watch1 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        try await watch1.hello(token: wp.token, lastSeq: 0)
        try await receive(watch1, until: ids.count / 2)
        await relay.kill9()

        relay = try await RelayProcess.start(db: db)
        let watch2 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        try await watch2.hello(token: wp.token, lastSeq: lastSeq)
        try await receive(watch2, until: ids.count)

        #expect(processed.count == ids.count)
        #expect(Set(processed).count == processed.count, "no item handed to the app twice")
        #expect(Set(processed) == Set(ids), "nothing accepted is missing")
        #expect(processed == ids, "FIFO order survives the restarts")
        await clients.shutdown()
        await relay.stop()
    }

    /// The address lock of §6.3 is in the SQLite file: a relay restarted after kill -9 still
    /// refuses the address, until the same time.
    @Test func anAddressLockSurvivesAKillNineOfTheRelay() async throws {
        let dir = TemporaryDirectory()
        let db = dir.path + "/relay.db"
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        var relay = try await RelayProcess.start(db: db)
        defer { relay.terminate() }
        let locking = try await PairingLockSteps.lockTheAddress(urls: [relay.url], clients: clients)
        await relay.kill9()
        relay = try await RelayProcess.start(db: db)
        let answer = try await PairingLockSteps.tryAWrongCode(urls: [relay.url], clients: clients, within: PairingLockSteps.wait)
        PairingLockSteps.expectSameLock(answer, as: locking)
        await clients.shutdown()
        await relay.stop()
    }
}
