@testable import RelayCore
import RelayProtocol
import Testing

@Suite struct ErrorTests {
    /// §4.1: `not_paired` (step 4) comes before `not_supported` (step 5); `faces` from an
    /// unpaired phone answered `not_supported`.
    @Test func facesFromAnUnpairedDeviceIsNotPairedAndFromAPairedPhoneNotSupported() {
        var h = RelayHarness()
        let svg = "<svg/>"
        for role in [Role.phone, .watch] {
            let (link, _) = h.connect(role)
            let out = h.send(link, .faces(Faces(id: "f-\(role)", svg: svg)))
            #expect(out.errors(to: link).map(\.code) == [.notPaired], "\(role): \(out.trace)")
        }
        var paired = RelayHarness()
        let (phone, _) = paired.pairDevices()
        #expect(paired.send(phone, .faces(Faces(id: "f-p", svg: svg))).errors(to: phone).map(\.code) == [.notSupported])
    }

    @Test func the101stErrorWithinAMinuteIsSentThenTheConnectionIsClosed1008() {
        var h = RelayHarness()
        let (link, _) = h.connect(.phone)
        for n in 1...100 {
            h.advance(ms: 100)
            #expect(h.send(link, "{\"type\":\"nope\",\"id\":\"x-\(n)\"}").effects == [.send(link, errorFrame(.unknownType, re: "x-\(n)"))])
        }
        let out = h.send(link, "[1]")
        #expect(out.effects == [.send(link, errorFrame(.badFrame, re: nil)), .close(link, .policy)])
        #expect(h.send(link, .pairBegin(Request(id: "p-1"))).effects.isEmpty, "the core ignores a link it closed")
    }

    @Test func errorsSpreadOverMoreThanAMinuteDoNotClose() {
        var h = RelayHarness()
        let (link, _) = h.connect(.watch)
        for _ in 1...300 {
            h.advance(ms: 600)
            #expect(h.send(link, "nope").closes.isEmpty)
        }
    }

    @Test func everyKindOfErrorCountsTowardsTheLimit() {
        var h = RelayHarness(configuration: RelayConfiguration(maxErrorsPerMinute: 3))
        let (phone, watch) = h.pairDevices()
        h.handle(.binary(phone))
        h.handle(.tooLarge(phone, size: 2 << 20))
        h.send(phone, .state(StateChange(foreground: true)))
        let out = h.send(phone, id: "c-1", mode: .complication, Payload(kind: "k", ["pad": .string(String(repeating: "x", count: 70_000))]))
        #expect(out.trace == ["error → \(phone)", "close 1008 → \(phone)", "peer → \(watch)"])
    }

