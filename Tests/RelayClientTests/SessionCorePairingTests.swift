import RelayProtocol
import Testing

@testable import RelayClient

/// Pairing by code, leaving a pair, revoked tokens.
@Suite struct SessionCorePairingTests {
    @Test func aPhoneGetsACode() {
        var h = CoreHarness(role: .phone)
        h.activate(paired: false)
        let (ticket, asked) = h.command(.beginPairing)
        guard case .pairBegin(let request)? = asked.sentFrames.first else {
            Issue.record("no pair.begin")
            return
        }
        let expires = Timestamp(millisecondsSinceEpoch: 9_000)
        let answered = h.frame(.pairCode(PairCode(re: request.id, code: "482913", expiresAt: expires)))
        #expect(answered.completion(ticket) == .success(.pairingCode(PairingCode(code: "482913", expiresAt: expires))))
    }

    @Test func onlyAPhoneBeginsAndOnlyAWatchJoins() {
        var watch = CoreHarness(role: .watch)
        watch.activate(paired: false)
        let (t1, a1) = watch.command(.beginPairing)
        #expect(a1.failure(t1) == .notSupported("only a phone begins pairing"))
        var phone = CoreHarness(role: .phone)
        phone.activate(paired: false)
        let (t2, a2) = phone.command(.pair(code: "1"))
        #expect(a2.failure(t2) == .notSupported("only a watch joins with a code"))
    }

    @Test func aWatchJoinsSavesItsTokenThenCompletes() {
        var h = CoreHarness(role: .watch)
        h.activate(paired: false)
        h.answersWrites = false
        let (ticket, asked) = h.command(.pair(code: "482913"))
        guard case .pairJoin(let join)? = asked.sentFrames.first else {
            Issue.record("no pair.join")
            return
        }
        #expect(join.code == "482913")
        let paired = h.frame(
            .paired(Paired(re: join.id, pairID: "pair-9", token: "tok-9", peer: PeerInfo(name: "iPhone", connected: true, reachable: true))))
        #expect(paired.events == [.reachabilityChanged(true), .paired(pairID: "pair-9", peerName: "iPhone")])
        #expect(paired.completion(ticket) == nil)  // not before the token is saved
        #expect(h.unanswered.first?.records.contains(.token("tok-9")) == true)
        let saved = h.feed(.persisted(id: h.unanswered[0].id))
        #expect(saved.completion(ticket) == .success(.done))
        #expect(h.core.isPaired && h.core.peerName == "iPhone" && h.core.pairID == "pair-9")
    }

    @Test func aJoinWhoseTokenCannotBeSavedFails() {
        var h = CoreHarness(role: .watch)
        h.activate(paired: false)
        h.failWrites = true
        let (ticket, asked) = h.command(.pair(code: "1"))
        let re = CoreHarness.lastRequestID(asked) ?? ""
        let paired = h.frame(.paired(Paired(re: re, pairID: "p", token: "t", peer: PeerInfo(name: "P", connected: true, reachable: true))))
        #expect(paired.failure(ticket) == .persistFailed("disk full"))
        #expect(paired.events.contains(.error(.persistFailed("disk full"))))
    }

    @Test func thePhoneLearnsOfTheJoinWithoutARequest() {
        var h = CoreHarness(role: .phone)
        h.activate(paired: false)
        let paired = h.frame(.paired(Paired(pairID: "p", token: "t", peer: PeerInfo(name: "Watch", connected: true, reachable: false))))
        #expect(paired.events == [.paired(pairID: "p", peerName: "Watch")])
        #expect(paired.writes.count == 1)
        #expect(h.core.isPaired)
    }

    @Test func aNewPairStartsSeqsAndTransfersOver() {
        var h = CoreHarness(
            role: .phone,
            restored: SessionSnapshot(token: "old", lastSeq: 30, transfers: [UserInfoTransfer(id: "x", payload: Payload(kind: "a"))]))
        h.activate(paired: true)
        h.frame(.paired(Paired(pairID: "p2", token: "t2", peer: PeerInfo(name: "W", connected: true, reachable: true))))
        #expect(h.core.lastSeq == 0 && h.core.outstandingUserInfoTransfers.isEmpty)
        #expect(h.frame(.deliver(deliver(1))).events.count == 1)
    }

    @Test func aWrongCodeFailsWithTheRelaysError() {
        var h = CoreHarness(role: .watch)
        h.activate(paired: false)
        let (ticket, asked) = h.command(.pair(code: "000000"))
        let re = CoreHarness.lastRequestID(asked) ?? ""
        let failed = h.frame(.error(ErrorFrame(re: re, code: .pairingCodeInvalid, message: "wrong code")))
        #expect(failed.failure(ticket) == .relay(code: .pairingCodeInvalid, message: "wrong code"))
    }

