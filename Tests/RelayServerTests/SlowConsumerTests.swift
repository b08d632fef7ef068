import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// A watch that stops reading its socket, against `watchrelay serve` as a child process (real
/// sockets, real fsyncs): the relay closes it by policy (1008, PROTOCOL.md §2.2–2.3), its
/// memory stays bounded, it keeps serving, and the watch loses nothing accepted when it resumes.
@Suite(.timeLimit(.minutes(3)), .serialized)
struct SlowConsumerTests {
    /// Generous bound on the relay's growth (VmRSS): the per-connection cap is 8 MiB, and the
    /// relay legitimately keeps the queued userInfo payloads (a few MiB) in memory.
    static let rssGrowthBoundKiB = 64 << 10

    /// 1 round in `make test`; `make soak` runs `WATCHRELAY_SOAK_ROUNDS`, with the stalled
    /// watch's receive buffer varying between rounds.
    static let rounds = soakRounds(default: 1)

    @Test(arguments: rounds)
    func aWatchThatStopsReadingIsClosedWith1008AndGetsEveryAcceptedItemWhenItResumes(round: Int) async throws {
        let dir = TemporaryDirectory()
        let log = dir.path + "/relay.log"
        // Pings far off: the stalled watch never answers one, and this test is about the cap.
        let relay = try await RelayProcess.start(db: dir.path + "/relay.db", extra: ["--ping-after-s", "600"], debugLog: log)
        defer { relay.terminate() }
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let wait = 30 * timeoutScale

        let (phone, firstWatch, _, watchToken) = try await pairDevices(url: relay.url, clients: clients)
        firstWatch.connection.close()
        _ = try await firstWatch.closed()
        try await Self.expectPeer(phone, connected: false, within: wait)

        // The stalled watch: resumes with its token in the foreground (so messages reach it),
        // reads its welcome, and from then on never reads its socket again.
        let stalled = try RawWebSocket(port: relay.port, receiveBuffer: [4096, 64 << 10, 1 << 20][round % 3])
        try await stalled.upgrade(port: relay.port)
        let hello = Hello(id: "h-stalled", role: .watch, deviceName: "Stalled", token: watchToken, foreground: true, lastSeq: 0)
        try stalled.sendText(FrameCodec.encode(.hello(hello)))
        guard let first = try await stalled.readFrame(), case .welcome(let welcome) = try FrameCodec.decodeRelayFrame(first.payload)
        else { throw TestFailure("the stalled watch got no welcome") }
        #expect(welcome.paired)
        try await Self.expectPeer(phone, connected: true, within: wait)

        let closed1008 = #"watchrelay_closed_connections_total{code="1008"}"#
        let watchConnections = #"watchrelay_connections{role="watch"}"#
        let before = try await relay.waitForMetrics("the stalled watch connected") { $0[watchConnections] == 1 }
        let rssBefore = try relay.residentKiB()
        var rssPeak = rssBefore

        // The phone fills the watch's outbound queue: userInfo items (durable, at most a window
        // in flight), contexts (latest wins) and messages (never windowed), near their limits, a
        // few sends at a time, until the relay tells it the watch is gone.
        let small = String(repeating: "u", count: 60_000)
        let large = String(repeating: "c", count: 250_000)
        var acceptedUserInfo: [String] = []
        var lastContext: String?
        var waiting: [String: DeliveryMode] = [:]
        var sends = 0
        var watchGone = false
        while !watchGone || !waiting.isEmpty {
            while !watchGone && waiting.count < 8 {
                guard sends < 4000 else { throw TestFailure("the relay never closed the watch that stopped reading") }
                let mode: DeliveryMode = sends % 4 == 0 ? .userInfo : sends % 20 == 2 ? .context : .message
                let id = "\(mode.rawValue)-\(sends)"
                let payload = Payload(kind: "test.fill", ["n": .int(Int64(sends)), "s": .string(mode == .context ? large : small)])
                phone.send(.send(Send(id: id, mode: mode, payload: payload)))
                waiting[id] = mode
                sends += 1
                if sends % 32 == 0 { rssPeak = max(rssPeak, try relay.residentKiB()) }
            }
            switch try await phone.next(wait) {
            case .accepted(let a):
                switch waiting.removeValue(forKey: a.re) {
                case .userInfo?: acceptedUserInfo.append(a.re)
                case .context?: lastContext = a.re
                default: break
                }
            case .error(let e):
                // Only a message sent after the relay dropped the watch may fail.
                #expect(e.code == .notReachable && waiting[e.re ?? ""] == .message, "\(e)")
                waiting.removeValue(forKey: e.re ?? "")
            case .peer(let p):
                if !p.connected { watchGone = true }
            case let other:
                Issue.record("unexpected frame to the phone: \(other)")
            }
        }

        // The relay closed it on its own (the watch read nothing) with the documented code.
        let after = try await relay.waitForMetrics("the stalled watch closed with 1008") {
            $0[closed1008, default: 0] == before[closed1008, default: 0] + 1 && $0[watchConnections] == 0
        }
        #expect(after[#"watchrelay_closed_connections_total{code="none"}"#, default: 0] == before[#"watchrelay_closed_connections_total{code="none"}"#, default: 0])
        // …and its log says why: the transport's outbound cap, not some other policy.
        let closes = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("msg=\"connection closed\"") && $0.contains("code=1008") }
        #expect(closes.count == 1 && closes.allSatisfy { $0.contains("reason=\"outbound queue limit exceeded\"") }, "\(closes)")
        // …at level info too, where an operator sees it without debug logging (§2.2).
        let infos = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("level=info msg=\"slow consumer closed\"") }
        #expect(infos.count == 1 && infos.allSatisfy { $0.contains("code=1008") }, "\(infos)")
        rssPeak = max(rssPeak, try relay.residentKiB())
        // The watch's side: whatever the kernel still held, then the end (a close frame, if any
        // could be written, carries 1008; a peer that reads nothing usually gets none).
        let drained = await stalled.drainUntilClosed()
        if case .some(let code) = drained.closeCode { #expect(code == 1008) }
        #expect(try await relay.healthy())

        // More durable items while the watch is away.
        for i in 0..<5 { phone.send(userInfo("late-\(i)", i)) }
        while acceptedUserInfo.filter({ $0.hasPrefix("late-") }).count < 5 {
            guard case .accepted(let a) = try await phone.next(wait) else { continue }
            acceptedUserInfo.append(a.re)
        }

        // The watch resumes with its token (it processed nothing, so lastSeq 0). A sentinel sent
        // after the resume marks the end: any duplicate would come before it (FIFO).
        let watch = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "Resumed")
        try await watch.hello(token: watchToken, lastSeq: 0)
        phone.send(userInfo("sentinel"))
        var received: [String] = []
        var contexts: [String] = []
        var lastSeq: Int64 = 0
        while received.last != "sentinel" {
            guard case .deliver(let d) = try await watch.next(wait) else { continue }
            #expect(d.seq > lastSeq, "seqs rise on one connection")
            lastSeq = d.seq
            switch d.mode {
            case .userInfo: received.append(d.id)
            case .context: contexts.append(d.id)
            default: Issue.record("a \(d.mode) was delivered after the resume")
            }
            watch.send(.ack(Ack(seq: d.seq)))
        }
        let expected = acceptedUserInfo + ["sentinel"]
        #expect(Set(received).count == received.count, "no userInfo item delivered twice")
        #expect(Set(received) == Set(expected), "every accepted userInfo item delivered")
        #expect(received == expected, "in the order accepted")
        #expect(contexts == lastContext.map { [$0] } ?? [], "only the latest context")

        // Every acked item reaches the phone as `transferred`.
        var transferred = Set<String>()
        while !transferred.isSuperset(of: expected) {
            if case .transferred(let t) = try await phone.next(wait) { transferred.formUnion(t.ids) }
        }
        let rssAfter = try relay.residentKiB()
        print(
            "slow consumer round \(round): \(sends) sends, \(acceptedUserInfo.count) userInfo accepted, \(drained.bytes) bytes left "
                + "for the watch to read; relay VmRSS before \(rssBefore) KiB, peak \(rssPeak) KiB, after \(rssAfter) KiB")
        #expect(rssPeak - rssBefore < Self.rssGrowthBoundKiB, "relay memory bounded (peak)")
        #expect(rssAfter - rssBefore < Self.rssGrowthBoundKiB, "relay memory bounded (after)")
        await clients.shutdown()
        await relay.stop()
    }

    /// Reads phone frames until a `peer` frame saying `connected` arrives (other frames are
    /// skipped); a connected watch here is in the foreground, so it must be reachable too.
    static func expectPeer(_ phone: TestDevice, connected: Bool, within seconds: Double) async throws {
        while true {
            if case .peer(let p) = try await phone.next(seconds), p.connected == connected {
                #expect(p.reachable == connected)
                return
            }
        }
    }
}
