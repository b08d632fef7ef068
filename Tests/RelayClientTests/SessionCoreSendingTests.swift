import RelayProtocol
import TestSupport
import Testing

@testable import RelayClient

/// The four modes, replies, cancel, outstanding reconciliation and the complication budget.
@Suite struct SessionCoreSendingTests {
    static let item = Payload(kind: "favorites.delete", ["login": "octocat"])

    @Test func aMessageWithoutReplyCompletesOnAccepted() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "favorites.refresh"), wantsReply: false))
        guard case .send(let send)? = sent.sentFrames.first else {
            Issue.record("nothing sent")
            return
        }
        #expect(send.mode == .message && send.wantsReply == nil)
        #expect(h.frame(.accepted(Accepted(re: send.id))).completion(ticket) == .success(.reply(nil)))
    }

    @Test func aMessageWithReplyCompletesWithTheReply() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        #expect(h.frame(.accepted(Accepted(re: id))).completion(ticket) == nil)
        let reply = Payload(kind: "pong")
        #expect(h.frame(.reply(RelayReply(re: id, payload: reply))).completion(ticket) == .success(.reply(reply)))
    }

    @Test func aReplyBeforeAcceptedIsKeptUntilAccepted() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        let reply = Payload(kind: "pong")
        #expect(h.frame(.reply(RelayReply(re: id, payload: reply))).completion(ticket) == nil)
        #expect(h.frame(.accepted(Accepted(re: id))).completion(ticket) == .success(.reply(reply)))
    }

    @Test func noReplyWithinTheRelaysTimeoutPlusTheRequestTimeoutFails() {
        var h = CoreHarness.paired(limits: Limits(replyTimeoutMs: 2_000))
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        let accepted = h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
        #expect(accepted.deadlines == [h.now + .seconds(12)])
        #expect(h.advance(.seconds(11)).completion(ticket) == nil)
        #expect(h.advance(.seconds(1)).failure(ticket) == .replyTimeout)
    }

    @Test func theRelaysReplyTimeoutErrorFailsTheWaitingMessage() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        h.frame(.accepted(Accepted(re: id)))
        let failed = h.frame(.error(ErrorFrame(re: id, code: .replyTimeout, message: "no reply")))
        #expect(failed.failure(ticket) == .replyTimeout)
    }

    @Test func anUnreachableCounterpartFailsAMessageAtOnce() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        let failed = h.frame(.error(ErrorFrame(re: id, code: .notReachable, message: "away")))
        #expect(failed.failure(ticket) == .notReachable)
    }

    /// Messages no longer wait for each other's replies (WatchConnectivity sends them one after
    /// another), so many wait at once: a drop or a timeout fails them in the order they were
    /// sent (they went by id, and `t-10` sorts before `t-9`; WatchConnectivity's are UUIDs).
    @Test func manyWaitingMessagesFailInTheOrderSent() {
        for ending in ["drop", "timeout"] {
            var h = CoreHarness.paired()
            var tickets: [SessionTicket] = []
            for n in 0..<12 {
                let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping-\(n)"), wantsReply: true))
                h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
                tickets.append(ticket)
            }
            let actions = ending == "drop" ? h.feed(.closed(code: 1006)) : h.advance(.seconds(30))
            let failed = actions.compactMap { action -> SessionTicket? in
                if case .complete(let ticket, .failure) = action { ticket } else { nil }
            }
            #expect(failed == tickets, "\(ending)")
        }
    }

    /// A burst of messages costs the same per message however many wait: WatchConnectivity
    /// hands them over without waiting for answers, and each command rebuilt the waiting list,
    /// each `accepted` moved all of it, and each input scanned every message waiting for a
    /// reply (10,000 took 11 s, debug build). Relative timing, the fastest of three rounds:
    /// quadratic work is 10 times slower per message at 10 times the burst, linear about the same.
    @Test func aBurstOfMessagesCostsTheSamePerMessageHoweverManyWait() {
        func perMessage(_ count: Int) -> Duration {
            var best = Duration.seconds(3600)
            for _ in 0..<3 {
                var h = CoreHarness.paired()
                let clock = ContinuousClock()
                let took = clock.measure {
                    var ids: [String] = []
                    for n in 0..<count {
                        let (_, sent) = h.command(.sendMessage(Payload(kind: "m-\(n)"), wantsReply: true))
                        ids.append(CoreHarness.lastRequestID(sent) ?? "")
                    }
                    for id in ids { h.frame(.accepted(Accepted(re: id))) }
                    for id in ids { h.frame(.reply(RelayReply(re: id, payload: Payload(kind: "r")))) }
                }
                best = min(best, took / count)
            }
            return best
        }
        let small = perMessage(400)
        let large = perMessage(4_000)
        #expect(large < small * 4 + .microseconds(50), "per message: \(small) at 400, \(large) at 4,000")
    }

    @Test func aDropWhileWaitingForAReplyFailsAsNotReachable() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
        #expect(h.feed(.closed(code: 1006)).failure(ticket) == .notReachable)
    }

    @Test func aDropBeforeAMessageWasAcceptedFailsAsDisconnected() {
        var h = CoreHarness.paired()
        let (ticket, _) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: false))
        #expect(h.feed(.closed(code: 1006)).failure(ticket) == .disconnected)
    }

    @Test func sendingWhileUnpairedFails() {
        var h = CoreHarness()
        h.activate(paired: false)
        let (ticket, actions) = h.command(.transferUserInfo(Self.item))
        #expect(actions.failure(ticket) == .notPaired)
        #expect(actions.sentFrames.isEmpty)
    }

    @Test func sendingBeforeActivateFails() {
        var h = CoreHarness()
        let (ticket, actions) = h.command(.sendMessage(Self.item, wantsReply: false))
        #expect(actions.failure(ticket) == .notActivated)
    }

    @Test func payloadsOverTheirModesLimitAreRefusedBeforeSending() {
        var h = CoreHarness.paired(role: .phone, limits: Limits(messageBytes: 40, userInfoBytes: 50, contextBytes: 60))
        let big = Payload(kind: "big", ["s": .string(String(repeating: "x", count: 80))])
        let size = big.encodedSize
        for (command, limit) in [
            (SessionCommand.sendMessage(big, wantsReply: true), 40), (.transferUserInfo(big), 50),
            (.transferComplication(big), 50), (.updateContext(big), 60),
        ] {
            let (ticket, actions) = h.command(command)
            #expect(actions.failure(ticket) == .payloadTooLarge(size: size, limit: limit))
            #expect(actions.sentFrames.isEmpty)
        }
        let (ticket, actions) = h.command(.reply(to: Delivery(deliver(1, .message)), big))
        #expect(actions.failure(ticket) == .payloadTooLarge(size: size, limit: 40))
    }

    @Test func payloadsNestedDeeperThanAFrameCarriesAreRefusedBeforeSending() {
        var h = CoreHarness.paired(role: .phone)
        let deep = Payload.nested(depth: Payload.maxNestingDepth + 1)
        for command in [
            SessionCommand.sendMessage(deep, wantsReply: true), .transferUserInfo(deep), .transferComplication(deep),
            .updateContext(deep), .reply(to: Delivery(deliver(1, .message)), deep),
        ] {
            let (ticket, actions) = h.command(command)
            #expect(actions.failure(ticket) == .payloadTooDeep(depth: 64, limit: 63))
            #expect(actions.failure(ticket)?.wcCode == 7010)
            #expect(actions.sentFrames.isEmpty)
        }
        // At the limit, it goes out.
        let (_, actions) = h.command(.transferUserInfo(Payload.nested(depth: Payload.maxNestingDepth)))
        #expect(actions.sentFrames.count == 1)
    }

    @Test func aReplyGoesOutAtOnceWhenActivated() {
        var h = CoreHarness.paired(role: .phone)
        let question = deliver(1, .message, id: "w-7", wantsReply: true)
        h.frame(.deliver(question))
        let (ticket, actions) = h.command(.reply(to: Delivery(question), Payload(kind: "answer")))
        #expect(actions.completion(ticket) == .success(.done))
        #expect(actions.sentFrames == [.reply(ClientReply(id: "t-2", re: "w-7", payload: Payload(kind: "answer")))])
    }

    /// WatchConnectivity ignores a reply handler called a second time; the relay would answer
    /// such a reply with `unknown_id`, and 100 errors a minute close the connection (§4.2).
    @Test func onlyTheFirstReplyToAMessageGoesOut() {
        var h = CoreHarness.paired(role: .phone)
        let question = deliver(1, .message, id: "w-7", wantsReply: true)
        h.frame(.deliver(question))
        #expect(h.command(.reply(to: Delivery(question), Payload(kind: "first"))).actions.sentFrames.count == 1)
        let (ticket, again) = h.command(.reply(to: Delivery(question), Payload(kind: "second")))
        #expect(again.completion(ticket) == .success(.done))
        #expect(again.sentFrames.isEmpty)
    }

    /// A reply after the relay's reply timeout (its sender got `reply_timeout`), or to a message
    /// of an earlier connection (its sender got `not_reachable`), or to a message that wanted
    /// none, is not sent either.
    @Test func aReplyTooLateOrFromAnEarlierConnectionIsNotSent() {
        var h = CoreHarness.paired(role: .phone, limits: Limits(replyTimeoutMs: 2_000))
        let late = deliver(1, .message, id: "w-1", wantsReply: true)
        let plain = deliver(2, .message, id: "w-2")
        h.frame(.deliver(late))
        h.frame(.deliver(plain))
        h.now += .milliseconds(2_000)
        #expect(h.command(.reply(to: Delivery(late), Payload(kind: "late"))).actions.sentFrames.isEmpty)
        #expect(h.command(.reply(to: Delivery(plain), Payload(kind: "unasked"))).actions.sentFrames.isEmpty)

        let earlier = deliver(3, .message, id: "w-3", wantsReply: true)
        h.frame(.deliver(earlier))
        h.feed(.closed(code: 1006))
        h.advance(.seconds(1))
        h.activate(limits: Limits(replyTimeoutMs: 2_000))
        let (ticket, actions) = h.command(.reply(to: Delivery(earlier), Payload(kind: "answer")))
        #expect(actions.completion(ticket) == .success(.done))
        #expect(actions.sentFrames.isEmpty)
        let current = deliver(4, .message, id: "w-4", wantsReply: true)
        h.frame(.deliver(current))
        h.now += .milliseconds(1_999)
        #expect(h.command(.reply(to: Delivery(current), Payload(kind: "answer"))).actions.sentFrames.count == 1)
    }

    /// The relay said the counterpart is away: a message fails at once without going out (the
    /// relay would refuse it, an error against the connection's budget, §4.2).
    @Test func aMessageWhileTheRelaySaysTheCounterpartIsAwayFailsWithoutBeingSent() {
        var h = CoreHarness.paired()
        h.frame(.peer(PeerChange(connected: true, reachable: false)))
        let (ticket, actions) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        #expect(actions.failure(ticket) == .notReachable)
        #expect(actions.sentFrames.isEmpty)
        // Durable sends do not need it reachable.
        #expect(h.command(.transferUserInfo(Self.item)).actions.sentFrames.count == 1)
        h.frame(.peer(PeerChange(connected: true, reachable: true)))
        #expect(h.command(.sendMessage(Payload(kind: "ping"), wantsReply: false)).actions.sentFrames.count == 1)
    }

    /// After a drop, a message fails at once until the next welcome (it waited for it, and
    /// reached the counterpart late); before the first welcome, messages still wait for it.
    @Test func aMessageWhileReconnectingFailsButOneBeforeTheFirstWelcomeWaits() {
        var first = CoreHarness(role: .watch, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer"))
        _ = first.command(.activate)
        let (early, sent) = first.command(.sendMessage(Payload(kind: "ping"), wantsReply: false))
        #expect(sent.completion(early) == nil && sent.sentFrames.isEmpty)
        #expect(first.activate().sentFrames.contains { if case .send(let f) = $0 { f.mode == .message } else { false } })

        var h = CoreHarness.paired()
        h.feed(.closed(code: 1006))
        let (ticket, actions) = h.command(.sendMessage(Payload(kind: "ping"), wantsReply: true))
        #expect(actions.failure(ticket) == .notReachable)
        h.advance(.seconds(1))
        h.activate()
        #expect(!h.core.pending.contains { $0.kind == .message(wantsReply: true) })
    }

    @Test func aReplyWhileDisconnectedFailsAsNotReachable() {
        var h = CoreHarness.paired(role: .phone)
        h.feed(.closed(code: 1006))
        let (ticket, actions) = h.command(.reply(to: Delivery(deliver(1, .message)), Payload(kind: "answer")))
        #expect(actions.failure(ticket) == .notReachable)
    }

    @Test func aContextCompletesOnceAcceptedAndSaved() {
        var h = CoreHarness.paired(role: .phone)
        h.answersWrites = false
        let context = Payload(kind: "favorites.snapshot", ["revision": 3])
        let (ticket, sent) = h.command(.updateContext(context))
        let accepted = h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
        #expect(accepted.completion(ticket) == nil)
        #expect(h.unanswered.first?.records == [.sentContext(context)])
        #expect(h.feed(.persisted(id: h.unanswered[0].id)).completion(ticket) == .success(.done))
        #expect(h.core.applicationContext == context)
    }

    @Test func aTransferIsOutstandingOnceAcceptedAndFinishesWhenTransferred() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        let accepted = h.frame(.accepted(Accepted(re: id)))
        let transfer = UserInfoTransfer(id: id, payload: Self.item)
        #expect(accepted.completion(ticket) == .success(.transfer(transfer)))
        #expect(accepted.writes.first?.records == [.transfers([transfer])])
        #expect(h.core.outstandingUserInfoTransfers == [transfer])
        let done = h.frame(.transferred(Transferred(ids: [id])))
        #expect(done.events == [.userInfoTransferFinished(id: id)])
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
    }

    @Test func aTransferIsReportedFinishedOnlyOnceItsRemovalIsStored() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        #expect(h.frame(.accepted(Accepted(re: id))).completion(ticket) != nil)
        h.answersWrites = false
        let done = h.frame(.transferred(Transferred(ids: [id])))
        #expect(done.events.isEmpty, "not before the shorter list is stored")
        #expect(h.unanswered.first?.records == [.transfers([])])
        h.answersWrites = true
        #expect(h.feed(.persisted(id: h.unanswered[0].id)).events == [.userInfoTransferFinished(id: id)])
    }

    @Test func aTransferIsReportedFinishedEvenWhenItsRemovalCannotBeStored() {
        var h = CoreHarness.paired()
        let (_, sent) = h.command(.transferUserInfo(Self.item))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        h.frame(.accepted(Accepted(re: id)))
        h.failWrites = true
        let done = h.frame(.transferred(Transferred(ids: [id])))
        #expect(done.events == [.error(.persistFailed("disk full")), .userInfoTransferFinished(id: id)])
    }

    @Test func aTransferWhoseListCannotBeSavedFailsAndSaysSo() {
        var h = CoreHarness.paired()
        h.failWrites = true
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        let accepted = h.frame(.accepted(Accepted(re: CoreHarness.lastRequestID(sent) ?? "")))
        #expect(accepted.failure(ticket) == .persistFailed("disk full"))
        #expect(accepted.events == [.error(.persistFailed("disk full"))])
    }

    @Test func aDurableSendWaitsOutADropAndGoesAgainWithTheSameID() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        let id = CoreHarness.lastRequestID(sent)
        let dropped = h.feed(.closed(code: 1006))
        #expect(dropped.completion(ticket) == nil)
        h.advance(.seconds(2))
        h.feed(.connected)
        let resent = h.frame(h.welcome(paired: true))
        #expect(CoreHarness.lastRequestID(resent) == id)
        #expect(h.frame(.accepted(Accepted(re: id ?? ""))).completion(ticket) != nil)
    }

    @Test func aSendAskedForWhileReconnectingGoesAfterTheWelcome() {
        var h = CoreHarness.paired()
        h.feed(.closed(code: 1006))
        let (ticket, asked) = h.command(.transferUserInfo(Self.item))
        #expect(asked.sentFrames.isEmpty && asked.completion(ticket) == nil)
        h.advance(.seconds(2))
        h.feed(.connected)
        #expect(h.frame(h.welcome(paired: true)).sentFrames.count == 1)
    }

    @Test func aSendThatNeverGetsAWelcomeTimesOut() {
        var h = CoreHarness.paired(role: .phone)
        h.feed(.closed(code: 1006))
        let (ticket, _) = h.command(.transferUserInfo(Self.item))
        var later: [SessionAction] = []
        for _ in 0..<10 { later += h.advance(.seconds(1)) }
        #expect(later.failure(ticket) == .timeout("the relay's welcome"))
    }

    @Test func aRequestTheRelayNeverAnswersTimesOut() {
        var h = CoreHarness.paired(role: .phone)
        let (ticket, _) = h.command(.beginPairing)
        #expect(h.advance(.seconds(9)).completion(ticket) == nil)
        #expect(h.advance(.seconds(1)).failure(ticket) == .timeout("the answer to pair.begin"))
    }

    @Test func theRelaysRefusalFailsASend() {
        var h = CoreHarness.paired()
        let (ticket, sent) = h.command(.transferUserInfo(Self.item))
        let refused = h.frame(.error(ErrorFrame(re: CoreHarness.lastRequestID(sent), code: .notPaired, message: "no")))
        #expect(refused.failure(ticket) == .notPaired)
    }

    @Test func complicationsCountDownAndFallBackToUserInfo() {
        var h = CoreHarness.paired(role: .phone, limits: Limits(complicationsPerDay: 50, complicationsRemaining: 1))
        let (t1, s1) = h.command(.transferComplication(Self.item))
        guard case .send(let send)? = s1.sentFrames.first else {
            Issue.record("nothing sent")
            return
        }
        #expect(send.mode == .complication)
        let a1 = h.frame(.accepted(Accepted(re: send.id, remaining: 0)))
        #expect(a1.completion(t1) == .success(.transfer(UserInfoTransfer(id: send.id, payload: Self.item, isCurrentComplicationInfo: true))))
        #expect(h.core.remainingComplicationUserInfoTransfers == 0)
        let (t2, s2) = h.command(.transferComplication(Self.item))
        let id2 = CoreHarness.lastRequestID(s2) ?? ""
        let a2 = h.frame(.accepted(Accepted(re: id2, remaining: 0, fallback: .userInfo)))
        guard case .success(.transfer(let t))? = a2.completion(t2) else {
            Issue.record("no transfer")
            return
        }
        #expect(t.fellBackToUserInfo && t.isCurrentComplicationInfo)
    }

    @Test func onlyAPhoneSendsComplications() {
        var h = CoreHarness.paired(role: .watch)
        let (ticket, actions) = h.command(.transferComplication(Self.item))
        #expect(actions.failure(ticket) == .notSupported("complications go phone → watch"))
    }

    @Test func cancelRemovesTheTransfer() {
        var h = CoreHarness.paired()
        let (_, sent) = h.command(.transferUserInfo(Self.item))
        let id = CoreHarness.lastRequestID(sent) ?? ""
        h.frame(.accepted(Accepted(re: id)))
        let (ticket, asked) = h.command(.cancel(transferID: id))
        guard case .cancel(let cancel)? = asked.sentFrames.first else {
            Issue.record("no cancel")
            return
        }
        #expect(cancel.target == id)
        let done = h.frame(.cancelled(Answer(re: cancel.id)))
        #expect(done.completion(ticket) == .success(.done))
        #expect(h.core.outstandingUserInfoTransfers.isEmpty)
    }

    @Test func cancellingADeliveredTransferFails() {
        var h = CoreHarness.paired()
        let (ticket, asked) = h.command(.cancel(transferID: "gone"))
        let re = CoreHarness.lastRequestID(asked)
        let refused = h.frame(.error(ErrorFrame(re: re, code: .alreadyDelivered, message: "too late")))
        #expect(refused.failure(ticket) == .relay(code: .alreadyDelivered, message: "too late"))
    }

    @Test func afterAReconnectTransfersTheRelayNoLongerListsAreFinished() {
        let transfers = ["a", "b", "c"].map { UserInfoTransfer(id: $0, payload: Self.item) }
        var h = CoreHarness(restored: SessionSnapshot(token: "tok", transfers: transfers))
        let welcomed = h.activate(paired: true)
        guard case .outstanding(let request)? = welcomed.sentFrames.last else {
            Issue.record("no outstanding request")
            return
        }
        let answered = h.frame(.outstanding(OutstandingList(re: request.id, ids: ["b"])))
        #expect(answered.events == [.userInfoTransferFinished(id: "a"), .userInfoTransferFinished(id: "c")])
        #expect(h.core.outstandingUserInfoTransfers.map(\.id) == ["b"])
        #expect(answered.writes.first?.records == [.transfers([transfers[1]])])
    }

    @Test func nothingOutstandingMeansNoReconciliation() {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok"))
        #expect(h.activate(paired: true).sentFrames.isEmpty)
    }

    @Test func anOutstandingListForNoRequestIsIgnored() {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok", transfers: [UserInfoTransfer(id: "a", payload: Self.item)]))
        h.activate(paired: true)
        #expect(h.frame(.outstanding(OutstandingList(re: "other", ids: []))).events.isEmpty)
    }

    @Test func synchronizeCompletesAfterEverythingTheRelaySentBeforeItsAnswer() {
        var h = CoreHarness.paired()
        let (ticket, asked) = h.command(.synchronize)
        guard case .outstanding(let request)? = asked.sentFrames.first else {
            Issue.record("no round trip")
            return
        }
        let backlog = h.frame(.deliver(deliver(1, .context)))
        #expect(backlog.completion(ticket) == nil)
        #expect(h.core.receivedThrough == 1 && h.core.lastSeq == 0)
        #expect(h.frame(.outstanding(OutstandingList(re: request.id, ids: []))).completion(ticket) == .success(.done))
        _ = h.command(.acknowledge(Delivery(deliver(1, .context))))
        #expect(h.core.lastSeq == h.core.receivedThrough)
    }

    @Test func synchronizeOnAnUnpairedSessionHasNothingToWaitFor() {
        var h = CoreHarness()
        h.activate(paired: false)
        let (ticket, actions) = h.command(.synchronize)
        #expect(actions.completion(ticket) == .success(.done) && actions.sentFrames.isEmpty)
    }

    @Test func synchronizeAskedBeforeTheWelcomeGoesAfterIt() {
        var h = CoreHarness(restored: SessionSnapshot(token: "tok"))
        _ = h.command(.activate)
        let (ticket, asked) = h.command(.synchronize)
        #expect(asked.sentFrames.isEmpty && asked.completion(ticket) == nil)
        h.feed(.connected)
        let welcomed = h.frame(h.welcome(paired: true))
        #expect(welcomed.sentFrames.count == 1)
    }

    @Test func frameIDsAreTheInjectedPrefixAndACounter() {
        var h = CoreHarness.paired()
        let first = CoreHarness.lastRequestID(h.command(.transferUserInfo(Self.item)).actions)
        let second = CoreHarness.lastRequestID(h.command(.transferUserInfo(Self.item)).actions)
        #expect(first == "t-2" && second == "t-3")
    }
}