    @Test func unpairForgetsThePairAndCompletes() {
        var h = CoreHarness.paired(role: .phone, lastSeq: 3)
        let (ticket, asked) = h.command(.unpair)
        let re = CoreHarness.lastRequestID(asked) ?? ""
        let done = h.frame(.unpaired(Unpaired(re: re, reason: "unpaired by this device")))
        #expect(done.completion(ticket) == .success(.done))
        #expect(done.events.contains(.unpaired(reason: "unpaired by this device")))
        #expect(!h.core.isPaired && h.core.lastSeq == 0)
        #expect(done.writes.first?.records.contains(.token(nil)) == true)
    }

    @Test func theCounterpartLeavingUnpairsThisDevice() {
        var h = CoreHarness.paired()
        let gone = h.frame(.unpaired(Unpaired(reason: "peer unpaired")))
        #expect(gone.events == [.reachabilityChanged(false), .unpaired(reason: "peer unpaired")])
        #expect(!h.core.isPaired)
    }

    /// PROTOCOL.md §7.1: a pair that ends while the peer's app is uninstalled is not the app
    /// installed again. The session said `peerAppInstalledChanged(true)` before `unpaired`, and
    /// WCSession told its delegate `sessionWatchStateDidChange` with `isPaired` and
    /// `isWatchAppInstalled` both still true, after the pair was gone.
    @Test func aPairEndingWhileThePeersAppIsUninstalledSaysNoInstall() {
        var h = CoreHarness.paired(role: .phone)
        let gone = h.frame(.peer(PeerChange(connected: false, reachable: false, appInstalled: false)))
        #expect(gone.events == [.reachabilityChanged(false), .peerAppInstalledChanged(false)])
        let unpaired = h.frame(.unpaired(Unpaired(reason: "peer unpaired")))
        #expect(unpaired.events == [.unpaired(reason: "peer unpaired")])
        #expect(!h.core.isPaired && h.core.isPeerAppInstalled, "unpaired: the flag starts over for the next pair")

        // The token revoked while away, the same.
        var r = CoreHarness.paired(role: .phone)
        r.frame(.peer(PeerChange(connected: false, reachable: false, appInstalled: false)))
        r.feed(.closed(code: 1006))
        r.advance(.seconds(2))
        r.feed(.connected)
        let refused = r.frame(.error(ErrorFrame(re: r.core.helloID, code: .unauthorized, message: "token revoked")))
        #expect(refused.events == [.unpaired(reason: "token revoked")])
        #expect(r.core.isPeerAppInstalled)
    }

    /// PROTOCOL.md §7.1: `uninstallApp` says `state {appInstalled: false}` ahead of the close
    /// when activated. Not activated (the relay away), nothing can be said: the command fails
    /// (`notActivated`) so the caller knows the peer still sees the app installed. It
    /// succeeded, and `watchrelay watch`'s uninstall printed that the phone sees the app gone.
    @Test func uninstallingTheAppSaysWhetherTheRelayWasTold() {
        var h = CoreHarness.paired(role: .watch)
        let (told, actions) = h.command(.uninstallApp)
        #expect(actions.sentFrames == [.state(StateChange(appInstalled: false))])
        #expect(actions.completion(told) == .success(.done))

        var away = CoreHarness(role: .watch, restored: SessionSnapshot(token: "tok", pairID: "pair-1", peerName: "Peer"))
        _ = away.command(.activate)
        away.feed(.closed(code: 1006))  // the relay cannot be reached: backing off
        let (untold, refused) = away.command(.uninstallApp)
        #expect(refused.sentFrames.isEmpty)
        #expect(refused.failure(untold) == .notActivated)
        #expect(away.core.phase == .closed)
    }

    @Test func aRevokedTokenAtHelloUnpairs() {
        var h = CoreHarness(restored: SessionSnapshot(token: "revoked", lastSeq: 2))
        _ = h.command(.activate)
        h.feed(.connected)
        let refused = h.frame(.error(ErrorFrame(re: h.core.helloID, code: .unauthorized, message: "token revoked")))
        #expect(refused.events == [.unpaired(reason: "token revoked")])
        #expect(h.core.token == nil && h.core.lastSeq == 0)
    }

    @Test func anErrorForNoKnownRequestIsIgnored() {
        var h = CoreHarness.paired()
        #expect(h.frame(.error(ErrorFrame(re: "nobody", code: .badFrame, message: "?"))).isEmpty)
        #expect(h.frame(.error(ErrorFrame(re: nil, code: .badFrame, message: "?"))).isEmpty)
    }
}
