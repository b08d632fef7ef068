import RelayCore
import RelayProtocol
import Testing

/// A phone paired with several watches (PROTOCOL.md §6.5): one pair per watch, the phone holding
/// one phone token per pair, connected as at most one of them (the active watch) at a time.
/// Queues, seqs, presence and `transferred` are keyed by pair and direction, so what one watch's
/// pair holds never reaches another watch, and switching loses nothing.
@Suite struct SeveralWatchesTests {
    /// Watch A paired with the phone's first identity, then watch B with a second one (a phone
    /// connection without a token: the phone's state for watch B). Returns both pairs' tokens.
    struct TwoWatches {
        var phoneA: LinkID
        var watchA: LinkID
        var phoneB: LinkID
        var watchB: LinkID
        var tokensA: [Role: String]
        var tokensB: [Role: String]
        var pairA: PairID
        var pairB: PairID
    }

    static func pairTwoWatches(_ h: inout RelayHarness) -> TwoWatches {
        let (phoneA, watchA) = h.pairDevices()
        let tokensA = h.tokens
        let pairA = h.pairID
        let (phoneB, _) = h.connect(.phone)
        let code = h.beginPairing(phoneB)
        let (watchB, _) = h.connect(.watch)
        let out = h.join(watchB, code)
        #expect(out.frames(to: phoneA).isEmpty && out.frames(to: watchA).isEmpty, "pair A is not told anything")
        #expect(out.closes.isEmpty, "nobody is closed: no pair was left")
        return TwoWatches(
            phoneA: phoneA, watchA: watchA, phoneB: phoneB, watchB: watchB, tokensA: tokensA, tokensB: h.tokens,
            pairA: pairA, pairB: h.pairID)
    }

    @Test func aSecondWatchPairedFromTheSamePhoneMakesASecondPairAndKeepsTheFirst() {
        var h = RelayHarness()
        let w = Self.pairTwoWatches(&h)
        #expect(w.pairA != w.pairB)
        #expect(h.state.pairCount == 2 && h.store.pairs.count == 2)
        #expect(w.tokensA[.phone] != w.tokensB[.phone], "one phone token per watch")
    }

    @Test func whatThePhoneSendsAsOneWatchGoesToThatWatchOnly() {
        var h = RelayHarness()
        let w = Self.pairTwoWatches(&h)
        let toB = h.send(w.phoneB, id: "p-b1", mode: .userInfo)
        #expect(toB.delivers(to: w.watchB).map(\.id) == ["p-b1"])
        #expect(toB.frames(to: w.watchA).isEmpty)
        let toA = h.send(w.phoneA, id: "p-a1", mode: .context)
        #expect(toA.delivers(to: w.watchA).map(\.id) == ["p-a1"])
        #expect(toA.frames(to: w.watchB).isEmpty)
        // Seqs count per pair: each watch's first item is seq 1.
        #expect(toB.delivers(to: w.watchB).map(\.seq) == [1] && toA.delivers(to: w.watchA).map(\.seq) == [1])
    }

    @Test func itemsQueuedForTheOldWatchStayQueuedForItAcrossTheSwitchAndReachOnlyIt() {
        var h = RelayHarness()
        let (phoneA, watchA) = h.pairDevices()
        let tokensA = h.tokens
        // Watch A is away; the phone queues two userInfo items and a context for it.
        h.close(watchA)
        h.send(phoneA, id: "p-a1", mode: .userInfo)
        h.send(phoneA, id: "p-a2", mode: .userInfo)
        h.send(phoneA, id: "p-a3", mode: .context)
        // The user switches to watch B: the phone's connection as A goes, a new identity pairs B.
        h.close(phoneA)
        let (phoneB, _) = h.connect(.phone)
        let code = h.beginPairing(phoneB)
        let (watchB, _) = h.connect(.watch)
        h.join(watchB, code)
        let toB = h.send(phoneB, id: "p-b1", mode: .userInfo)
        #expect(toB.delivers(to: watchB).map(\.id) == ["p-b1"], "B gets only what was sent to B")
        #expect(h.state.queuedItemCount == 4)
        // Watch A comes back while the phone is on B: it gets its backlog, in order.
        let (watchA2, back) = h.connect(.watch, token: tokensA[.watch])
        #expect(back.frames(to: watchA2).first?.welcome?.peer?.connected == false, "A's phone is on watch B")
        #expect(back.delivers(to: watchA2).map(\.id) == ["p-a1", "p-a2", "p-a3"])
        #expect(back.frames(to: phoneB).isEmpty, "the phone as B hears nothing of watch A")
        // A acks; the phone hears of it when it is A again, not as B.
        let ack = h.ack(watchA2, 3)
        #expect(ack.frames(to: phoneB).isEmpty)
        h.close(phoneB)
        let (phoneA2, again) = h.connect(.phone, token: tokensA[.phone])
        #expect(again.frames(to: phoneA2).compactMap(\.transferred).flatMap(\.ids) == ["p-a1", "p-a2"])
        #expect(again.frames(to: watchB).isEmpty)
    }

