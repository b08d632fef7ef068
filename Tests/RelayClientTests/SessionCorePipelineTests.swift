import RelayProtocol
import Testing

@testable import RelayClient

/// Many messages in flight at once (none waits for another's reply): every one is answered
/// once, timeouts hit the right ones in the order sent, and the next deadline is always the
/// earliest of those still waiting, however the answers interleave.
@Suite struct SessionCorePipelineTests {
    /// The commands that finished in `actions`, in order, with how.
    static func finished(_ actions: [SessionAction]) -> [(SessionTicket, Result<SessionOutcome, RelaySessionError>)] {
        actions.compactMap { if case .complete(let t, let r) = $0 { (t, r) } else { nil } }
    }

    @Test func repliesInAnyOrderAndTimeoutsForTheRestInTheOrderSent() {
        var h = CoreHarness.paired(limits: Limits(replyTimeoutMs: 2_000))
        var sent: [(ticket: SessionTicket, id: String)] = []
        for n in 0..<300 {
            let (ticket, actions) = h.command(.sendMessage(Payload(kind: "q", ["n": .int(Int64(n))]), wantsReply: true))
            sent.append((ticket, CoreHarness.lastRequestID(actions) ?? ""))
            if n == 150 { h.now += .milliseconds(500) }  // the later half accepted later
        }
        // Accepted in the order sent (the first half 500 ms before the second).
        for (n, s) in sent.enumerated() {
            if n == 151 { h.now += .milliseconds(500) }
            #expect(h.frame(.accepted(Accepted(re: s.id))).completion(s.ticket) == nil)
        }
        let firstAccepted = h.now - .milliseconds(500)
        // Replies for the multiples of 3, last first, and for the whole first half but 0 and 1.
        var answered = Set<Int>()
        for n in stride(from: 297, through: 3, by: -3) { answered.insert(n) }
        for n in 2...150 { answered.insert(n) }
        for n in answered.sorted(by: >) {
            let actions = h.frame(.reply(RelayReply(re: sent[n].id, payload: Payload(kind: "a"))))
            #expect(actions.completion(sent[n].ticket) == .success(.reply(Payload(kind: "a"))))
        }
        // 0 and 1 still wait, and theirs is the next deadline (reply timeout + request timeout).
        #expect(h.core.nextDeadline == firstAccepted + .seconds(12))
        let first = Self.finished(h.advance(.seconds(12) - .milliseconds(500)))
        #expect(first.map(\.0) == [sent[0].ticket, sent[1].ticket])
        #expect(first.allSatisfy { $0.1 == .failure(.replyTimeout) })
        let rest = (151..<300).filter { !answered.contains($0) }
        #expect(h.core.nextDeadline == firstAccepted + .milliseconds(12_500))
        let later = Self.finished(h.advance(.milliseconds(500)))
        #expect(later.map(\.0) == rest.map { sent[$0].ticket })
        #expect(later.allSatisfy { $0.1 == .failure(.replyTimeout) })
        #expect(h.core.nextDeadline == nil)
    }

    @Test func acceptedOutOfOrderAndRequestsNeverAnsweredTimeOutInTheOrderSent() {
        var h = CoreHarness.paired()
        var sent: [(ticket: SessionTicket, id: String)] = []
        for _ in 0..<200 {
            let (ticket, actions) = h.command(.sendMessage(Payload(kind: "q"), wantsReply: false))
            sent.append((ticket, CoreHarness.lastRequestID(actions) ?? ""))
        }
        // The relay accepts every other one, last first.
        for n in stride(from: 199, through: 0, by: -2) {
            #expect(h.frame(.accepted(Accepted(re: sent[n].id))).completion(sent[n].ticket) == .success(.reply(nil)))
        }
        // An answer to one already answered finishes nothing.
        #expect(Self.finished(h.frame(.accepted(Accepted(re: sent[1].id)))).isEmpty)
        #expect(h.core.nextDeadline == h.now + .seconds(10))
        let timedOut = Self.finished(h.advance(.seconds(10)))
        #expect(timedOut.map(\.0) == stride(from: 0, to: 200, by: 2).map { sent[$0].ticket })
        #expect(timedOut.allSatisfy { if case .failure(.timeout) = $0.1 { true } else { false } })
        #expect(h.core.nextDeadline == nil && h.core.pending.isEmpty)
    }

    @Test func aDropFailsEveryWaitingMessageOnceInTheOrderSent() {
        var h = CoreHarness.paired()
        var tickets: [SessionTicket] = []
        for n in 0..<100 {
            let (ticket, actions) = h.command(.sendMessage(Payload(kind: "q"), wantsReply: true))
            tickets.append(ticket)
            if n % 2 == 0 { h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(actions) ?? ""))) }
        }
        let failed = Self.finished(h.feed(.closed(code: 1006)))
        // Not yet accepted: disconnected; accepted and waiting for the reply: notReachable.
        #expect(Set(failed.map(\.0)) == Set(tickets) && failed.count == 100)
        #expect(failed.filter { $0.1 == .failure(.notReachable) }.map(\.0) == stride(from: 0, to: 100, by: 2).map { tickets[$0] })
        #expect(failed.filter { $0.1 == .failure(.disconnected) }.map(\.0) == stride(from: 1, to: 100, by: 2).map { tickets[$0] })
    }
}
