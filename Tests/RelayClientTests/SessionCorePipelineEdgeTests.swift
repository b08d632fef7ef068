import RelayProtocol
import TestSupport
import Testing

@testable import RelayClient

/// Pipelined messages (none waits for another's reply) at the edges: drops, closes and
/// timeouts fail them in the order sent, whichever list they waited in; the very first
/// activation; an unpaired session; the welcome's reachability. (Found by a review of the
/// pipelining: each failed before its fix.)
@Suite struct SessionCorePipelineEdgeTests {
    static func finished(_ actions: [SessionAction]) -> [SessionTicket] {
        actions.compactMap { if case .complete(let t, _) = $0 { t } else { nil } }
    }

    /// A burst where the first message was accepted (waits for its reply) and the second not
    /// yet: a drop failed the second first (the requests' list before the reply waiters), so
    /// errorHandlers ran out of send order.
    @Test func dropFailsPipelinedMessagesInTheOrderSent() {
        var h = CoreHarness.paired()
        let (m0, a0) = h.command(.sendMessage(Payload(kind: "q0"), wantsReply: true))
        h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(a0) ?? "")))
        let (m1, _) = h.command(.sendMessage(Payload(kind: "q1"), wantsReply: true))
        let failed = Self.finished(h.feed(.closed(code: 1006)))
        #expect(failed == [m0, m1])
    }

    /// The same through `close()` (WCSession.close / a watch switch).
    @Test func closeFailsPipelinedMessagesInTheOrderSent() {
        var h = CoreHarness.paired()
        let (m0, a0) = h.command(.sendMessage(Payload(kind: "q0"), wantsReply: true))
        h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(a0) ?? "")))
        let (m1, _) = h.command(.sendMessage(Payload(kind: "q1"), wantsReply: true))
        let (_, closed) = h.command(.close)
        #expect(Self.finished(closed).prefix(2) == [m0, m1])
    }

    /// Before the first welcome, messages wait for it, also after a first connection attempt
    /// failed (a relay still starting): such a message failed at once with notReachable.
    @Test func aMessageDuringTheFirstActivationWaitsAfterAFailedFirstAttempt() {
        var h = CoreHarness(role: .watch, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer"))
        _ = h.command(.activate)
        h.feed(.connectFailed(reason: "connection refused"))
        let (ticket, actions) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: false))
        #expect(actions.completion(ticket) == nil, "failed before any welcome: \(String(describing: actions.failure(ticket)))")
    }

    /// A message on an activated but unpaired session fails with notPaired (WatchConnectivity's
    /// deviceNotPaired, 7005), not notReachable (the welcome had no peer).
    @Test func aMessageWhileUnpairedFailsWithNotPaired() {
        var h = CoreHarness()
        h.activate(paired: false)
        let (ticket, actions) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        #expect(actions.failure(ticket) == .notPaired)
    }

    /// Messages queued before the first welcome fail with notReachable when the welcome says
    /// the counterpart is away, as one sent a moment later does (they went out, to be refused).
    @Test func messagesQueuedBeforeTheFirstWelcomeFollowTheWelcomesReachability() {
        var h = CoreHarness(role: .watch, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer"))
        _ = h.command(.activate)
        let (early, _) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: false))
        let welcome = h.activate(reachable: false)
        let (later, laterActions) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: false))
        #expect(laterActions.failure(later) == .notReachable)
        #expect(welcome.failure(early) == .notReachable, "sent: \(welcome.sentFrames.count) frames")
    }

    /// A request timeout and a reply timeout due in the same tick fail in the order sent (the
    /// later-sent message's error came first).
    @Test func timeoutsInTheSameTickGoInTheOrderSent() {
        var h = CoreHarness.paired(limits: Limits(replyTimeoutMs: 0))
        let (m0, a0) = h.command(.sendMessage(Payload(kind: "q0"), wantsReply: true))
        h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(a0) ?? "")))  // due at +10 s
        h.now += .milliseconds(5)
        let (m1, _) = h.command(.sendMessage(Payload(kind: "q1"), wantsReply: true))  // due at +10.005 s
        let failed = Self.finished(h.advance(.seconds(11)))
        #expect(failed == [m0, m1])
    }
}

