import RelayCore
import RelayProtocol
import Testing

/// The relay-wide wrong-code limit beside the per-connection and per-address ones (§6.3), and
/// lock messages that say until when.
@Suite struct PairingLimitTests {
    /// A distinct address for each of many attackers (an IPv6 /64 has more than enough).
    static func address(_ n: Int) -> String { "2001:db8::\(String(n, radix: 16))" }

    /// A wrong six-digit code, never one the test environment hands out (those start with 1).
    static func wrong(_ n: Int) -> String {
        let digits = String(n % 100_000)
        return "9" + String(repeating: "0", count: 5 - digits.count) + digits
    }

    @Test func anAttackerWithAnyNumberOfAddressesGetsAtMost500GuessesInACodesLife() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        _ = h.beginPairing(phone)
        var compared = 0
        var locked = 0
        // 3,000 guesses, each from a fresh address and connection, spread over the code's 120 s.
        for n in 0..<3_000 {
            if n % 30 == 0 { h.advance(ms: 1_190) }
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            let codes = h.join(watch, Self.wrong(n)).errors(to: watch).map(\.code)
            if codes == [.pairingCodeInvalid] { compared += 1 }
            if codes == [.pairingLocked] { locked += 1 }
            h.close(watch)
        }
        #expect(compared == 500, "every guess past the relay-wide limit is refused unseen")
        #expect(locked == 2_500)
    }

    @Test func theWrongCodeThatReachesTheRelayLimitSaysPairingIsPausedUntilWhen() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let firstFailure = h.now
        for n in 0..<499 {
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            #expect(h.join(watch, Self.wrong(n)).errors(to: watch).map(\.code) == [.pairingCodeInvalid])
        }
        h.advance(ms: 30_000)
        let (last, _) = h.connect(.watch, address: Self.address(499))
        let until = firstFailure.adding(milliseconds: 120_000)
        let error = h.join(last, Self.wrong(499)).worded(to: last).first
        #expect(error?.code == .pairingCodeInvalid)
        #expect(error?.message.contains("pairing is paused for everyone; pair.join is locked until \(until)") == true)

        // A legitimate watch elsewhere, with the right code, waits until then.
        let code = h.beginPairing(phone)
        let (legit, _) = h.connect(.watch, address: "198.51.100.9")
        let refused = h.join(legit, code).worded(to: legit).first
        #expect(refused?.code == .pairingLocked)
        #expect(refused?.message.contains("on this relay") == true)
        #expect(refused?.message.contains("locked until \(until) (90 s from now)") == true)
        h.advance(ms: 89_999)
        #expect(h.join(legit, code).errors(to: legit).map(\.code) == [.pairingLocked])
        h.advance(ms: 1)
        #expect(h.join(legit, code).frames(to: legit).first?.paired != nil, "the oldest wrong code left the window")
    }

    @Test func legitimateTyposElsewhereStillPair() {
        var h = RelayHarness()
        // 100 people pair within two minutes, each after two typos: 200 wrong codes relay-wide.
        for n in 0..<100 {
            let (phone, _) = h.connect(.phone, address: Self.address(10_000 + n))
            let code = h.beginPairing(phone)
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            h.advance(ms: 600)
            #expect(h.join(watch, Self.wrong(2 * n)).errors(to: watch).map(\.code) == [.pairingCodeInvalid])
            #expect(h.join(watch, Self.wrong(2 * n + 1)).errors(to: watch).map(\.code) == [.pairingCodeInvalid])
            #expect(h.join(watch, code).frames(to: watch).first?.paired != nil)
        }
    }

    @Test func wrongCodesOlderThanACodesLifeNoLongerCount() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        for n in 0..<499 {
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            h.join(watch, Self.wrong(n))
        }
        h.advance(ms: 120_000)
        let (watch, _) = h.connect(.watch, address: Self.address(499))
        let error = h.join(watch, Self.wrong(499)).worded(to: watch).first
        #expect(error?.code == .pairingCodeInvalid)
        #expect(error?.message == "no such pairing code", "nothing was locked")
        #expect(h.join(watch, h.beginPairing(phone)).frames(to: watch).first?.paired != nil)
    }

    /// `--pair abc` or a code typed with a space: the relay says what a code looks like, and it
    /// still counts as a wrong code (§6.3, 4.).
    @Test func aCodeThatIsNotSixDigitsSaysWhatACodeIs() {
        var h = RelayHarness()
        let (watch, _) = h.connect(.watch)
        for code in ["abc", "12345", "1234567", "١٢٣٤٥٦"] {
            let error = h.join(watch, code).worded(to: watch).first
            #expect(error?.code == .pairingCodeInvalid)
            #expect(error?.message == "not a pairing code: a code is the 6 digits the phone shows", "\(code)")
        }
        let fifth = h.join(watch, "123 45").worded(to: watch).first?.message ?? ""
        #expect(fifth.hasPrefix("not a pairing code: a code is the 6 digits the phone shows; that was wrong code 5"), "\(fifth)")
        #expect(h.join(watch, Self.wrong(6)).worded(to: watch).first?.code == .pairingLocked, "five wrong codes lock")
    }

    @Test func theFifthWrongCodeSaysItLockedTheConnectionUntilWhen() {
        var h = RelayHarness()
        let (watch, _) = h.connect(.watch)
        for i in 1...4 {
            #expect(h.join(watch, Self.wrong(i)).worded(to: watch).first?.message == "no such pairing code")
        }
        h.advance(ms: 250)
        let until = h.now.adding(milliseconds: 60_000)
        let fifth = h.join(watch, Self.wrong(5)).worded(to: watch).first
        #expect(fifth?.code == .pairingCodeInvalid)
        #expect(
            fifth?.message
                == "no such pairing code; that was wrong code 5 on this connection: pair.join is locked until \(until) (60 s from now)")
        h.advance(ms: 20_500)
        let next = h.join(watch, Self.wrong(6)).worded(to: watch).first
        #expect(next?.code == .pairingLocked)
        #expect(
            next?.message == "too many wrong codes on this connection; pair.join is locked until \(until) (40 s from now)")
    }

    @Test func theWrongCodeThatLocksTheAddressSaysSoAndUntilWhen() {
        var h = RelayHarness()
        for c in 0..<3 {
            let (watch, _) = h.connect(.watch)
            for i in 0..<5 { h.join(watch, Self.wrong(10 * c + i)) }
        }
        let (watch, _) = h.connect(.watch)
        for i in 0..<4 { h.join(watch, Self.wrong(100 + i)) }
        let until = h.now.adding(milliseconds: 60_000)
        let twentieth = h.join(watch, Self.wrong(104)).worded(to: watch).first
        #expect(twentieth?.message.contains("that was wrong code 20 from this address within 60 s") == true)
        #expect(twentieth?.message.contains("every connection from it is locked; pair.join is locked until \(until)") == true)
        let (fresh, _) = h.connect(.watch)
        #expect(
            h.join(fresh, Self.wrong(200)).worded(to: fresh).first?.message
                == "too many wrong codes from this address; pair.join is locked until \(until) (60 s from now)")
    }

    @Test func theRelayLimitIsASetting() {
        var h = RelayHarness(configuration: RelayConfiguration(wrongCodesPerRelay: 3))
        for n in 0..<3 {
            let (watch, _) = h.connect(.watch, address: Self.address(n))
            h.join(watch, Self.wrong(n))
        }
        let (watch, _) = h.connect(.watch, address: Self.address(3))
        #expect(h.join(watch, Self.wrong(3)).errors(to: watch).map(\.code) == [.pairingLocked])
    }
}
