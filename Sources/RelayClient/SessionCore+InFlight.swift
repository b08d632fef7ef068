import RelayProtocol

extension SessionCore {
    // MARK: - Sends the relay may have acted on

    /// After a welcome: sends every durable send whose deadline passed after it went out, with
    /// its own id (the relay answers `accepted` again for one it holds, §8.1). Unpaired, they fail
    /// with `notPaired`: there is no pair left to hold them.
    mutating func resendUnansweredDurables() {
        let waiting = unansweredDurables
        unansweredDurables = waiting.compactMap { sendNow($0) }
    }

    /// Removes and returns the unanswered durable send (sent on this connection) answered by `re`.
    mutating func takeUnanswered(_ re: String) -> Pending? {
        guard let i = unansweredDurables.firstIndex(where: { $0.id == re && $0.sent }) else { return nil }
        return unansweredDurables.remove(at: i)
    }

    /// Whether `id` is a durable send of this session with no `accepted` yet.
    func awaitsAccepted(_ id: String) -> Bool {
        func isDurableSend(_ p: Pending) -> Bool {
            if case .durable = p.kind { return p.id == id }
            return false
        }
        return !outstandingUserInfoTransfers.contains { $0.id == id }
            && (unansweredDurables.contains(where: isDurableSend) || pending.contains(where: isDurableSend))
    }

    /// After a welcome: asks again to cancel each transfer whose cancel went out and was not
    /// answered (no caller waits: it was told `disconnected` or `timeout`). The relay answers
    /// `cancelled` again if it cancelled, else `already_delivered` or `unknown_id`.
    mutating func resendCancelsInFlight() {
        for target in cancelsInFlight where !pending.contains(where: { $0.sent && $0.kind == .cancel(target: target) }) {
            let id = makeID()
            let cancel = Pending(
                id: id, ticket: nil, kind: .cancel(target: target), frame: .cancel(Cancel(id: id, target: target)),
                deadline: requestDeadline, sent: false)
            if let sent = sendNow(cancel) { pending.append(sent) }
        }
    }

    /// The relay refused a cancel of `target` with `code`. A refusal that settles it ends the
    /// cancel's time in flight; one asked again after a lost answer (`resent`) also settles the
    /// transfer: `unknown_id` says the relay no longer holds it (the first cancel took it, or it
    /// was acked long ago; it leaves outstanding without a finished event, as cancelled), and
    /// `already_delivered` that it went out (a reconcile that passed it over looks again).
    mutating func cancelRefused(_ target: String, _ code: ErrorCode, resent: Bool) {
        let settled: Set<ErrorCode> = [.alreadyDelivered, .unknownID, .notSupported, .notPaired]
        guard settled.contains(code) else { return }  // asked again after the next welcome
        cancelsInFlight.removeAll { $0 == target }
        guard resent, outstandingUserInfoTransfers.contains(where: { $0.id == target }) else { return }
        if code == .unknownID {
            outstandingUserInfoTransfers.removeAll { $0.id == target }
            persist([.transfers(outstandingUserInfoTransfers)], .plain)
        } else if code == .alreadyDelivered, phase == .activated,
            !pending.contains(where: { $0.sent && $0.kind == .outstanding })
        {
            requestOutstanding()
        }
    }

    /// Asks the relay which of this device's durable sends are outstanding (no caller waits):
    /// the answer reconciles ``outstandingUserInfoTransfers``.
    mutating func requestOutstanding() {
        let id = makeID()
        pending.append(
            Pending(
                id: id, ticket: nil, kind: .outstanding, frame: .outstanding(Request(id: id)),
                deadline: requestDeadline, sent: true, wentOut: true))
        send(.outstanding(Request(id: id)))
    }

    /// A pair ended or began: nothing in flight belongs to the new one. Unanswered durable
    /// sends fail with `notPaired` (the relay drops a pair's items with it).
    mutating func forgetSendsInFlight() {
        failInOrder(unansweredDurables.map { ($0.ticket, .notPaired) })
        unansweredDurables = []
        cancelsInFlight = []
        finishedBeforeAccepted = []
    }
}