/// Random inputs: every ticket completes exactly once; debug asserts of PendingList hold.
@Suite struct SessionCoreRandomInputTests {
    @Test(arguments: 0..<300) func everyTicketCompletesOnce(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 1)
        var h = CoreHarness(role: .watch, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer"))
        var issued: [SessionTicket] = []
        var counts: [UInt64: Int] = [:]
        var sentIDs: [String] = []
        var delivered: [Deliver] = []
        var seq: Int64 = 0
        var epoch = 0
        var deliveredAt: [String: (epoch: Int, at: ContinuousClock.Instant)] = [:]
        var replied: Set<String> = []
        func record(_ actions: [SessionAction]) {
            for a in actions {
                if case .send(.reply(let r)) = a {
                    let d = deliveredAt[r.re]
                    #expect(d?.epoch == epoch, "reply to a message of another connection")
                    #expect(d.map { h.now < $0.at + .seconds(10) } ?? false, "late reply sent")
                    #expect(replied.insert(r.re).inserted, "second reply sent")
                }
                if case .complete(let t, _) = a { counts[t.value, default: 0] += 1 }
                if case .send(let f) = a, let id = f.id, !id.hasPrefix("hello") { sentIDs.append(id) }
            }
        }
        let (act, actActions) = h.command(.activate)
        issued.append(act)
        record(actActions)
        for _ in 0..<2000 {
            let r = Int.random(in: 0..<100, using: &rng)
            switch r {
            case 0..<25:
                let (t, a) = h.command(.sendMessage(Payload(kind: "m"), wantsReply: Bool.random(using: &rng)))
                issued.append(t); record(a)
            case 25..<32:
                let (t, a) = h.command(.transferUserInfo(Payload(kind: "u")))
                issued.append(t); record(a)
            case 32..<34:
                let (t, a) = h.command(.synchronize)
                issued.append(t); record(a)
            case 34..<52:
                if let id = sentIDs.randomElement(using: &rng) { record(h.frame(.accepted(Accepted(re: id)))) }
            case 52..<62:
                if let id = sentIDs.randomElement(using: &rng) {
                    record(h.frame(.reply(RelayReply(re: id, payload: Payload(kind: "r")))))
                }
            case 62..<65:
                if let id = sentIDs.randomElement(using: &rng) {
                    record(h.frame(.error(ErrorFrame(re: id, code: .notReachable, message: "away"))))
                }
            case 65..<69:
                if case .activated = h.core.phase {
                    record(h.frame(.peer(PeerChange(connected: true, reachable: Bool.random(using: &rng)))))
                }
            case 69..<72:
                record(h.feed(.closed(code: 1006)))
            case 72..<85:
                record(h.advance(.milliseconds(Int64.random(in: 0...4000, using: &rng))))
                if case .connecting = h.core.phase { record(Bool.random(using: &rng) ? h.feed(.connected) : h.feed(.connectFailed(reason: "refused"))) }
            case 85..<92:
                if case .helloSent = h.core.phase {
                    epoch += 1
                    record(h.frame(h.welcome(paired: true, reachable: Bool.random(using: &rng))))
                }
            case 92..<96:
                if case .activated = h.core.phase {
                    seq += 1
                    let d = deliver(seq, .message, id: "p-m\(seq)", wantsReply: true)
                    delivered.append(d)
                    deliveredAt[d.id] = (epoch, h.now)
                    record(h.frame(.deliver(d)))
                }
            default:
                if let d = delivered.randomElement(using: &rng) {
                    let (t, a) = h.command(.reply(to: Delivery(d), Payload(kind: "ans")))
                    issued.append(t); record(a)
                }
            }
        }
        let (closeTicket, closeActions) = h.command(.close)
        issued.append(closeTicket)
        record(closeActions)
        for t in issued {
            #expect(counts[t.value] == 1, "ticket \(t.value) completed \(counts[t.value] ?? 0) times (seed \(seed))")
        }
        #expect(counts.count == issued.count)
        if seed < 3 { print("REVIEWSTATS seed \(seed): tickets \(issued.count) replies \(replied.count) delivered \(delivered.count) epochs \(epoch)") }
    }
}