    @Test func theWatchLeftBehindSeesItsPhoneGoAndComeBackAsTheSwitchesHappen() {
        var h = RelayHarness()
        let w = Self.pairTwoWatches(&h)
        // Switch to B: the connection as A closes.
        let away = h.close(w.phoneA)
        #expect(away.frames(to: w.watchA) == [.peer(PeerChange(connected: false, reachable: false))])
        #expect(away.frames(to: w.watchB).isEmpty)
        // A message from watch A now fails: its phone is not connected.
        let refused = h.send(w.watchA, id: "w-a1", mode: .message)
        #expect(refused.errors(to: w.watchA).map(\.code) == [.notReachable])
        #expect(refused.frames(to: w.phoneB).isEmpty, "never to the phone's other identity")
        // Switch back to A: B's phone connection goes, A's comes.
        let bGone = h.close(w.phoneB)
        #expect(bGone.frames(to: w.watchB) == [.peer(PeerChange(connected: false, reachable: false))])
        let (_, back) = h.connect(.phone, token: w.tokensA[.phone])
        #expect(back.frames(to: w.watchA) == [.peer(PeerChange(connected: true, reachable: true))])
        #expect(back.frames(to: w.watchB).isEmpty)
    }

    @Test func userInfoFromTheInactiveWatchWaitsForThePhoneToSwitchBack() {
        var h = RelayHarness()
        let w = Self.pairTwoWatches(&h)
        h.close(w.phoneA)
        let sent = h.send(w.watchA, id: "w-a1", mode: .userInfo)
        #expect(sent.frames(to: w.watchA).compactMap(\.accepted).map(\.re) == ["w-a1"])
        #expect(sent.frames(to: w.phoneB).isEmpty)
        let (phoneA2, back) = h.connect(.phone, token: w.tokensA[.phone])
        #expect(back.delivers(to: phoneA2).map(\.id) == ["w-a1"])
    }

    @Test func aPhoneThatPairsAgainOnTheSameIdentityStillLeavesItsOldPair() {
        // The single-watch rule (§6.4) is unchanged: only a new identity adds a watch.
        var h = RelayHarness()
        let (phone, watchA) = h.pairDevices()
        let code = h.beginPairing(phone)
        let (watchB, _) = h.connect(.watch)
        let out = h.join(watchB, code)
        #expect(out.frames(to: watchA) == [.unpaired(Unpaired(reason: "repaired"))])
        #expect(out.closeCode(of: watchA) == .unpaired)
        #expect(h.state.pairCount == 1)
    }

    @Test func bothPairsSurviveARestartWithTheirOwnQueues() {
        var h = RelayHarness()
        let w = Self.pairTwoWatches(&h)
        h.close(w.watchA)
        h.close(w.watchB)
        h.send(w.phoneA, id: "p-a1", mode: .userInfo)
        h.send(w.phoneB, id: "p-b1", mode: .userInfo)
        h.restart()
        let (watchA, a) = h.connect(.watch, token: w.tokensA[.watch])
        let (watchB, b) = h.connect(.watch, token: w.tokensB[.watch])
        #expect(a.delivers(to: watchA).map(\.id) == ["p-a1"])
        #expect(b.delivers(to: watchB).map(\.id) == ["p-b1"])
    }
}
