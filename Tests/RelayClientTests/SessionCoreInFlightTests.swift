import RelayProtocol
import Testing

@testable import RelayClient

/// Sends the relay may have acted on although its answer did not come: durable sends past
/// their deadline, transfers finished before their `accepted`, cancels whose answer was lost.
@Suite struct SessionCoreInFlightTests {
    static let item = Payload(kind: "favorites.delete", ["login": "octocat"])

    /// Drops the connection and reconnects `h` (back-off, connected, welcome); returns the
    /// welcome's actions.
    static func reconnect(_ h: inout CoreHarness) -> [SessionAction] {
        h.feed(.closed(code: 1006))
        h.advance(.seconds(10))
        h.feed(.connected)
        return h.frame(h.welcome(paired: true))
    }

    /// A phone with one userInfo transfer sent; returns its ticket and id.
    static func sentTransfer(_ h: inout CoreHarness) -> (SessionTicket, String) {
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        return (ticket, CoreHarness.lastRequestID(sent) ?? "")
    }

    /// A phone's accepted transfer with a cancel sent for it; returns the transfer's id.
    static func cancelSent(_ h: inout CoreHarness) -> String {
        let (_, id) = sentTransfer(&h)
        h.frame(.accepted(Accepted(re: id)))
        _ = h.command(.cancel(transferID: id))
        return id
    }

    // MARK: - Durable sends past their deadline

    /// Whether `error` is a timeout.
    static func isTimeout(_ error: RelaySessionError?) -> Bool {
        if case .timeout? = error { return true }
        return false
    }

