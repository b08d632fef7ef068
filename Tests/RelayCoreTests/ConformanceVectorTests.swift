import RelayCore
import RelayProtocol
import Testing

@Suite struct ConformanceVectorTests {
    @Test func theSessionVectorsAreFound() {
        #expect(ConformanceVectors.session.count >= 21)
        let setups = Set(ConformanceVectors.session.compactMap(\.setup))
        #expect(
            setups == [
                "connected", "hello_phone_unpaired", "hello_watch_unpaired", "paired_phone_peer_offline",
                "paired_watch_peer_offline", "paired_phone_watch_background", "paired_phone", "paired_watch",
            ])
    }

    @Test(arguments: ConformanceVectors.session)
    func aSessionVectorInItsSetupGetsExactlyItsErrorAndClose(_ v: InvalidVector) throws {
        var h = RelayHarness()
        let setup = try #require(v.setup)
        let subject = h.link(inSetup: setup)
        let link = try #require(subject)
        let out = h.handle(.frame(link, v.bytes))
        var expected: [Effect] = [.send(link, errorFrame(v.code, re: v.expectedRe))]
        // A wrong code is counted toward its address's and the relay's locks (stored, §6.3).
        if v.code == .pairingCodeInvalid { expected.insert(h.wrongCodeCounted(), at: 0) }
        if let closes = v.closes { expected.append(.close(link, CloseCode(rawValue: closes))) }
        #expect(out.effects == expected)
    }

    @Test(arguments: ConformanceVectors.codecAndLimits)
    func aCodecOrLimitsVectorGetsItsErrorAndLeavesTheConnectionOpen(_ v: InvalidVector) {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let fresh = h.open()
        // Limits vectors need a device allowed to send the mode: the paired phone.
        for link in v.stage == "limits" ? [phone] : [fresh, phone] {
            let out = h.handle(v.binary ? .binary(link) : .frame(link, v.bytes))
            #expect(out.effects == [.send(link, errorFrame(v.code, re: v.binary ? nil : v.expectedRe))], "on \(link)")
        }
    }
}
