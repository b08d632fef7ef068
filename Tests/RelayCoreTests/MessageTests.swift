import RelayCore
import RelayProtocol
import Testing

@Suite struct MessageTests {
    static let request = Payload(kind: "profile.repos.request", ["login": "torvalds"])
    static let answer = Payload(kind: "profile.repos", ["login": "torvalds", "repos": []])

    @Test func aMessageToAnOfflinePeerIsNotReachableAtOnce() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(phone)
        let out = h.send(watch, id: "w-014", mode: .message, Payload(kind: "favorites.refresh"))
        #expect(out.effects == [.send(watch, errorFrame(.notReachable, re: "w-014"))])
    }

    @Test func aMessageIsAcceptedThenDeliveredWithTheNextSeqAndNotStored() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let out = h.send(watch, id: "w-010", mode: .message, Self.request)
        #expect(
            out.effects == [
                .persist(.setSeqReserved(h.pairID, direction: .watch, 1024)),
                .send(watch, .accepted(Accepted(re: "w-010"))),
                .send(phone, .deliver(h.deliver(1, "w-010", .message, from: .watch, Self.request))),
            ])
        #expect(h.state.queuedItemCount == 0)
        #expect(h.outstanding(watch) == [])
    }

    /// A receiver forced unreachable (the console's fault) is not reachable for a message while
    /// it stays connected, and is again once the fault is lifted; a background watch is not.
    @Test func aMessageNeedsTheReceiverConnectedForegroundAndNotForcedUnreachable() throws {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let pair = try #require(h.state.inspect(now: h.now).pairs.first)
        _ = h.state.setForcedUnreachable(pair.phone.id, true, now: h.now)
        var out = h.send(watch, id: "w-020", mode: .message, Self.request)
        #expect(out.effects == [.send(watch, errorFrame(.notReachable, re: "w-020"))])
        _ = h.state.setForcedUnreachable(pair.phone.id, false, now: h.now)
        out = h.send(watch, id: "w-021", mode: .message, Self.request)
        #expect(out.delivers(to: phone).map(\.id) == ["w-021"])
        // The other way: the watch in the background is connected but not reachable.
        h.send(watch, .state(StateChange(foreground: false)))
        out = h.send(phone, id: "p-020", mode: .message, Self.request)
        #expect(out.effects == [.send(phone, errorFrame(.notReachable, re: "p-020"))])
        h.send(watch, .state(StateChange(foreground: true)))
        out = h.send(phone, id: "p-021", mode: .message, Self.request)
        #expect(out.delivers(to: watch).map(\.id) == ["p-021"])
    }

    /// `send` and `ack` are counted apart from the other types (no hash of the type's name per
    /// message); the metrics see one table of every type decoded, as before.
    @Test func framesReceivedCountsEveryTypeDecoded() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let before = h.state.framesReceived
        #expect(before[.send] == nil && before[.ack] == nil)
        #expect(before[.hello] == 2 && before[.pairBegin] == 1 && before[.pairJoin] == 1)
        h.send(watch, id: "w-010", mode: .message, Self.request)
        h.send(watch, id: "w-011", mode: .message, Self.request)
        h.send(phone, id: "p-001", mode: .userInfo, Payload(kind: "test.item"))
        h.ack(watch, 1)
        h.send(watch, .state(StateChange(foreground: true)))
        let after = h.state.framesReceived
        #expect(after[.send] == 3 && after[.ack] == 1 && after[.state] == 1)
        #expect(after[.hello] == 2 && after.count == 6, "\(after)")
    }

    @Test func aReplyIsForwardedToTheSenderAsReAndPayload() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let sent = h.send(watch, id: "w-010", mode: .message, Self.request, wantsReply: true)
        #expect(sent.delivers(to: phone) == [h.deliver(1, "w-010", .message, from: .watch, Self.request, wantsReply: true)])
        h.advance(ms: 400)
        let out = h.send(phone, .reply(ClientReply(id: "p-040", re: "w-010", payload: Self.answer)))
        #expect(out.effects == [.send(watch, .reply(RelayReply(re: "w-010", payload: Self.answer)))])
        #expect(h.state.pendingReplyCount == 0)
        #expect(h.state.nextDeadline == nil)
    }

    @Test func withoutAReplyInReplyTimeoutMsTheSenderGetsReplyTimeout() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-012", mode: .message, Self.request, wantsReply: true)
        #expect(h.state.nextDeadline == h.now.adding(milliseconds: 10_000))
        h.advance(ms: 9_999)
        #expect(h.tick().effects.isEmpty)
        h.advance(ms: 1)
        #expect(h.tick().effects == [.send(watch, errorFrame(.replyTimeout, re: "w-012"))])
        #expect(h.tick().effects.isEmpty, "exactly one answer")
        let late = h.send(phone, .reply(ClientReply(id: "p-041", re: "w-012", payload: Self.answer)))
        #expect(late.effects == [.send(phone, errorFrame(.unknownID, re: "p-041"))])
    }

    @Test func aReplyAfterTheTimeoutIsLateEvenIfNoTickRanYet() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-012", mode: .message, Self.request, wantsReply: true)
        h.advance(ms: 10_000)
        let out = h.send(phone, .reply(ClientReply(id: "p-041", re: "w-012", payload: Self.answer)))
        #expect(out.frames(to: watch) == [errorFrame(.replyTimeout, re: "w-012")])
        #expect(out.frames(to: phone) == [errorFrame(.unknownID, re: "p-041")])
    }

    @Test func theReceiverLeavingBeforeReplyingIsNotReachableAtOnceAfterThePeerFrame() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-013", mode: .message, Self.request, wantsReply: true)
        let out = h.close(phone)
        #expect(
            out.effects == [
                .send(watch, .peer(PeerChange(connected: false, reachable: false))),
                .send(watch, errorFrame(.notReachable, re: "w-013")),
            ])
        h.advance(ms: 10_000)
        #expect(h.tick().effects.isEmpty)
    }

    @Test func aReplacedReceiverConnectionFailsItsPendingRequestsInOrder() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for i in 1...5 {
            h.send(watch, id: "w-\(i)", mode: .message, Self.request, wantsReply: true)
            h.advance(ms: 1)
        }
        let (_, out) = h.reconnect(.phone)
        #expect(out.closeCode(of: phone) == .replaced)
        #expect(out.frames(to: watch) == (1...5).map { errorFrame(.notReachable, re: "w-\($0)") })
    }

    @Test func timeoutsOfSeveralRequestsComeInTheOrderTheyWereSent() {
        var h = RelayHarness()
        let (_, watch) = h.pairDevices()
        for i in [3, 1, 2] {
            h.send(watch, id: "w-\(i)", mode: .message, Self.request, wantsReply: true)
            h.advance(ms: 1)
        }
        h.advance(ms: 10_000)
        #expect(h.tick().frames(to: watch) == [3, 1, 2].map { errorFrame(.replyTimeout, re: "w-\($0)") })
    }

    @Test func aReplyThatMatchesNoPendingRequestIsUnknownID() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let unknown = h.send(phone, .reply(ClientReply(id: "p-1", re: "never", payload: Self.answer)))
        #expect(unknown.effects == [.send(phone, errorFrame(.unknownID, re: "p-1"))])
        h.send(watch, id: "w-1", mode: .message, Self.request)
        let noReplyWanted = h.send(phone, .reply(ClientReply(id: "p-2", re: "w-1", payload: Self.answer)))
        #expect(noReplyWanted.effects == [.send(phone, errorFrame(.unknownID, re: "p-2"))])
        h.send(watch, id: "w-2", mode: .message, Self.request, wantsReply: true)
        h.send(phone, .reply(ClientReply(id: "p-3", re: "w-2", payload: Self.answer)))
        let twice = h.send(phone, .reply(ClientReply(id: "p-4", re: "w-2", payload: Self.answer)))
        #expect(twice.effects == [.send(phone, errorFrame(.unknownID, re: "p-4"))])
        let ownRequest = h.send(watch, .reply(ClientReply(id: "w-3", re: "w-2", payload: Self.answer)))
        #expect(ownRequest.effects == [.send(watch, errorFrame(.unknownID, re: "w-3"))])
    }

    @Test func aReplyForARequesterGoneOfflineIsDroppedSilently() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .message, Self.request, wantsReply: true)
        h.close(watch)
        _ = h.reconnect(.watch)
        let out = h.send(phone, .reply(ClientReply(id: "p-1", re: "w-1", payload: Self.answer)))
        #expect(out.effects.isEmpty)
        h.advance(ms: 10_000)
        #expect(h.tick().effects.isEmpty)
    }

    @Test func aReplyOverMessageBytesIsTooLargeAndTheRequestStaysPending() {
        var h = RelayHarness(configuration: RelayConfiguration(limits: Limits(messageBytes: 100)))
        let (phone, watch) = h.pairDevices()
        h.send(watch, id: "w-1", mode: .message, Payload(kind: "q"), wantsReply: true)
        let big = Payload(kind: "r", ["pad": .string(String(repeating: "x", count: 100))])
        #expect(h.send(phone, .reply(ClientReply(id: "p-1", re: "w-1", payload: big))).effects == [.send(phone, errorFrame(.payloadTooLarge, re: "p-1"))])
        let small = Payload(kind: "r")
        #expect(h.send(phone, .reply(ClientReply(id: "p-2", re: "w-1", payload: small))).effects == [.send(watch, .reply(RelayReply(re: "w-1", payload: small)))])
    }

    @Test func aDuplicateMessageIDIsAcceptedAgainAndNotDeliveredAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "p-1", mode: .message)
        let again = h.send(phone, id: "p-1", mode: .message)
        #expect(again.effects == [.send(phone, .accepted(Accepted(re: "p-1")))])
        #expect(h.send(phone, id: "p-2", mode: .message).seqs(to: watch) == [2])
    }
}