    /// The caller is told `timeout` (a call does not wait for a relay that is gone: the phone's
    /// `add` did, with the relay down), and the session keeps the send: a late `accepted` records it.
    @Test func aDurableSendPastItsTimeoutFailsItsCallerAndALateAcceptedStillRecordsIt() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, id) = Self.sentTransfer(&h)
        let late = h.advance(.seconds(11))
        #expect(Self.isTimeout(late.failure(ticket)))
        #expect(late.deadlines == [nil], "nothing left to time out: no tick loop")
        let accepted = h.frame(.accepted(Accepted(re: id)))
        let transfer = UserInfoTransfer(id: id, payload: Self.item)
        #expect(accepted.completion(ticket) == nil, "its caller was answered")
        #expect(h.core.outstandingUserInfoTransfers == [transfer])
        #expect(h.frame(.transferred(Transferred(ids: [id]))).events == [.userInfoTransferFinished(id: id)])
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
    }

    @Test func aContextPastItsTimeoutIsStoredWhenItsLateAcceptedComes() {
        var h = CoreHarness.paired(role: .phone)
        let context = Payload(kind: "favorites.snapshot", ["revision": 4])
        let (ticket, sent) = h.command(.updateContext(context))
        #expect(Self.isTimeout(h.advance(.seconds(11)).failure(ticket)))
        h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
        #expect(h.core.applicationContext == context)
    }

    @Test func aDurableSendPastItsTimeoutGoesAgainWithItsIDAheadOfLaterSendsAfterAReconnect() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, id) = Self.sentTransfer(&h)
        #expect(Self.isTimeout(h.advance(.seconds(11)).failure(ticket)))
        h.feed(.closed(code: 1006))
        let (laterTicket, _) = h.command(.transferUserInfo(Self.item))
        h.advance(.seconds(2))
        h.feed(.connected)
        let welcomed = h.frame(h.welcome(paired: true))
        #expect(welcomed.sentFrames.first?.id == id, "the oldest send first, with its own id")
        #expect(welcomed.sentFrames.count == 2)
        h.frame(.accepted(Accepted(re: id)))
        #expect(h.core.outstandingUserInfoTransfers.map(\.id) == [id])
        #expect(welcomed.failure(laterTicket) == nil)
    }

    @Test func aDurableSendThatWentOutBeforeADropIsToldTimeoutAndGoesAgainWithItsID() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, id) = Self.sentTransfer(&h)
        h.feed(.closed(code: 1006))
        var waited: [SessionAction] = []
        for _ in 0..<30 { waited += h.advance(.seconds(1)) }
        #expect(Self.isTimeout(waited.failure(ticket)))
        h.feed(.connected)
        #expect(CoreHarness.lastRequestID(h.frame(h.welcome(paired: true))) == id)
    }

    @Test func closingFailsADurableSendNotYetPastItsTimeoutAsDisconnected() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, _) = Self.sentTransfer(&h)
        h.advance(.seconds(5))
        #expect(h.command(.close).actions.failure(ticket) == .disconnected)
    }

    @Test func aRefusalOfAResentDurableSendEndsIt() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, id) = Self.sentTransfer(&h)
        #expect(Self.isTimeout(h.advance(.seconds(11)).failure(ticket)))
        _ = Self.reconnect(&h)
        h.frame(.error(ErrorFrame(re: id, code: .quotaExceeded, message: "full")))
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
        #expect(Self.reconnect(&h).sentFrames.isEmpty, "not sent again")
    }

    // MARK: - transferred before accepted

    @Test func aTransferReportedTransferredBeforeItsAcceptedFinishesOnceAcceptedAndIsNeverOutstanding() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, id) = Self.sentTransfer(&h)
        // The relay accepted it; the answer was lost with the connection, and the watch acked
        // it while the phone was away: the pending `transferred` follows the welcome.
        let welcomed = Self.reconnect(&h)
        #expect(CoreHarness.lastRequestID(welcomed) == id)
        let transferred = h.frame(.transferred(Transferred(ids: [id])))
        #expect(transferred.events.isEmpty, "not before the caller has its transfer")
        let accepted = h.frame(.accepted(Accepted(re: id)))
        // Its caller was told `timeout` while the phone reconnected (the back-off passed it).
        #expect(accepted.completion(ticket) == nil)
        #expect(accepted.events == [.userInfoTransferFinished(id: id)])
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
    }

    // MARK: - Cancels whose answer was lost

    @Test func aCancelWhoseAnswerWasLostIsAskedAgainAndNotReportedTransferred() {
        var h = CoreHarness.paired(role: .phone)
        let (_, id) = Self.sentTransfer(&h)
        h.frame(.accepted(Accepted(re: id)))
        let (ticket, asked) = h.command(.cancel(transferID: id))
        #expect(asked.sentFrames.count == 1)
        // The relay cancelled it; its `cancelled` went out on a connection that then dropped.
        #expect(h.feed(.closed(code: 1006)).failure(ticket) == .disconnected)
        let welcomed = { () -> [SessionAction] in
            h.advance(.seconds(10))
            h.feed(.connected)
            return h.frame(h.welcome(paired: true))
        }()
        let frames = welcomed.sentFrames
        guard frames.count == 2, case .cancel(let again) = frames[0], case .outstanding(let request) = frames[1] else {
            Issue.record("expected the cancel again, then outstanding: \(frames)")
            return
        }
        #expect(again.target == id)
        let answered = h.frame(.outstanding(OutstandingList(re: request.id, ids: [])))
        #expect(!answered.events.contains(.userInfoTransferFinished(id: id)), "a cancelled transfer reported as received")
        let cancelled = h.frame(.cancelled(Answer(re: again.id)))
        #expect(cancelled.events.isEmpty)
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
        #expect(h.core.cancelsInFlight.isEmpty)
    }

    @Test func aResentCancelRefusedAsDeliveredLeavesTheTransferToAFreshReconcile() {
        var h = CoreHarness.paired(role: .phone)
        let id = Self.cancelSent(&h)
        let frames = Self.reconnect(&h).sentFrames
        guard case .cancel(let again)? = frames.first, case .outstanding(let request)? = frames.last else {
            Issue.record("expected the cancel again, then outstanding: \(frames)")
            return
        }
        // The list came first and passed the transfer over; the cancel then says it went out.
        #expect(h.frame(.outstanding(OutstandingList(re: request.id, ids: []))).events.isEmpty)
        let refused = h.frame(.error(ErrorFrame(re: again.id, code: .alreadyDelivered, message: "sent")))
        guard case .outstanding(let second)? = refused.sentFrames.last else {
            Issue.record("no second reconcile")
            return
        }
        let answered = h.frame(.outstanding(OutstandingList(re: second.id, ids: [])))
        #expect(answered.events == [.userInfoTransferFinished(id: id)])
    }

    @Test func aCancelledTransferTheRelayNoLongerKnowsLeavesOutstandingWithoutFinishing() {
        var h = CoreHarness.paired(role: .phone)
        let id = Self.cancelSent(&h)
        guard case .cancel(let again)? = Self.reconnect(&h).sentFrames.first, again.target == id else {
            Issue.record("no cancel sent again")
            return
        }
        let refused = h.frame(.error(ErrorFrame(re: again.id, code: .unknownID, message: "unknown")))
        #expect(refused.events.isEmpty)
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
    }

    @Test func aTransferredForATransferBeingCancelledFinishesIt() {
        var h = CoreHarness.paired(role: .phone)
        let id = Self.cancelSent(&h)
        _ = Self.reconnect(&h)
        #expect(h.frame(.transferred(Transferred(ids: [id]))).events == [.userInfoTransferFinished(id: id)])
        #expect(h.core.cancelsInFlight.isEmpty)
    }
}
