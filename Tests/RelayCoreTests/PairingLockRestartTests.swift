import RelayCore
import RelayProtocol
import Testing

/// The address and relay-wide pairing locks (§6.3) are stored and come back after a restart of
/// the relay (or a new cluster leader loading the store); a connection's lock ends with it.
@Suite struct PairingLockRestartTests {
    static func wrong(_ n: Int) -> String { PairingLimitTests.wrong(n) }
    static func address(_ n: Int) -> String { PairingLimitTests.address(n) }

    /// Locks `RelayHarness.address` with 20 wrong codes on four connections; returns the
    /// output of the 20th.
    static func lockTheAddress(_ h: inout RelayHarness) -> Output {
        for c in 0..<3 {
            let (watch, _) = h.connect(.watch)
            for i in 0..<5 { h.join(watch, Self.wrong(10 * c + i)) }
        }
        let (watch, _) = h.connect(.watch)
        for i in 0..<4 { h.join(watch, Self.wrong(100 + i)) }
        return h.join(watch, Self.wrong(104))
    }

    /// Nineteen wrong codes from `RelayHarness.address` on four connections: one short of its lock.
    static func nineteenWrongCodes(_ h: inout RelayHarness) {
        for c in 0..<4 {
            let (watch, _) = h.connect(.watch)
            for i in 0..<(c == 3 ? 4 : 5) { h.join(watch, wrong(10 * c + i)) }
        }
    }

    @Test func aWrongCodeThatLocksNothingIsCountedWithoutHoldingItsAnswer() {
        var h = RelayHarness()
        let (watch, _) = h.connect(.watch)
        let out = h.join(watch, Self.wrong(1))
        let counted = WrongPairingCode(
            address: RelayHarness.address, at: h.now, countsUntil: h.now.adding(milliseconds: 120_000))
        #expect(out.actions.first == .persistAhead(.recordWrongPairingCode(counted)), "nothing waits for it")
        #expect(out.errors(to: watch).map(\.code) == [.pairingCodeInvalid])
    }

    @Test func theWrongCodeThatLocksTheAddressIsStoredBeforeItIsAnswered() {
        var h = RelayHarness()
        let out = Self.lockTheAddress(&h)
        let until = h.now.adding(milliseconds: 60_000)
        let locking = WrongPairingCode(
            address: RelayHarness.address, at: h.now, addressLockedUntil: until,
            countsUntil: h.now.adding(milliseconds: 120_000))
        #expect(out.actions.first == .persist(.recordWrongPairingCode(locking)), "its answer waits for the commit")
        #expect(out.worded(to: out.sends.first!.link).first?.message.contains("every connection from it is locked") == true)
    }

    @Test func anAddressLockSurvivesARestartWithItsMessage() {
        var h = RelayHarness()
        _ = Self.lockTheAddress(&h)
        let until = h.now.adding(milliseconds: 60_000)
        h.advance(ms: 15_000)
        h.restart()
        let (phone, _) = h.connect(.phone, address: "198.51.100.9")
        let code = h.beginPairing(phone)
        let (fresh, _) = h.connect(.watch)
        #expect(
            h.join(fresh, code).worded(to: fresh).first?.message
                == "too many wrong codes from this address; pair.join is locked until \(until) (45 s from now)")
        let (elsewhere, _) = h.connect(.watch, address: "198.51.100.10")
        #expect(h.join(elsewhere, Self.wrong(1)).worded(to: elsewhere).first?.message == "no such pairing code")
        h.advance(ms: 45_000)
        #expect(h.join(fresh, code).frames(to: fresh).first?.paired != nil, "the lock ended at its time")
    }

    @Test func anAddressCountSurvivesARestartUntilItsMinuteIsOver() {
        var h = RelayHarness()
        Self.nineteenWrongCodes(&h)
        h.advance(ms: 30_000)
        h.restart()
        let (watch, _) = h.connect(.watch)
        let twentieth = h.join(watch, Self.wrong(200)).worded(to: watch).first
        #expect(twentieth?.message.contains("that was wrong code 20 from this address within 60 s") == true)

        // Nineteen again on another address: a minute later they no longer count, restart or not.
        var g = RelayHarness()
        Self.nineteenWrongCodes(&g)
        g.advance(ms: 60_000)
        g.restart()
        let (late, _) = g.connect(.watch)
        #expect(g.join(late, Self.wrong(200)).worded(to: late).first?.message == "no such pairing code")
    }

    @Test func theRelayLockSurvivesARestart() {
        var h = RelayHarness()
        let firstFailure = h.now
        for n in 0..<499 {
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            h.join(watch, Self.wrong(n))
        }
        let (last, _) = h.connect(.watch, address: Self.address(499))
        let locking = h.join(last, Self.wrong(499))
        let stored = WrongPairingCode(address: Self.address(499), at: h.now, countsUntil: h.now.adding(milliseconds: 120_000))
        #expect(locking.actions.first == .persist(.recordWrongPairingCode(stored)), "the 500th's answer waits for its commit")
        let until = firstFailure.adding(milliseconds: 120_000)
        h.advance(ms: 20_000)
        h.restart()
        let (phone, _) = h.connect(.phone, address: "198.51.100.9")
        let code = h.beginPairing(phone)
        let (legit, _) = h.connect(.watch, address: "198.51.100.10")
        let refused = h.join(legit, code).worded(to: legit).first
        #expect(refused?.code == .pairingLocked)
        #expect(
            refused?.message
                == "too many wrong codes on this relay (a guessing attack?); pair.join is locked until \(until) (100 s from now)")
        h.advance(ms: 100_000)
        #expect(h.join(legit, h.beginPairing(phone)).frames(to: legit).first?.paired != nil)
    }

    @Test func aConnectionsLockEndsWithItsConnection() {
        var h = RelayHarness()
        let (watch, _) = h.connect(.watch)
        for i in 0..<5 { h.join(watch, Self.wrong(i)) }
        #expect(h.join(watch, Self.wrong(9)).errors(to: watch).map(\.code) == [.pairingLocked])
        h.restart()
        let (phone, _) = h.connect(.phone, address: "198.51.100.9")
        let code = h.beginPairing(phone)
        let (again, _) = h.connect(.watch)
        #expect(h.join(again, code).frames(to: again).first?.paired != nil, "five wrong codes lock no address")
    }
}
