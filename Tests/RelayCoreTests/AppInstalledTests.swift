import RelayCore
import RelayProtocol
import Testing

/// PROTOCOL.md §7.1: a device says its app was uninstalled; its peer sees it and may not send to it.
@Suite struct AppInstalledTests {
    static let uninstalledAway = RelayFrame.peer(PeerChange(connected: false, reachable: false, appInstalled: false))
    static let reachable = RelayFrame.peer(PeerChange(connected: true, reachable: true))

    @Test func aWatchThatUninstallsItsAppIsClosedAndThePhoneHearsItOnceStored() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(watch, .state(StateChange(appInstalled: false)))
        #expect(out.closes.map(\.link) == [watch] && out.closes.map(\.code) == [.normal], "the app is gone: its connection too")
        #expect(out.frames(to: phone) == [Self.uninstalledAway])
        #expect(out.mutations.contains { if case .insertPair(let r) = $0 { !r.watch.appInstalled && r.phone.appInstalled } else { false } })
        let persist = out.effects.firstIndex { if case .persist = $0 { true } else { false } }
        let peer = out.effects.firstIndex(of: .send(phone, Self.uninstalledAway))
        #expect(persist != nil && peer != nil && persist! < peer!, "the peer frame follows the stored flag")
    }

    @Test func thePhonesSendsAreRefusedWith7006WhileTheWatchAppIsUninstalledAndTheConnectionStays() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, .state(StateChange(appInstalled: false)))
        for mode in [DeliveryMode.message, .context, .userInfo, .complication] {
            let out = h.send(phone, id: "p-\(mode.rawValue)", mode: mode)
            #expect(out.effects == [.send(phone, errorFrame(.watchAppNotInstalled, re: "p-\(mode.rawValue)"))])
        }
        #expect(h.outstanding(phone) == [], "nothing was accepted")
        #expect(h.state.connectionCount == 1, "the phone stays connected")
    }

    /// A retry of a send accepted before the uninstall is answered `accepted` again, not 7006:
    /// its item is stored and kept (§7.1), and a sender told it failed would be told wrong.
    @Test func aRetryOfAnItemAcceptedBeforeTheUninstallIsAcceptedAgainAndTheItemKept() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        #expect(h.send(phone, id: "p-1", mode: .userInfo).frames(to: phone).compactMap(\.accepted).count == 1)
        let (w2, _) = h.reconnect(.watch, lastSeq: 0)
        h.send(w2, .state(StateChange(appInstalled: false)))
        let retry = h.send(phone, id: "p-1", mode: .userInfo)
        #expect(retry.frames(to: phone).compactMap(\.accepted).map(\.re) == ["p-1"])
        #expect(retry.errors(to: phone).isEmpty)
        #expect(h.send(phone, id: "p-2", mode: .userInfo).errors(to: phone).map(\.code) == [.watchAppNotInstalled])
        #expect(h.outstanding(phone) == ["p-1"])
    }

    @Test func theNextHelloWithTheWatchsTokenInstallsItAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, .state(StateChange(appInstalled: false)))
        h.close(watch)
        let (w2, out) = h.reconnect(.watch)
        #expect(out.frames(to: phone) == [Self.reachable])
        #expect(out.mutations.contains { if case .insertPair(let r) = $0 { r.watch.appInstalled } else { false } })
        #expect(h.send(phone, id: "p-1", mode: .userInfo).delivers(to: w2).count == 1)
    }

    @Test func theFlagSurvivesARestartAndComesInTheWelcome() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, .state(StateChange(appInstalled: false)))
        h.close(watch)
        h.close(phone)
        h.restart()
        let (p2, out) = h.reconnect(.phone)
        #expect(
            out.frames(to: p2).first?.welcome?.peer
                == PeerInfo(name: RelayHarness.watchName, connected: false, reachable: false, appInstalled: false))
        #expect(h.send(p2, id: "p-2", mode: .userInfo).errors(to: p2).map(\.code) == [.watchAppNotInstalled])
    }

    @Test func aPhoneMayUninstallItsAppAndTheWatchsSendsGet7018() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(phone, .state(StateChange(id: "p-9", appInstalled: false)))
        #expect(out.frames(to: watch) == [Self.uninstalledAway])
        #expect(out.frames(to: phone).isEmpty, "no error: a phone may send state for appInstalled")
        let refused = h.send(watch, id: "w-1", mode: .userInfo)
        #expect(refused.effects == [.send(watch, errorFrame(.companionAppNotInstalled, re: "w-1"))])
        let (_, back) = h.reconnect(.phone)
        #expect(back.frames(to: watch) == [Self.reachable])
    }

    @Test func aPhonesForegroundIsStillNotSupported() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let out = h.send(phone, .state(StateChange(id: "p-3", foreground: true, appInstalled: false)))
        #expect(out.effects == [.send(phone, errorFrame(.notSupported, re: "p-3"))])
    }

    @Test func itemsQueuedBeforeTheUninstallWaitForTheAppToRunAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "p-q", mode: .userInfo)
        let (w2, _) = h.reconnect(.watch, lastSeq: 0)
        h.send(w2, .state(StateChange(appInstalled: false)))
        #expect(h.outstanding(phone) == ["p-q"], "still outstanding, not failed")
        let (w3, out) = h.reconnect(.watch)
        #expect(out.delivers(to: w3).map(\.id) == ["p-q"])
    }

    @Test func refusalsForAnUninstalledAppDoNotCountTowardsTheErrorLimit() {
        var configuration = RelayConfiguration()
        configuration.maxErrorsPerMinute = 2
        var h = RelayHarness(configuration: configuration)
        let (phone, watch) = h.pairDevices()
        h.send(watch, .state(StateChange(appInstalled: false)))
        for i in 0..<5 { h.send(phone, id: "m-\(i)", mode: .message) }
        #expect(h.state.connectionCount == 1)
        _ = phone
    }
}
