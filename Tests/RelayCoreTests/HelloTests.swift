import RelayCore
import RelayProtocol
import Testing

@Suite struct HelloTests {
    @Test func aFrameBeforeHelloGetsHelloRequiredThenClose1008() {
        var h = RelayHarness()
        let link = h.open()
        let out = h.send(link, .pairBegin(Request(id: "p-002")))
        #expect(out.effects == [.send(link, errorFrame(.helloRequired, re: "p-002")), .close(link, .policy)])
    }

    @Test func aMessageThatFailsDecodingBeforeHelloLeavesTheConnectionWaitingForHello() {
        var h = RelayHarness()
        let link = h.open()
        #expect(h.send(link, "{nope").effects == [.send(link, errorFrame(.badJSON, re: nil))])
        #expect(h.send(link, #"{"type":"welcome","id":"x-1"}"#).effects == [.send(link, errorFrame(.unknownType, re: "x-1"))])
        let out = h.hello(link, .phone, id: "p-001")
        #expect(out.frames(to: link).first?.welcome?.re == "p-001")
    }

    @Test func aSecondHelloGetsAlreadyHelloAndTheConnectionStaysOpen() {
        var h = RelayHarness()
        let (link, _) = h.connect(.phone)
        let out = h.hello(link, .phone, id: "p-003")
        #expect(out.effects == [.send(link, errorFrame(.alreadyHello, re: "p-003"))])
        #expect(h.send(link, .pairBegin(Request(id: "p-004"))).frames(to: link).first?.pairCode != nil)
    }

    @Test func anUnsupportedProtocolIsRefusedThenClosed1008() {
        var h = RelayHarness()
        let link = h.open()
        let out = h.send(link, .hello(Hello(id: "p-001", protocol: 2, role: .phone, deviceName: "P")))
        #expect(out.effects == [.send(link, errorFrame(.unsupportedProtocol, re: "p-001")), .close(link, .policy)])
    }

    @Test func anUnknownTokenIsUnauthorizedThenClosed1008() {
        var h = RelayHarness()
        let link = h.open()
        let out = h.hello(link, .watch, token: TestEnvironment.token(.watch, 9), id: "w-200")
        #expect(out.effects == [.send(link, errorFrame(.unauthorized, re: "w-200")), .close(link, .policy)])
    }

    @Test func aTokenIssuedToTheOtherRoleIsUnauthorized() {
        var h = RelayHarness()
        _ = h.pairDevices()
        let link = h.open()
        let out = h.hello(link, .watch, token: h.tokens[.phone], id: "w-201")
        #expect(out.effects == [.send(link, errorFrame(.unauthorized, re: "w-201")), .close(link, .policy)])
    }

    @Test func welcomeOfAnUnpairedDeviceSaysNotPairedWithTheDefaultLimits() {
        var h = RelayHarness()
        let link = h.open()
        let out = h.hello(link, .phone, id: "p-001")
        let welcome = Welcome(re: "p-001", session: "s-1", role: .phone, paired: false, limits: .default)
        #expect(out.effects == [.send(link, .welcome(welcome))])
        #expect(welcome.limits.complicationsRemaining == 50)
    }

    @Test func welcomeOfAPairedDeviceDescribesThePairThePeerTheBudgetAndTheLastContext() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices(watchForeground: false)
        h.send(phone, id: "c-1", mode: .complication)
        h.send(phone, id: "c-2", mode: .complication)
        let context = h.deliver(3, "ctx-1", .context, from: .phone)
        #expect(h.send(phone, id: "ctx-1", mode: .context).delivers(to: watch) == [context])
        h.ack(watch, 3)
        h.close(phone)
        h.close(watch)

        let (p2, pOut) = h.reconnect(.phone)
        let phoneWelcome = Welcome(
            re: pOut.frames(to: p2).first?.welcome?.re ?? "", session: "s-3", role: .phone, paired: true,
            pairID: "pair-1", peer: PeerInfo(name: RelayHarness.watchName, connected: false, reachable: false),
            limits: h.limits(remaining: 48))
        #expect(pOut.frames(to: p2) == [.welcome(phoneWelcome)], "the phone was never sent a context")

