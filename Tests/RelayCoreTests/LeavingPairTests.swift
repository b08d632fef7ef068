import RelayCore
import RelayProtocol
import Testing

@Suite struct LeavingPairTests {
    @Test func unpairTellsBothDeletesThePairAndClosesTheMemberLeftBehindWith4002() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(phone, .unpair(Request(id: "p-090")))
        #expect(
            out.effects == [
                // The deletion first: both `unpaired` frames wait for its commit.
                .persist(.deletePair(PairID("pair-1"))),
                .send(phone, .unpaired(Unpaired(re: "p-090", reason: "unpair"))),
                .send(watch, .unpaired(Unpaired(reason: "unpair"))),
                .close(watch, .unpaired),
            ])
        #expect(h.store.pairs.isEmpty)
        #expect(h.state.pairCount == 0)
    }

    @Test func aWatchThatUnpairsStaysConnectedAndThePhoneIsClosed() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(watch, .unpair(Request(id: "w-090")))
        #expect(out.frames(to: watch) == [.unpaired(Unpaired(re: "w-090", reason: "unpair"))])
        #expect(out.frames(to: phone) == [.unpaired(Unpaired(reason: "unpair"))])
        #expect(out.closes.map(\.link) == [phone] && out.closeCode(of: phone) == .unpaired)
    }

    @Test func theInitiatorStaysConnectedUnpairedAndMayPairAgain() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        h.send(phone, .unpair(Request(id: "p-090")))
        #expect(h.send(phone, id: "p-091", mode: .userInfo).effects == [.send(phone, errorFrame(.notPaired, re: "p-091"))])
        let code = h.beginPairing(phone)
        let (watch2, _) = h.connect(.watch)
        let out = h.join(watch2, code)
        #expect(out.frames(to: phone).first?.paired?.pairID == "pair-2")
        #expect(out.frames(to: phone).count == 1, "nothing from the old pair")
    }

    @Test func unpairRevokesBothTokens() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let old = h.tokens
        h.send(phone, .unpair(Request(id: "p-090")))
        h.close(phone)
        h.close(watch)
        for role in Role.all {
            let link = h.open()
            let out = h.hello(link, role, token: old[role], id: "h-\(role)")
            #expect(out.effects == [.send(link, errorFrame(.unauthorized, re: "h-\(role)")), .close(link, .policy)])
        }
    }

    @Test func unpairDiscardsQueuedItemsPendingTransferredAndPendingReplies() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .userInfo)  // delivered to the phone as seq 1
        h.send(phone, id: "m-1", mode: .message, wantsReply: true)
        h.close(watch)
        h.ack(phone, 1)  // the watch is offline: transferred pending
        h.send(phone, id: "u-1", mode: .userInfo)
        h.send(phone, id: "x-1", mode: .context)
        #expect(h.state.queuedItemCount == 2)
        h.send(phone, .unpair(Request(id: "p-090")))
        #expect(h.state.queuedItemCount == 0)
        #expect(h.state.pendingReplyCount == 0)
        h.advance(ms: 20_000)
        #expect(h.tick().effects.isEmpty, "no reply_timeout for a discarded request")
        // A new pair starts from nothing: seq 1, no backlog, no context, no transferred.
        let code = h.beginPairing(phone)
        let (w2, _) = h.connect(.watch)
        h.join(w2, code)
        #expect(h.outstanding(phone) == [])
        #expect(h.send(phone, id: "u-2", mode: .userInfo).seqs(to: w2) == [1])
    }

    @Test func aMemberThatWasOfflineLearnsOfTheUnpairOnItsNextHello() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        let out = h.send(phone, .unpair(Request(id: "p-090")))
        #expect(out.closes.isEmpty)
        #expect(out.frames(to: phone) == [.unpaired(Unpaired(re: "p-090", reason: "unpair"))])
        let (w2, wOut) = h.reconnect(.watch, lastSeq: 99)
        #expect(wOut.closeCode(of: w2) == .policy)
        #expect(wOut.errors(to: w2).map(\.code) == [.unauthorized])
    }

    @Test func pairingAgainDissolvesTheOldPairAndClosesTheOldPeerWith4002() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let old = h.tokens
        h.send(phone, id: "u-old", mode: .userInfo)
        let code = h.beginPairing(phone)
        let (watch2, _) = h.connect(.watch)
        let out = h.join(watch2, code, id: "w2-join")
        #expect(
            out.trace == [
                "persist deletePair", "unpaired → \(watch)", "close 4002 → \(watch)", "persist insertPair",
                "paired → \(phone)", "paired → \(watch2)",
            ])
        #expect(out.frames(to: watch) == [.unpaired(Unpaired(reason: "repaired"))])
        #expect(out.frames(to: phone).map(\.paired?.pairID) == ["pair-2"], "the phone just gets paired")
        #expect(h.store.pairs.keys.map(\.rawValue) == ["pair-2"])
        for role in Role.all {
            let link = h.open()
            #expect(h.hello(link, role, token: old[role]).errors(to: link).map(\.code) == [.unauthorized])
        }
        #expect(h.outstanding(phone) == [], "the old pair's items are gone")
    }

    @Test func theSameTwoDevicesPairingAgainStartAFreshPair() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let old = h.tokens
        h.send(phone, id: "u-1", mode: .userInfo)
        let out = h.join(watch, h.beginPairing(phone))
        #expect(out.trace == ["persist deletePair", "persist insertPair", "paired → \(phone)", "paired → \(watch)"])
        #expect(h.tokens[.phone] != old[.phone] && h.tokens[.watch] != old[.watch])
        #expect(h.send(phone, id: "u-2", mode: .userInfo).seqs(to: watch) == [1])
    }

    @Test func aWatchJoiningAnotherPhoneLeavesItsOldPair() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let (phone2, _) = h.connect(.phone)
        let code = h.beginPairing(phone2)
        let out = h.join(watch, code)
        #expect(out.frames(to: phone) == [.unpaired(Unpaired(reason: "repaired"))])
        #expect(out.closeCode(of: phone) == .unpaired)
        #expect(out.frames(to: watch).map(\.paired?.pairID) == ["pair-2"])
        #expect(out.frames(to: phone2).map(\.paired?.pairID) == ["pair-2"])
    }

    @Test func everyFrameThatNeedsAPairIsNotPairedFromAnUnpairedDevice() {
        var h = RelayHarness()
        let (link, _) = h.connect(.watch)
        let frames: [ClientFrame] = [
            .send(Send(id: "a-1", mode: .message, payload: Payload(kind: "k"))),
            .reply(ClientReply(id: "a-2", re: "x", payload: Payload(kind: "k"))),
            .ack(Ack(id: "a-3", seq: 1)),
            .cancel(Cancel(id: "a-4", target: "x")),
            .outstanding(Request(id: "a-5")),
            .unpair(Request(id: "a-6")),
        ]
        for f in frames {
            #expect(h.send(link, f).effects == [.send(link, errorFrame(.notPaired, re: f.id))])
        }
        #expect(h.send(link, .state(StateChange(foreground: false))).effects.isEmpty, "state needs no pair")
    }
}
