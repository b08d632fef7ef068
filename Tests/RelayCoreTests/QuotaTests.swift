import RelayCore
import RelayProtocol
import Testing

/// Queue and connection quotas (§9): a send over one gets `quota_exceeded` and nothing is
/// stored; a connection over one gets `quota_exceeded` and close 1008.
@Suite struct QuotaTests {
    static func padded(_ bytes: Int) -> Payload {
        Payload(kind: "k", ["pad": .string(String(repeating: "x", count: bytes))])
    }

    @Test func aSendOverTheItemQuotaIsRefusedAndNothingIsStored() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedItemsPerDirection: 3))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for n in 1...3 { #expect(h.send(phone, id: "u-\(n)", mode: .userInfo).frames(to: phone).first?.accepted != nil) }
        let out = h.send(phone, id: "u-4", mode: .userInfo)
        #expect(out.effects == [.send(phone, errorFrame(.quotaExceeded, re: "u-4"))], "no persist, no accepted")
        #expect(out.worded(to: phone).first?.wcCode == 7015)
        #expect(out.worded(to: phone).first?.message.contains("holds 3 items, its quota of 3") == true)
        #expect(h.state.queuedItemCount == 3)
        // The other direction has a quota of its own.
        let (w2, _) = h.reconnect(.watch)
        #expect(h.send(w2, id: "w-1", mode: .userInfo).frames(to: w2).first?.accepted != nil)
    }

    @Test func acksMakeRoomAgain() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedItemsPerDirection: 2))
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "u-1", mode: .userInfo)
        h.send(phone, id: "u-2", mode: .userInfo)
        #expect(h.send(phone, id: "u-3", mode: .userInfo).errors(to: phone).map(\.code) == [.quotaExceeded])
        h.ack(watch, 1)
        #expect(h.send(phone, id: "u-3", mode: .userInfo).frames(to: phone).first?.accepted != nil, "the same id, retried")
    }

    @Test func aSendOverTheByteQuotaIsRefused() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedBytesPerDirection: 300))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        #expect(h.send(phone, id: "u-1", mode: .userInfo, Self.padded(200)).frames(to: phone).first?.accepted != nil)
        let out = h.send(phone, id: "u-2", mode: .userInfo, Self.padded(200))
        #expect(out.effects == [.send(phone, errorFrame(.quotaExceeded, re: "u-2"))])
        #expect(h.send(phone, id: "u-3", mode: .userInfo, Self.padded(10)).frames(to: phone).first?.accepted != nil, "a smaller one fits")
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted)
    }

    @Test func aContextReplacingTheQueuedOneDoesNotCountTwice() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedItemsPerDirection: 1, maxQueuedBytesPerDirection: 300))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for n in 1...5 {
            #expect(h.send(phone, id: "c-\(n)", mode: .context, Self.padded(200)).frames(to: phone).first?.accepted != nil)
        }
        #expect(h.state.queuedItemCount == 1)
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted)
    }

    @Test func theRelayWideByteQuotaCountsEveryPair() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedBytesTotal: 500))
        let (phone1, watch1) = h.pairDevices()
        h.close(watch1)
        #expect(h.send(phone1, id: "a-1", mode: .userInfo, Self.padded(300)).frames(to: phone1).first?.accepted != nil)
        let (phone2, watch2) = h.pairDevices()
        h.close(watch2)
        let out = h.send(phone2, id: "b-1", mode: .userInfo, Self.padded(300))
        #expect(out.errors(to: phone2).map(\.code) == [.quotaExceeded])
        #expect(out.worded(to: phone2).first?.message.contains("the relay would hold") == true)
        #expect(out.mutations.isEmpty)
    }

    @Test func unpairingAndCancellingGiveTheBytesBack() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedBytesTotal: 500))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "a-1", mode: .userInfo, Self.padded(300))
        #expect(h.send(phone, .cancel(Cancel(id: "x-1", target: "a-1"))).frames(to: phone).first != nil)
        #expect(h.state.queuedBytes == 0)
        h.send(phone, id: "a-2", mode: .userInfo, Self.padded(300))
        h.send(phone, .unpair(Request(id: "x-2")))
        #expect(h.state.queuedBytes == 0)
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted)
    }

    @Test func quotaBytesSurviveARestart() {
        var h = RelayHarness(configuration: RelayConfiguration(maxQueuedBytesTotal: 500))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "a-1", mode: .userInfo, Self.padded(300))
        h.restart()
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted && h.state.queuedBytes > 300)
        let (p2, _) = h.reconnect(.phone)
        #expect(h.send(p2, id: "a-2", mode: .userInfo, Self.padded(300)).errors(to: p2).map(\.code) == [.quotaExceeded])
    }

    @Test func aConnectionOverTheRelayQuotaIsRefusedWith1008() {
        var h = RelayHarness(configuration: RelayConfiguration(maxConnections: 2))
        let first = h.open(address: "198.51.100.1")
        _ = h.open(address: "198.51.100.2")
        let third = h.handle(.opened(LinkID(99), address: "198.51.100.3"))
        #expect(third.effects == [.send(LinkID(99), errorFrame(.quotaExceeded, re: nil)), .close(LinkID(99), .policy)])
        h.handle(.closed(LinkID(99)))
        h.close(first)
        #expect(h.handle(.opened(LinkID(100), address: "198.51.100.3")).effects.isEmpty, "room again")
    }

    @Test func aConnectionOverTheAddressQuotaIsRefusedWhileOtherAddressesConnect() {
        var h = RelayHarness(configuration: RelayConfiguration(maxConnectionsPerAddress: 2))
        _ = h.open(address: "198.51.100.1")
        let second = h.open(address: "198.51.100.1")
        let out = h.handle(.opened(LinkID(99), address: "198.51.100.1"))
        #expect(out.closeCode(of: LinkID(99)) == .policy)
        #expect(out.worded(to: LinkID(99)).first?.message.contains("this address has 2 connections") == true)
        #expect(h.handle(.opened(LinkID(100), address: "198.51.100.2")).effects.isEmpty)
        h.handle(.closed(LinkID(99)))
        h.close(second)
        #expect(h.handle(.opened(LinkID(101), address: "198.51.100.1")).effects.isEmpty)
    }
}

