import RelayCore
import RelayProtocol
import Testing

@Suite struct UserInfoTests {
    static let delete = Payload(kind: "favorites.delete", ["login": "gaearon"])

    @Test func aUserInfoIsCommittedBeforeItIsAccepted() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        let out = h.send(watch, id: "w-020", mode: .userInfo, Self.delete)
        #expect(
            out.effects == [
                .persist(.insertItem(h.pairID, direction: .watch, h.item("w-020", .userInfo, Self.delete))),
                .send(watch, .accepted(Accepted(re: "w-020"))),
            ])
    }

    /// A retry answered from memory waits for the store: on a new connection the first
    /// attempt's insert may still be uncommitted, and nothing else would hold the answer back.
    @Test func aRetriedUserInfoIsAcceptedAgainBehindTheStore() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "x-1", mode: .userInfo)
        h.close(phone)
        let (again, _) = h.reconnect(.phone)
        let out = h.send(again, id: "x-1", mode: .userInfo)
        #expect(out.actions == [.awaitStore, .send(again, .accepted(Accepted(re: "x-1")))])
    }

    @Test func aUserInfoToAConnectedPeerIsAcceptedBeforeItIsDelivered() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(watch, id: "w-020", mode: .userInfo, Self.delete)
        #expect(
            out.effects == [
                .persist(.insertItem(h.pairID, direction: .watch, h.item("w-020", .userInfo, Self.delete))),
                .send(watch, .accepted(Accepted(re: "w-020"))),
                .persist(.setSeqReserved(h.pairID, direction: .watch, 1024)),
                .persist(.setItemSeq(h.pairID, direction: .watch, sendID: "w-020", seq: 1)),
                .send(phone, .deliver(h.deliver(1, "w-020", .userInfo, from: .watch, Self.delete))),
            ])
    }

    @Test func userInfoIsDeliveredInTheOrderAccepted() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        let ids = (1...6).map { "w-\($0)" }
        for id in ids { h.send(watch, id: id, mode: .userInfo) }
        let (p2, out) = h.reconnect(.phone)
        #expect(out.delivers(to: p2).map(\.id) == ids)
        #expect(out.seqs(to: p2) == [1, 2, 3, 4, 5, 6])
    }

    @Test func aBacklogOfThousandsDrainsInOrderExactlyOnceThroughTheWindow() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        let ids = (1...3000).map { "w-\($0)" }
        for id in ids { h.send(watch, id: id, mode: .userInfo) }
        let (p2, first) = h.reconnect(.phone)
        var delivered = first.delivers(to: p2)
        #expect(delivered.count == RelayConfiguration().inFlightItems, "the in-flight window")
        var seen = delivered.map(\.id)
        while let last = delivered.last {
            delivered = h.ack(p2, last.seq).delivers(to: p2)
            seen += delivered.map(\.id)
        }
        #expect(seen == ids)
        #expect(h.outstanding(watch) == [])
    }

    @Test func anUnackedUserInfoIsRedeliveredWithItsSeqOnEveryReconnectUntilAcked() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let first = h.deliver(1, "w-1", .userInfo, from: .watch)
        #expect(h.send(watch, id: "w-1", mode: .userInfo).delivers(to: phone) == [first])
        var link = phone
        for _ in 1...3 {
            h.close(link)
            let (next, out) = h.reconnect(.phone)
            #expect(out.delivers(to: next) == [first])
            link = next
        }
        h.ack(link, 1)
        h.close(link)
        let (last, out) = h.reconnect(.phone)
        #expect(out.delivers(to: last).isEmpty)
    }

    @Test func anAckIsCumulativeAndTellsTheSenderTransferredAtOnce() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for id in ["w-1", "w-2", "w-3"] { h.send(watch, id: id, mode: .userInfo) }
        let out = h.ack(phone, 2)
        #expect(
            out.effects == [
                .persist(.deleteItems(h.pairID, direction: .watch, sendIDs: ["w-1", "w-2"])),
                .persist(.recordFinished(h.pairID, direction: .watch, sendIDs: ["w-1", "w-2"])),
                .send(watch, .transferred(Transferred(ids: ["w-1", "w-2"]))),
            ])
        #expect(h.outstanding(watch) == ["w-3"])
        #expect(h.ack(phone, 2).effects.isEmpty, "acking again changes nothing")
    }

    @Test func anAckWhileTheSenderIsAwayIsKeptAndSentRightAfterItsNextWelcome() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .userInfo)
        h.send(watch, id: "w-2", mode: .userInfo)
        h.close(watch)
        let first = h.ack(phone, 1)
        #expect(first.mutations.last == .appendPendingTransferred(h.pairID, direction: .watch, ids: ["w-1"]))
        #expect(first.sends.isEmpty)
        h.ack(phone, 2)
        #expect(h.store.direction(h.pairID, .watch).pendingTransferred == ["w-1", "w-2"])
        let (w2, out) = h.reconnect(.watch)
        #expect(out.frames(to: w2).count == 2)
        #expect(out.frames(to: w2).last == .transferred(Transferred(ids: ["w-1", "w-2"])))
        #expect(h.store.direction(h.pairID, .watch).pendingTransferred == [])
        h.close(w2)
        let (w3, again) = h.reconnect(.watch)
        #expect(again.frames(to: w3).count == 1, "sent once")
    }

    @Test func anAckAboveWhatWasSentAcknowledgesOnlyWhatWasSent() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .userInfo)
        h.send(phone, id: "p-1", mode: .message)  // seq 1 of the other direction
        h.ack(phone, 5)
        #expect(h.send(watch, id: "w-2", mode: .userInfo).seqs(to: phone) == [2])
        #expect(h.outstanding(watch) == ["w-2"])
    }

    @Test func cancellingAnUnsentUserInfoRemovesItForGood() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        h.send(watch, id: "w-020", mode: .userInfo)
        h.send(watch, id: "w-021", mode: .userInfo)
        #expect(h.outstanding(watch) == ["w-020", "w-021"])
        let out = h.send(watch, .cancel(Cancel(id: "w-023", target: "w-021")))
        #expect(
            out.effects == [
                .persist(.deleteItems(h.pairID, direction: .watch, sendIDs: ["w-021"])),
                .persist(.recordCancelled(h.pairID, direction: .watch, sendID: "w-021")),
                .send(watch, .cancelled(Answer(re: "w-023"))),
            ])
        #expect(h.send(watch, .cancel(Cancel(id: "w-024", target: "w-021"))).effects == [.send(watch, .cancelled(Answer(re: "w-024")))])
        #expect(h.outstanding(watch) == ["w-020"])
        let (p2, pOut) = h.reconnect(.phone)
        #expect(pOut.delivers(to: p2).map(\.id) == ["w-020"])
    }

    /// PROTOCOL.md §8.8: a cancelled item is `cancelled` again, also after a restart (a client
    /// retrying a cancel whose answer the restart cut off); a delivered one `already_delivered`.
    /// The relay used to persist a cancel as it does an ack, and answered `already_delivered`
    /// for both after a restart (found by a black-box probe).
    @Test func aCancelledUserInfoIsCancelledAgainAfterARestart() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .userInfo)
        h.ack(phone, 1)
        h.close(phone)
        h.send(watch, id: "w-2", mode: .userInfo)
        h.send(watch, .cancel(Cancel(id: "c-1", target: "w-2")))
        h.restart()
        let (watch2, _) = h.reconnect(.watch)
        #expect(h.send(watch2, .cancel(Cancel(id: "c-2", target: "w-2"))).effects == [.send(watch2, .cancelled(Answer(re: "c-2")))])
        #expect(h.send(watch2, .cancel(Cancel(id: "c-3", target: "w-1"))).effects == [.send(watch2, errorFrame(.alreadyDelivered, re: "c-3"))])
        #expect(h.outstanding(watch2) == [])
    }

    @Test func cancellingASentUserInfoIsAlreadyDeliveredAckedOrNot() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .userInfo)
        h.send(watch, id: "w-2", mode: .userInfo)
        h.ack(phone, 1)
        for target in ["w-1", "w-2"] {
            let out = h.send(watch, .cancel(Cancel(id: "c-\(target)", target: target)))
            #expect(out.effects == [.send(watch, errorFrame(.alreadyDelivered, re: "c-\(target)"))])
        }
    }

    @Test func cancellingAMessageIsNotSupportedAndAnUnknownTargetIsUnknownID() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-m", mode: .message)
        h.send(phone, id: "p-u", mode: .userInfo)
        #expect(h.send(watch, .cancel(Cancel(id: "c-1", target: "w-m"))).effects == [.send(watch, errorFrame(.notSupported, re: "c-1"))])
        #expect(h.send(watch, .cancel(Cancel(id: "c-2", target: "nope"))).effects == [.send(watch, errorFrame(.unknownID, re: "c-2"))])
        #expect(h.send(watch, .cancel(Cancel(id: "c-3", target: "p-u"))).effects == [.send(watch, errorFrame(.unknownID, re: "c-3"))], "the peer's send is not this device's")
    }

    @Test func outstandingListsUnackedUncancelledUnreplacedSendsInAcceptanceOrder() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        // All in the same millisecond: the order must come from acceptance, not the clock.
        for (id, mode) in [("u-1", DeliveryMode.userInfo), ("c-1", .complication), ("x-1", .context), ("u-2", .userInfo),
            ("x-2", .context), ("u-3", .userInfo), ("c-2", .complication)]
        {
            h.send(phone, id: id, mode: mode)
        }
        h.send(phone, .cancel(Cancel(id: "cancel-1", target: "u-3")))
        #expect(h.outstanding(phone) == ["u-1", "c-1", "u-2", "x-2", "c-2"])
        let (w2, out) = h.reconnect(.watch)
        #expect(out.delivers(to: w2).map(\.id) == ["c-1", "c-2", "u-1", "u-2", "x-2"])
        h.ack(w2, 2)
        #expect(h.outstanding(phone) == ["u-1", "u-2", "x-2"])
    }

    @Test func aDuplicateSendIDIsAcceptedAgainAndNotQueuedAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        h.send(watch, id: "w-1", mode: .userInfo)
        #expect(h.send(watch, id: "w-1", mode: .userInfo).effects == [.send(watch, .accepted(Accepted(re: "w-1")))], "while queued")
        let (p2, out) = h.reconnect(.phone)
        #expect(out.delivers(to: p2).map(\.id) == ["w-1"])
        #expect(h.send(watch, id: "w-1", mode: .userInfo).effects == [.send(watch, .accepted(Accepted(re: "w-1")))], "while sent")
        h.ack(p2, 1)
        #expect(h.send(watch, id: "w-1", mode: .userInfo).effects == [.send(watch, .accepted(Accepted(re: "w-1")))], "after the ack")
        #expect(h.outstanding(watch) == [])
    }
}
