import RelayCore
import RelayProtocol
import Testing

@Suite struct PairingTests {
    @Test func pairBeginAnswersASixDigitCodeThatExpiresIn120Seconds() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let out = h.send(phone, .pairBegin(Request(id: "p-002")))
        let code = PairCode(re: "p-002", code: "100001", expiresAt: RelayHarness.start.adding(milliseconds: 120_000))
        #expect(out.effects == [.send(phone, .pairCode(code))])
    }

    @Test func pairingCodesNeedNoTick() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        _ = h.beginPairing(phone)
        #expect(h.state.nextDeadline == nil)
        h.advance(ms: 200_000)
        #expect(h.tick().effects.isEmpty)
        #expect(h.state.nextDeadline == nil, "an expired code is no deadline either")
    }

    @Test func aCodeThatCollidesWithALiveCodeIsDrawnAgain() {
        var h = RelayHarness(codes: ["482913", "482913", "482913", "000042"])
        let (phone1, _) = h.connect(.phone)
        let (phone2, _) = h.connect(.phone)
        #expect(h.beginPairing(phone1) == "482913")
        #expect(h.beginPairing(phone2) == "000042", "leading zeros are fine; the duplicate was skipped")
    }

    @Test func joiningWithTheCodePersistsThePairBeforeBothDevicesGetPaired() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        let out = h.join(watch, code, id: "w-003")
        let phoneToken = TestEnvironment.token(.phone, 1)
        let watchToken = TestEnvironment.token(.watch, 1)
        let record = PairRecord(
            id: PairID("pair-1"), createdAt: h.now,
            phone: DeviceRecord(id: DeviceID("dev-1"), role: .phone, name: RelayHarness.phoneName, tokenHash: "sha256(\(phoneToken))"),
            watch: DeviceRecord(id: DeviceID("dev-2"), role: .watch, name: RelayHarness.watchName, tokenHash: "sha256(\(watchToken))"))
        #expect(
            out.effects == [
                .persist(.insertPair(record)),
                .send(phone, .paired(Paired(pairID: "pair-1", token: phoneToken, peer: PeerInfo(name: RelayHarness.watchName, connected: true, reachable: true)))),
                .send(watch, .paired(Paired(re: "w-003", pairID: "pair-1", token: watchToken, peer: PeerInfo(name: RelayHarness.phoneName, connected: true, reachable: true)))),
            ])
        #expect(phoneToken != watchToken && phoneToken.count >= 43)
    }

    @Test func aWatchPairedInTheBackgroundIsShownConnectedButNotReachable() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices(watchForeground: false)
        #expect(h.state.pairCount == 1)
        let (p2, out) = h.reconnect(.phone)
        #expect(out.frames(to: p2).first?.welcome?.peer == PeerInfo(name: RelayHarness.watchName, connected: true, reachable: false))
        _ = phone
    }

    @Test func pairBeginFromAWatchAndPairJoinFromAPhoneAreNotSupported() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let (watch, _) = h.connect(.watch)
        #expect(h.send(watch, .pairBegin(Request(id: "w-002"))).effects == [.send(watch, errorFrame(.notSupported, re: "w-002"))])
        #expect(h.join(phone, "100001", id: "p-004").effects == [.send(phone, errorFrame(.notSupported, re: "p-004"))])
    }

    @Test func aCodeIsSingleUse() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        h.join(watch, code)
        let (watch2, _) = h.connect(.watch)
        #expect(h.join(watch2, code, id: "w-9").effects == [h.wrongCodeCounted(), .send(watch2, errorFrame(.pairingCodeInvalid, re: "w-9"))])
    }

    @Test func aNewPairBeginVoidsThePhonesPreviousCode() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let first = h.beginPairing(phone)
        let second = h.beginPairing(phone)
        #expect(first != second)
        let (watch, _) = h.connect(.watch)
        #expect(h.join(watch, first, id: "w-1").effects == [h.wrongCodeCounted(), .send(watch, errorFrame(.pairingCodeInvalid, re: "w-1"))])
        #expect(h.join(watch, second).frames(to: watch).first?.paired != nil)
    }

    @Test func closingThePhonesConnectionVoidsItsCode() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        h.close(phone)
        let (watch, _) = h.connect(.watch)
        #expect(h.join(watch, code, id: "w-1").effects == [h.wrongCodeCounted(), .send(watch, errorFrame(.pairingCodeInvalid, re: "w-1"))])
    }

    @Test func aPhoneConnectionReplacedByANewerOneVoidsItsCode() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let code = h.beginPairing(phone)
        _ = h.reconnect(.phone)
        let (watch2, _) = h.connect(.watch)
        #expect(h.join(watch2, code).errors(to: watch2).map(\.code) == [.pairingCodeInvalid])
    }

    @Test func aCodeWorksUntilJustBefore120Seconds() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        h.advance(ms: 119_999)
        #expect(h.join(watch, code).frames(to: watch).first?.paired != nil)
    }

    @Test func anExpiredCodeIsRefusedAsExpiredEveryTimeAndNeverCountsAsWrong() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        h.advance(ms: 120_000)
        for i in 1...6 {
            #expect(h.join(watch, code, id: "w-e\(i)").effects == [.send(watch, errorFrame(.pairingCodeExpired, re: "w-e\(i)"))])
        }
        // Four wrong codes: the connection is not locked, so a live code still works.
        for i in 1...4 { #expect(h.join(watch, "99999\(i)").errors(to: watch).map(\.code) == [.pairingCodeInvalid]) }
        let live = h.beginPairing(phone)
        #expect(h.join(watch, live).frames(to: watch).first?.paired != nil)
    }

    /// A code that expired is remembered as expired (§6.3, check 2 comes before check 4) also
    /// once its phone asked for a new code, or closed its connection: the watch typing it late
    /// hears "expired", and no wrong code is counted against it. (It was forgotten then, so the
    /// watch got `pairing_code_invalid` and a step towards its locks.)
    @Test func anExpiredCodeStaysExpiredAfterItsPhoneAsksForAnotherOrLeaves() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let first = h.beginPairing(phone)
        h.advance(ms: 120_000)
        let second = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        #expect(h.join(watch, first, id: "w-1").effects == [.send(watch, errorFrame(.pairingCodeExpired, re: "w-1"))])
        h.advance(ms: 120_000)
        h.close(phone)
        for code in [first, second] {
            #expect(h.join(watch, code, id: "w-\(code)").effects == [.send(watch, errorFrame(.pairingCodeExpired, re: "w-\(code)"))])
        }
        // (A live code voided by a new pair.begin stays invalid: aNewPairBeginVoidsThePhonesPreviousCode.)
    }

    /// An expired code is remembered for 10 minutes, then it is a wrong code, also between two
    /// of the relay's sweeps of its codes (at most one a minute, no longer one per frame).
    @Test func anExpiredCodeIsForgottenTenMinutesAfterItExpiredEvenBetweenSweeps() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        h.advance(ms: 120_000 + 9 * 60_000 + 30_000)
        // Expired 9.5 minutes ago: still "expired" (this join sweeps, and keeps it).
        #expect(h.join(watch, code, id: "w-1").effects == [.send(watch, errorFrame(.pairingCodeExpired, re: "w-1"))])
        h.advance(ms: 40_000)
        // 10 minutes and 10 s: forgotten, though no sweep ran since (40 s ago).
        #expect(h.join(watch, code, id: "w-2").errors(to: watch).map(\.code) == [.pairingCodeInvalid])
    }

    @Test func theFifthWrongCodeLocksTheConnectionForAMinuteEvenForTheRightCode() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        for i in 1...5 {
            #expect(
                h.join(watch, "00000\(i)", id: "w-\(i)").effects
                    == [h.wrongCodeCounted(), .send(watch, errorFrame(.pairingCodeInvalid, re: "w-\(i)"))])
        }
        #expect(h.join(watch, code, id: "w-6").effects == [.send(watch, errorFrame(.pairingLocked, re: "w-6"))])
        h.advance(ms: 59_999)
        #expect(h.join(watch, code).errors(to: watch).map(\.code) == [.pairingLocked])
        // Another connection from another address is not affected.
        let (watch2, _) = h.connect(.watch, address: "198.51.100.1")
        #expect(h.join(watch2, code).frames(to: watch2).first?.paired != nil)
    }

    @Test func theConnectionLockEndsAfterAMinuteAndTheCountStartsAgain() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let (watch, _) = h.connect(.watch)
        for i in 1...5 { h.join(watch, "00000\(i)") }
        for _ in 1...10 { #expect(h.join(watch, "000009").errors(to: watch).map(\.code) == [.pairingLocked]) }
        h.advance(ms: 60_000)
        for i in 1...5 { #expect(h.join(watch, "11111\(i)").errors(to: watch).map(\.code) == [.pairingCodeInvalid]) }
        let code = h.beginPairing(phone)
        #expect(h.join(watch, code).errors(to: watch).map(\.code) == [.pairingLocked])
    }

    @Test func aMalformedCodeIsInvalidAndCountsAsWrong() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let (watch, _) = h.connect(.watch)
        for bad in ["12ab", "", "1234567", "１２３４５６"] {
            #expect(h.join(watch, bad).errors(to: watch).map(\.code) == [.pairingCodeInvalid])
        }
        h.join(watch, "12345")
        #expect(h.join(watch, h.beginPairing(phone)).errors(to: watch).map(\.code) == [.pairingLocked])
    }

    @Test func twentyWrongCodesInAMinuteFromOneAddressLockTheAddress() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        for c in 0..<4 {
            let (watch, _) = h.connect(.watch)
            for i in 0..<5 {
                h.advance(ms: 500)
                #expect(h.join(watch, "2\(c)000\(i)").errors(to: watch).map(\.code) == [.pairingCodeInvalid])
            }
        }
        let (fresh, _) = h.connect(.watch)
        #expect(h.join(fresh, code).errors(to: fresh).map(\.code) == [.pairingLocked], "the address is locked")
        let (elsewhere, _) = h.connect(.watch, address: "198.51.100.1")
        #expect(h.join(elsewhere, "999999").errors(to: elsewhere).map(\.code) == [.pairingCodeInvalid])
        h.advance(ms: 60_000)
        #expect(h.join(fresh, h.beginPairing(phone)).frames(to: fresh).first?.paired != nil, "the lock ends")
    }

    @Test func wrongCodesSpreadOverMoreThanAMinuteDoNotLockTheAddress() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        for c in 0..<5 {
            let (watch, _) = h.connect(.watch)
            for i in 0..<4 { h.join(watch, "3\(c)000\(i)") }
            h.advance(ms: 20_000)
        }
        let (fresh, _) = h.connect(.watch)
        #expect(h.join(fresh, h.beginPairing(phone)).frames(to: fresh).first?.paired != nil)
    }

    @Test func lockedAttemptsDoNotCountTowardsTheAddressLimit() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let (first, _) = h.connect(.watch)
        for i in 0..<5 { h.join(first, "40000\(i)") }
        for _ in 0..<30 { #expect(h.join(first, "400009").errors(to: first).map(\.code) == [.pairingLocked]) }
        let (second, _) = h.connect(.watch)
        for i in 0..<4 { #expect(h.join(second, "50000\(i)").errors(to: second).map(\.code) == [.pairingCodeInvalid]) }
        #expect(h.join(second, h.beginPairing(phone)).frames(to: second).first?.paired != nil)
    }
}