/// Messages waiting for their reply are held in memory: their number is a quota per pair and
/// over the relay (§8.2, §9.1), and a flood of promptly answered requests leaves no garbage.
@Suite struct PendingReplyQuotaTests {
    static let request = Payload(kind: "q")

    @Test func aMessageWantingAReplyPastThePairsQuotaIsRefusedAndNotDelivered() {
        var h = RelayHarness(configuration: RelayConfiguration(maxPendingRepliesPerPair: 3))
        let (phone, watch) = h.pairDevices()
        for n in 1...3 {
            #expect(h.send(phone, id: "m-\(n)", mode: .message, Self.request, wantsReply: true).frames(to: phone).first?.accepted != nil)
        }
        let out = h.send(phone, id: "m-4", mode: .message, Self.request, wantsReply: true)
        #expect(out.effects == [.send(phone, errorFrame(.quotaExceeded, re: "m-4"))], "no accepted, no deliver")
        #expect(out.worded(to: phone).first?.wcCode == 7015)
        #expect(out.worded(to: phone).first?.message.contains("this pair has 3 messages waiting for a reply") == true)
        // Both directions count; a message that wants no reply is not held and not counted.
        #expect(h.send(watch, id: "w-1", mode: .message, Self.request, wantsReply: true).errors(to: watch).map(\.code) == [.quotaExceeded])
        #expect(h.send(phone, id: "m-5", mode: .message, Self.request).frames(to: phone).first?.accepted != nil)
        // The same id again is a retry (§8.1): accepted again, nothing more held.
        let retry = h.send(phone, id: "m-3", mode: .message, Self.request, wantsReply: true)
        #expect(retry.errors(to: phone).isEmpty && retry.frames(to: phone).first?.accepted != nil)
        #expect(retry.delivers(to: watch).isEmpty)
        #expect(h.state.pendingReplyCount == 3)
        // A reply makes room; so does the timeout.
        h.send(watch, .reply(ClientReply(id: "r-1", re: "m-1", payload: Self.request)))
        #expect(h.send(phone, id: "m-6", mode: .message, Self.request, wantsReply: true).frames(to: phone).first?.accepted != nil)
        h.advance(ms: 10_000)
        h.tick()
        #expect(h.state.pendingReplyCount == 0)
        #expect(h.send(phone, id: "m-7", mode: .message, Self.request, wantsReply: true).frames(to: phone).first?.accepted != nil)
    }

    @Test func theRelayWideQuotaCountsEveryPair() {
        var h = RelayHarness(configuration: RelayConfiguration(maxPendingRepliesTotal: 2))
        let (phone1, _) = h.pairDevices()
        let (phone2, _) = h.pairDevices()
        h.send(phone1, id: "a-1", mode: .message, Self.request, wantsReply: true)
        h.send(phone1, id: "a-2", mode: .message, Self.request, wantsReply: true)
        let out = h.send(phone2, id: "b-1", mode: .message, Self.request, wantsReply: true)
        #expect(out.errors(to: phone2).map(\.code) == [.quotaExceeded])
        #expect(out.worded(to: phone2).first?.message.contains("the relay has 2 messages waiting for a reply") == true)
    }

    /// Answered requests left their heap entries behind until those reached the top: at a
    /// steady rate of prompt replies, rate × `replyTimeoutMs` of them.
    @Test func promptlyAnsweredRequestsLeaveNoGarbageBehind() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        // One request never answered keeps the heap's top live (its deadline is the earliest).
        h.send(phone, id: "held", mode: .message, Self.request, wantsReply: true)
        for n in 1...20_000 {
            h.send(phone, id: "m-\(n)", mode: .message, Self.request, wantsReply: true)
            h.send(watch, .reply(ClientReply(id: "r-\(n)", re: "m-\(n)", payload: Self.request)))
        }
        #expect(h.state.pendingReplyCount == 1)
        #expect(h.state.pendingReplyHeapCount <= 2 * 1 + 1024 + 1, "\(h.state.pendingReplyHeapCount)")
        h.advance(ms: 10_000)
        #expect(h.tick().frames(to: phone) == [errorFrame(.replyTimeout, re: "held")])
    }
}
