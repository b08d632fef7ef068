import RelayCore
import RelayProtocol
import Testing

@Suite struct PresenceTests {
    static let away = RelayFrame.peer(PeerChange(connected: false, reachable: false))
    static let reachable = RelayFrame.peer(PeerChange(connected: true, reachable: true))
    static let background = RelayFrame.peer(PeerChange(connected: true, reachable: false))

    @Test func thePhoneSeesTheWatchConnectInTheForegroundOrBackgroundAndLeave() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        #expect(h.close(watch).effects == [.send(phone, Self.away)])
        let (w2, fg) = h.reconnect(.watch)
        #expect(fg.frames(to: phone) == [Self.reachable])
        #expect(h.close(w2).effects == [.send(phone, Self.away)])
        let (_, bg) = h.reconnect(.watch, foreground: false)
        #expect(bg.frames(to: phone) == [Self.background])
    }

    @Test func theWatchSeesThePhoneConnectAndLeave() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices(watchForeground: false)
        #expect(h.close(phone).effects == [.send(watch, Self.away)], "the phone's reachability ignores the watch's state")
        let (_, out) = h.reconnect(.phone)
        #expect(out.frames(to: watch) == [Self.reachable])
    }

    @Test func watchStateChangesAreReportedToThePhoneOnlyWhenReachabilityChanges() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        #expect(h.send(watch, .state(StateChange(foreground: false))).effects == [.send(phone, Self.background)])
        #expect(h.send(watch, .state(StateChange(foreground: false))).effects.isEmpty)
        #expect(h.send(watch, .state(StateChange(id: "w-7", foreground: true))).effects == [.send(phone, Self.reachable)])
        #expect(h.send(watch, .state(StateChange(foreground: true))).effects.isEmpty)
    }

    @Test func aStateChangeWhileThePhoneIsAwaySendsNothingButCounts() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        #expect(h.send(watch, .state(StateChange(foreground: false))).effects.isEmpty)
        let (p2, out) = h.reconnect(.phone)
        #expect(out.frames(to: p2).first?.welcome?.peer == PeerInfo(name: RelayHarness.watchName, connected: true, reachable: false))
    }

    @Test func theWatchIsReachableOnlyWhileConnectedAndInTheForeground() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        #expect(h.send(phone, id: "m-1", mode: .message).delivers(to: watch).count == 1)
        h.send(watch, .state(StateChange(foreground: false)))
        #expect(h.send(phone, id: "m-2", mode: .message).errors(to: phone).map(\.code) == [.notReachable])
        #expect(h.send(watch, id: "m-3", mode: .message).delivers(to: phone).count == 1, "the phone stays reachable")
        h.close(watch)
        #expect(h.send(phone, id: "m-4", mode: .message).errors(to: phone).map(\.code) == [.notReachable])
    }

    @Test func stateFromAPhoneIsNotSupported() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(phone, .state(StateChange(id: "p-100", foreground: false)))
        #expect(out.effects == [.send(phone, errorFrame(.notSupported, re: "p-100"))])
        #expect(out.frames(to: watch).isEmpty)
    }

    @Test func anUnpairedWatchsStateIsKeptForThePairing() {
        var h = RelayHarness()
        let (phone, _) = h.connect(.phone)
        let code = h.beginPairing(phone)
        let (watch, _) = h.connect(.watch)
        #expect(h.send(watch, .state(StateChange(foreground: false))).effects.isEmpty)
        let out = h.join(watch, code)
        #expect(out.frames(to: phone).first?.paired?.peer == PeerInfo(name: RelayHarness.watchName, connected: true, reachable: false))
    }
}
