import RelayCore
import RelayProtocol
import Testing

@Suite struct ComplicationTests {
    @Test func aComplicationFromAWatchIsNotSupported() {
        var h = RelayHarness()
        let (_, watch) = h.pairDevices()
        let out = h.send(watch, id: "w-040", mode: .complication)
        #expect(out.effects == [.send(watch, errorFrame(.notSupported, re: "w-040"))])
    }

    @Test func acceptedCarriesTheRemainingBudgetCountingDownFrom50() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(phone, id: "c-1", mode: .complication)
        #expect(
            out.effects == [
                .persist(.addComplicationUse(h.pairID, h.now)),
                .persist(.insertItem(h.pairID, direction: .phone, h.item("c-1", .complication))),
                .send(phone, .accepted(Accepted(re: "c-1", remaining: 49))),
                .persist(.setSeqReserved(h.pairID, direction: .phone, 1024)),
                .persist(.setItemSeq(h.pairID, direction: .phone, sendID: "c-1", seq: 1)),
                .send(watch, .deliver(h.deliver(1, "c-1", .complication, from: .phone))),
            ])
        for n in 2...50 {
            let accepted = h.send(phone, id: "c-\(n)", mode: .complication).frames(to: phone)
            #expect(accepted == [.accepted(Accepted(re: "c-\(n)", remaining: 50 - n))])
        }
    }

    @Test func overBudgetAComplicationIsAcceptedAndDeliveredAsUserInfo() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for n in 1...50 { h.send(phone, id: "c-\(n)", mode: .complication) }
        h.ack(watch, 50)
        let out = h.send(phone, id: "c-51", mode: .complication)
        #expect(out.frames(to: phone) == [.accepted(Accepted(re: "c-51", remaining: 0, fallback: .userInfo))])
        #expect(out.delivers(to: watch) == [h.deliver(51, "c-51", .userInfo, from: .phone)])
        #expect(!out.mutations.contains { if case .addComplicationUse = $0 { true } else { false } })
        #expect(h.ack(watch, 51).frames(to: phone) == [.transferred(Transferred(ids: ["c-51"]))], "a demoted one is transferred too")
    }

    @Test func complicationsGoAheadOfQueuedItemsAndADemotedOneKeepsItsFIFOPlace() {
        var h = RelayHarness(configuration: RelayConfiguration(limits: Limits(complicationsPerDay: 2)))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for (id, mode) in [("u-1", DeliveryMode.userInfo), ("c-1", .complication), ("x-1", .context), ("u-2", .userInfo),
            ("c-2", .complication), ("c-3", .complication), ("u-3", .userInfo)]
        {
            h.send(phone, id: id, mode: mode)
        }
        let (w2, out) = h.reconnect(.watch)
        #expect(out.delivers(to: w2).map(\.id) == ["c-1", "c-2", "u-1", "x-1", "u-2", "c-3", "u-3"])
        #expect(out.delivers(to: w2).map(\.mode) == [.complication, .complication, .userInfo, .context, .userInfo, .userInfo, .userInfo])
        #expect(out.seqs(to: w2) == [1, 2, 3, 4, 5, 6, 7])
    }

    @Test func theBudgetIsARolling24Hours() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let t0 = h.now
        for n in 1...25 { h.send(phone, id: "a-\(n)", mode: .complication) }
        h.advance(ms: 3_600_000)
        for n in 1...25 { h.send(phone, id: "b-\(n)", mode: .complication) }
        h.now = t0.adding(milliseconds: 86_399_999)
        #expect(h.send(phone, id: "late", mode: .complication).frames(to: phone) == [.accepted(Accepted(re: "late", remaining: 0, fallback: .userInfo))])
        h.now = t0.adding(milliseconds: 86_400_000)
        #expect(h.send(phone, id: "next-day", mode: .complication).frames(to: phone) == [.accepted(Accepted(re: "next-day", remaining: 24))])
    }

    @Test func welcomeAnnouncesTheComplicationsRemainingForThePair() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for n in 1...3 { h.send(phone, id: "c-\(n)", mode: .complication) }
        h.close(phone)
        h.close(watch)
        let (p2, pOut) = h.reconnect(.phone)
        let (w2, wOut) = h.reconnect(.watch)
        #expect(pOut.frames(to: p2).first?.welcome?.limits == h.limits(remaining: 47))
        #expect(wOut.frames(to: w2).first?.welcome?.limits == h.limits(remaining: 47))
        h.now = h.now.adding(milliseconds: 86_400_000)
        h.close(p2)
        let (p3, later) = h.reconnect(.phone)
        #expect(later.frames(to: p3).first?.welcome?.limits.complicationsRemaining == 50)
    }

    @Test func aCancelledComplicationDoesNotGiveItsBudgetBack() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "c-1", mode: .complication)
        #expect(h.send(phone, .cancel(Cancel(id: "k-1", target: "c-1"))).frames(to: phone) == [.cancelled(Answer(re: "k-1"))])
        #expect(h.send(phone, id: "c-2", mode: .complication).frames(to: phone) == [.accepted(Accepted(re: "c-2", remaining: 48))])
    }

    @Test func aDuplicateComplicationIsAcceptedAgainWithTheCurrentRemainingAndUsesNoBudget() {
        var h = RelayHarness(configuration: RelayConfiguration(limits: Limits(complicationsPerDay: 2)))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "c-1", mode: .complication)
        #expect(h.send(phone, id: "c-1", mode: .complication).effects == [.send(phone, .accepted(Accepted(re: "c-1", remaining: 1)))])
        h.send(phone, id: "c-2", mode: .complication)
        h.send(phone, id: "c-3", mode: .complication)
        #expect(h.send(phone, id: "c-3", mode: .complication).effects == [.send(phone, .accepted(Accepted(re: "c-3", remaining: 0, fallback: .userInfo)))])
        #expect(h.outstanding(phone) == ["c-1", "c-2", "c-3"])
    }
}