    /// `not_reachable` and `quota_exceeded` say the peer is away or the relay full, not that the
    /// frame was wrong: a phone polling an absent watch with messages is not closed for it.
    @Test func notReachableAndQuotaExceededDoNotCountTowardsTheLimit() {
        var h = RelayHarness(configuration: RelayConfiguration(maxErrorsPerMinute: 3, maxQueuedItemsPerDirection: 1))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "u-0", mode: .userInfo)
        for n in 1...10 {
            #expect(h.send(phone, id: "m-\(n)", mode: .message).errors(to: phone).map(\.code) == [.notReachable])
            #expect(h.send(phone, id: "u-\(n)", mode: .userInfo).errors(to: phone).map(\.code) == [.quotaExceeded])
        }
        #expect(h.state.connectionCount == 1, "the phone is still connected")
        h.send(phone, .state(StateChange(foreground: true)))  // a wrong frame still counts
        #expect(h.state.connectionCount == 1)
    }

    /// A receiver slow to answer a burst replies to messages the relay timed out a moment
    /// before: each late reply is refused with `unknown_id`, but does not count (§4.2), so the
    /// receiver is not closed for it, however large the burst. The relay forgets them two reply
    /// timeouts later; a reply to a message that never waited counts.
    @Test func lateRepliesDoNotCountTowardsTheLimitButUnknownOnesDo() {
        var h = RelayHarness(configuration: RelayConfiguration(maxErrorsPerMinute: 3))
        let (phone, watch) = h.pairDevices()
        let request = Payload(kind: "ping", [:])
        let burst = 3_000
        for n in 1...burst { h.send(phone, id: "p-\(n)", mode: .message, request, wantsReply: true) }
        h.advance(ms: 10_000)
        #expect(h.tick().errors(to: phone).map(\.code) == Array(repeating: .replyTimeout, count: burst))
        for n in 1...burst {
            let late = h.send(watch, .reply(ClientReply(id: "w-\(n)", re: "p-\(n)", payload: request)))
            #expect(late.errors(to: watch).map(\.code) == [.unknownID])
            #expect(late.frames(to: phone).isEmpty, "the requester had its one answer")
        }
        #expect(h.state.connectionCount == 2, "the watch is still connected")
        #expect(h.state.recentTimeouts.count == burst)
        h.advance(ms: 20_001)
        h.tick()
        #expect(h.state.recentTimeouts.count == 0, "forgotten two reply timeouts later")
        for n in 1...4 { h.send(watch, .reply(ClientReply(id: "w-x\(n)", re: "p-\(n)", payload: request))) }
        #expect(h.state.connectionCount == 1, "replies to forgotten ids count: the fourth error closed the watch")
    }

    /// Senders that keep the relay's pending-reply quota full of requests that all time out:
    /// the relay remembers at most that quota of them for late replies, the newest. A late reply
    /// to one of those is refused and not counted; to an older one it counts again.
    @Test func rememberedTimeoutsAreCappedAtTheRelaysPendingReplyQuota() {
        let quota = 100
        var h = RelayHarness(configuration: RelayConfiguration(maxErrorsPerMinute: 3, maxPendingRepliesTotal: quota))
        let (phone, watch) = h.pairDevices()
        let request = Payload(kind: "ping", [:])
        // Three rounds within two reply timeouts (10 s each): 300 timeouts, 100 remembered.
        for round in 0..<3 {
            for n in 0..<quota {
                #expect(h.send(phone, id: "p-\(round)-\(n)", mode: .message, request, wantsReply: true).errors(to: phone).isEmpty)
            }
            h.advance(ms: 6_000)
            #expect(h.tick().errors(to: phone).isEmpty)
            h.advance(ms: 4_000)
            #expect(h.tick().errors(to: phone).map(\.code) == Array(repeating: .replyTimeout, count: quota))
            #expect(h.state.recentTimeouts.count <= quota)
        }
        #expect(h.state.recentTimeouts.count == quota)
        for n in 0..<quota {
            let late = h.send(watch, .reply(ClientReply(id: "w-\(n)", re: "p-2-\(n)", payload: request)))
            #expect(late.errors(to: watch).map(\.code) == [.unknownID])
        }
        #expect(h.state.connectionCount == 2, "late replies to the newest round did not count")
        for n in 0..<4 { h.send(watch, .reply(ClientReply(id: "w-old-\(n)", re: "p-0-\(n)", payload: request))) }
        #expect(h.state.connectionCount == 1, "replies to forgotten timeouts count: the fourth error closed the watch")
    }

    @Test func aBinaryMessageIsUnsupportedFrameWithoutReAndTheConnectionStays() {
        var h = RelayHarness()
        let link = h.open()
        #expect(h.handle(.binary(link)).effects == [.send(link, errorFrame(.unsupportedFrame, re: nil))])
        #expect(h.hello(link, .phone).frames(to: link).first?.welcome != nil)
        #expect(h.handle(.binary(link)).effects == [.send(link, errorFrame(.unsupportedFrame, re: nil))])
    }

    @Test func aMessageOverTheHardCapIsPayloadTooLargeWithoutReAndTheConnectionStays() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.handle(.tooLarge(phone, size: 1_048_577))
        #expect(out.effects == [.send(phone, errorFrame(.payloadTooLarge, re: nil))])
        #expect(out.errors(to: phone).first?.wcCode == 7009)
        #expect(h.send(phone, id: "p-1", mode: .userInfo).delivers(to: watch).count == 1)
    }

    @Test func framesFromALinkAfterTheCoreClosedItAreIgnored() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let (w2, _) = h.reconnect(.watch)  // closes `watch` with 4001
        for event in [RelayEvent.frame(watch, Array(#"{"type":"ack","seq":1}"#.utf8)), .binary(watch), .tooLarge(watch, size: 1 << 21)] {
            #expect(h.handle(event).effects.isEmpty)
        }
        #expect(h.close(watch).effects.isEmpty, "the transport's close of it changes nothing")
        let link = h.open()
        h.send(link, .outstanding(Request(id: "x")))  // hello_required, closed
        #expect(h.hello(link, .phone).effects.isEmpty)
        _ = (phone, w2)
    }

    @Test func eventsForUnknownLinksAreIgnored() {
        var h = RelayHarness()
        let ghost = LinkID(999)
        #expect(h.handle(.frame(ghost, Array("{}".utf8))).effects.isEmpty)
        #expect(h.handle(.binary(ghost)).effects.isEmpty)
        #expect(h.handle(.tooLarge(ghost, size: 1)).effects.isEmpty)
        #expect(h.close(ghost).effects.isEmpty)
    }

    @Test(arguments: [DeliveryMode.message, .context, .userInfo, .complication])
    func aPayloadOverItsModesLimitIsPayloadTooLargeAndOneAtTheLimitIsAccepted(_ mode: DeliveryMode) {
        let limits = Limits(messageBytes: 50, userInfoBytes: 60, contextBytes: 70)
        var h = RelayHarness(configuration: RelayConfiguration(limits: limits))
        let (phone, watch) = h.pairDevices()
        let limit = limits.payloadLimit(for: mode)
        let over = h.send(phone, id: "big", mode: mode, Self.payload(bytes: limit + 1))
        #expect(over.effects == [.send(phone, errorFrame(.payloadTooLarge, re: "big"))])
        let at = h.send(phone, id: "fits", mode: mode, Self.payload(bytes: limit))
        #expect(at.frames(to: phone).first?.accepted?.re == "fits")
        #expect(at.delivers(to: watch).count == 1)
    }

    @Test func checksRunInTheProtocolsOrder() {
        var h = RelayHarness(configuration: RelayConfiguration(limits: Limits(messageBytes: 40, userInfoBytes: 40)))
        let (unpaired, _) = h.connect(.watch)
        let big = Self.payload(bytes: 100)
        #expect(h.send(unpaired, id: "a", mode: .complication, big).errors(to: unpaired).map(\.code) == [.notPaired])
        let (phone, watch) = h.pairDevices()
        #expect(h.send(watch, id: "b", mode: .complication, big).errors(to: watch).map(\.code) == [.notSupported])
        h.send(watch, .state(StateChange(foreground: false)))
        #expect(h.send(phone, id: "c", mode: .message, big).errors(to: phone).map(\.code) == [.payloadTooLarge])
        #expect(h.send(phone, id: "d", mode: .message).errors(to: phone).map(\.code) == [.notReachable])
    }

    // MARK: - Helpers

    /// A payload whose compact encoding is exactly `bytes` long.
    static func payload(bytes: Int) -> Payload {
        let base = Payload(kind: "k", ["pad": ""]).encodedSize
        let p = Payload(kind: "k", ["pad": .string(String(repeating: "x", count: bytes - base))])
        precondition(p.encodedSize == bytes)
        return p
    }
}
