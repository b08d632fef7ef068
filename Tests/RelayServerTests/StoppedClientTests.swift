import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// A real client process frozen with SIGSTOP: its kernel still ACKs TCP, but nothing answers
/// the relay's pings, so only the ping policy (PROTOCOL.md §2.2) can find it dead.
@Suite(.timeLimit(.minutes(3)), .serialized)
struct StoppedClientTests {
    /// 1 round in `make test`; `make soak` runs `WATCHRELAY_SOAK_ROUNDS`.
    static let rounds = soakRounds(default: 1)

    @Test(arguments: rounds)
    func aStoppedWatchIsDroppedByThePingPolicyAndGetsEveryItemWhenItContinues(round: Int) async throws {
        let dir = TemporaryDirectory()
        // Ping after 2 s of silence, hang up after 6 s (`watchrelay serve --hangup-after-s`): a
        // live client has 4 s to pong, even on a loaded machine.
        let relay = try await RelayProcess.start(
            db: dir.path + "/relay.db", extra: ["--ping-after-s", "2", "--hangup-after-s", "6"])
        defer { relay.terminate() }
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let wait = 30 * timeoutScale
        let watchConnections = #"watchrelay_connections{role="watch"}"#
        let lost = #"watchrelay_closed_connections_total{code="none"}"#

        let phone = try await TestDevice.connect(relay.url, clients: clients, role: .phone, name: "Phone")
        try await phone.hello()
        phone.send(.pairBegin(Request(id: "pb")))
        guard case .pairCode(let code) = try await phone.next(wait) else { throw TestFailure("expected pair.code") }

        // `watchrelay watch`: the headless watch (RelaySession over the lws client), a real process.
        let watch = try WatchProcess(relay: relay.url, pairCode: code.code, stateDirectory: dir.path + "/watch")
        defer { watch.kill9() }
        try await watch.line(startingWith: "paired")
        while true {
            guard case .paired(let p) = try await phone.next(wait) else { continue }
            #expect(p.peer.connected && p.peer.reachable)
            break
        }
        let before = try await relay.waitForMetrics("the watch connected") { $0[watchConnections] == 1 }

        try await watch.stop()
        // Sent while it is stopped: accepted (stored), maybe written into the frozen process's
        // socket buffer, never acked by it.
        var ids = (0..<10).map { "while-stopped-\($0)" }
        for (i, id) in ids.enumerated() { phone.send(userInfo(id, i)) }
        var accepted = Set<String>()
        var gone: PeerChange?
        while accepted.count < ids.count || gone == nil {
            switch try await phone.next(wait) {
            case .accepted(let a): accepted.insert(a.re)
            case .peer(let p): if !p.connected { gone = p }
            case .transferred(let t): Issue.record("a stopped watch acked \(t.ids)")
            case let other: Issue.record("unexpected frame to the phone: \(other)")
            }
        }
        // The phone saw the watch go: not connected, not reachable (§7).
        #expect(gone?.reachable == false)
        // The relay dropped it without a close handshake (a frozen peer cannot answer one).
        _ = try await relay.waitForMetrics("the stopped watch dropped") {
            $0[watchConnections] == 0 && $0[lost, default: 0] > before[lost, default: 0]
        }
        #expect(try await relay.healthy())

        // And after the drop.
        let later = (10..<20).map { "after-drop-\($0)" }
        for (i, id) in later.enumerated() { phone.send(userInfo(id, 10 + i)) }
        ids += later
        while accepted.count < ids.count {
            if case .accepted(let a) = try await phone.next(wait) { accepted.insert(a.re) }
        }
        #expect(accepted == Set(ids))

        // SIGCONT: the watch finds its connection gone, reconnects with its token, and acks every
        // item it handles; the phone hears `transferred` for all twenty.
        watch.signal(SIGCONT)
        var transferred = Set<String>()
        var back = false
        while !transferred.isSuperset(of: ids) {
            switch try await phone.next(wait) {
            case .transferred(let t): transferred.formUnion(t.ids)
            case .peer(let p): if p.connected { back = true }
            default: break
            }
        }
        #expect(transferred == Set(ids))
        #expect(back, "the phone saw the watch come back")
        _ = try await relay.waitForMetrics("the watch back") { $0[watchConnections] == 1 }
        watch.kill9()
        await clients.shutdown()
        await relay.stop()
    }
}