        let (w2, wOut) = h.reconnect(.watch, foreground: false, lastSeq: 3)
        let watchWelcome = Welcome(
            re: wOut.frames(to: w2).first?.welcome?.re ?? "", session: "s-4", role: .watch, paired: true,
            pairID: "pair-1", peer: PeerInfo(name: RelayHarness.phoneName, connected: true, reachable: true),
            limits: h.limits(remaining: 48), context: context)
        #expect(wOut.frames(to: w2) == [.welcome(watchWelcome)])
        #expect(wOut.frames(to: p2) == [.peer(PeerChange(connected: true, reachable: false))])
    }

    @Test func aNewerConnectionOfTheSameDeviceReplacesTheOlderWith4001WithoutAPeerFlap() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let w2 = h.open()
        let out = h.hello(w2, .watch, token: h.tokens[.watch], id: "w-300")
        #expect(out.trace == ["close 4001 → \(watch)", "welcome → \(w2)"])
        #expect(out.frames(to: phone).isEmpty, "the phone sees no disconnect/connect flap")
        // The old connection is dead to the core; the new one is the device.
        #expect(h.send(watch, .outstanding(Request(id: "w-301"))).effects.isEmpty)
        #expect(h.outstanding(w2) == [])
        h.close(watch)
        #expect(h.send(phone, id: "m-1", mode: .message).delivers(to: w2).count == 1, "the watch is still reachable")
    }

    @Test func aReplacingConnectionThatChangesReachabilityTellsThePeerOnce() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let (w2, out) = h.reconnect(.watch, foreground: false)
        #expect(out.closeCode(of: watch) == .replaced)
        #expect(out.frames(to: phone) == [.peer(PeerChange(connected: true, reachable: false))])
        #expect(out.frames(to: w2).count == 1)
    }

    @Test func lastSeqAcksCumulativelyLikeAnAck() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for id in ["u-1", "u-2", "u-3"] { h.send(phone, id: id, mode: .userInfo) }
        h.close(watch)
        let (w2, out) = h.reconnect(.watch, lastSeq: 2)
        #expect(out.frames(to: phone).contains(.transferred(Transferred(ids: ["u-1", "u-2"]))))
        #expect(out.seqs(to: w2) == [3], "only the unacked item comes again, once")
        #expect(out.mutations.contains(.deleteItems(h.pairID, direction: .phone, sendIDs: ["u-1", "u-2"])))
        #expect(h.store.direction(h.pairID, .phone).items.map(\.sendID) == ["u-3"])
    }

    @Test func aLastSeqAboveTheHighestSeqEverAssignedCountsAsZero() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for id in ["u-1", "u-2"] { h.send(phone, id: id, mode: .userInfo) }
        h.close(watch)
        let (w2, out) = h.reconnect(.watch, lastSeq: 3)
        #expect(out.seqs(to: w2) == [1, 2])
        #expect(out.frames(to: phone).allSatisfy { $0.transferred == nil }, "nothing was acked")
        #expect(h.outstanding(phone) == ["u-1", "u-2"])
    }

    @Test func aReconnectSendsWelcomeThenPendingTransferredThenUnackedThenNeverSentItems() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let t0 = h.now
        h.send(phone, id: "p-1", mode: .userInfo)
        h.send(phone, id: "p-2", mode: .userInfo)
        h.send(watch, id: "w-1", mode: .userInfo)
        h.close(watch)
        h.ack(phone, 1)  // the watch is offline: its transferred waits
        h.advance(ms: 1000)
        h.send(phone, id: "p-3", mode: .userInfo)
        h.send(phone, id: "c-1", mode: .complication)

        let (w2, out) = h.reconnect(.watch, lastSeq: 1)
        let frames = out.frames(to: w2)
        #expect(frames.count == 5)
        #expect(frames.first?.welcome != nil)
        #expect(frames.dropFirst().first == .transferred(Transferred(ids: ["w-1"])))
        #expect(
            Array(frames.dropFirst(2)) == [
                .deliver(h.deliver(2, "p-2", .userInfo, from: .phone, sentAt: t0)),
                .deliver(h.deliver(3, "c-1", .complication, from: .phone)),
                .deliver(h.deliver(4, "p-3", .userInfo, from: .phone)),
            ])
        #expect(out.frames(to: phone).contains(.transferred(Transferred(ids: ["p-1"]))))
        #expect(h.store.direction(h.pairID, .watch).pendingTransferred == [])
    }
}
