import RelayCore
import RelayProtocol
import Testing

/// A connection must say `hello` within `helloTimeoutMs` (default 10 s) of opening (§5.1).
@Suite struct HelloDeadlineTests {
    @Test func aConnectionSilentFor10SecondsGetsHelloRequiredThenClose1008() {
        var h = RelayHarness()
        let link = h.open()
        #expect(h.state.nextDeadline == RelayHarness.start.adding(milliseconds: 10_000))
        h.advance(ms: 9_999)
        #expect(h.tick().effects.isEmpty)
        h.advance(ms: 1)
        let out = h.tick()
        #expect(out.effects == [.send(link, errorFrame(.helloRequired, re: nil)), .close(link, .policy)])
        #expect(out.worded(to: link).first?.message == "no hello within 10 s of connecting")
        #expect(h.state.nextDeadline == nil)
    }

    @Test func framesThatFailDecodingDoNotExtendTheDeadline() {
        var h = RelayHarness()
        let link = h.open()
        h.advance(ms: 9_000)
        #expect(h.send(link, "{nope").effects == [.send(link, errorFrame(.badJSON, re: nil))])
        h.advance(ms: 1_000)
        #expect(h.tick().closeCode(of: link) == .policy)
    }

    @Test func aHelloInTimeClearsTheDeadline() {
        var h = RelayHarness()
        let link = h.open()
        h.advance(ms: 9_999)
        #expect(h.hello(link, .phone).frames(to: link).first?.welcome != nil)
        #expect(h.state.nextDeadline == nil)
        h.advance(ms: 60_000)
        #expect(h.tick().effects.isEmpty)
        #expect(h.send(link, .pairBegin(Request(id: "p-1"))).frames(to: link).first?.pairCode != nil)
    }

    @Test func aLateHelloIsTooLateEvenWithoutATickInBetween() {
        var h = RelayHarness()
        let link = h.open()
        h.advance(ms: 10_000)
        let out = h.hello(link, .phone)
        #expect(out.effects == [.send(link, errorFrame(.helloRequired, re: nil)), .close(link, .policy)])
    }

    @Test func eachConnectionHasItsOwnDeadline() {
        var h = RelayHarness(configuration: RelayConfiguration(helloTimeoutMs: 2_500))
        let first = h.open()
        h.advance(ms: 1_000)
        let second = h.open()
        let third = h.open()
        h.hello(third, .watch)
        h.advance(ms: 1_500)
        #expect(h.tick().closes.map(\.link) == [first])
        #expect(h.state.nextDeadline == RelayHarness.start.adding(milliseconds: 3_500))
        h.advance(ms: 1_000)
        let out = h.tick()
        #expect(out.closes.map(\.link) == [second])
        #expect(out.worded(to: second).first?.message == "no hello within 2.5 s of connecting")
    }
}
