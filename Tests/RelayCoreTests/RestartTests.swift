import RelayCore
import RelayProtocol
import Testing

/// A relay restarted from what it persisted (through the in-memory store).
@Suite struct RestartTests {
    @Test func aRestartContinuesAboveEverySeqUsedAndRedeliversUnackedItemsOncePerConnection() {
        var h = RelayHarness(configuration: RelayConfiguration(seqReservationBlock: 4))
        let (phone, watch) = h.pairDevices()
        // 600 ms between sends: every block takes over a second to half use, so each is of
        // the base size (a faster direction reserves larger ones: SeqTests).
        h.advance(ms: 600)
        h.send(phone, id: "u-1", mode: .userInfo)  // seq 1
        h.advance(ms: 600)
        h.send(phone, id: "m-1", mode: .message)  // seq 2
        h.advance(ms: 600)
        let t2 = h.now
        h.send(phone, id: "u-2", mode: .userInfo)  // seq 3
        h.advance(ms: 600)
        h.send(phone, id: "m-2", mode: .message)  // seq 4
        h.advance(ms: 600)
        h.send(phone, id: "m-3", mode: .message)  // seq 5: only the reservation remembers it
        h.ack(watch, 1)
        h.close(watch)
        h.advance(ms: 600)
        h.send(phone, id: "u-3", mode: .userInfo)
        h.advance(ms: 600)
        h.send(phone, id: "x-1", mode: .context)
        h.restart()
        #expect(h.state.connectionCount == 0)
        #expect(h.state.queuedItemCount == 3)

        let (p2, _) = h.reconnect(.phone)
        let (w2, out) = h.reconnect(.watch, lastSeq: 2)
        #expect(out.delivers(to: w2).first == h.deliver(3, "u-2", .userInfo, from: .phone, sentAt: t2))
        #expect(out.seqs(to: w2) == [3, 9, 10], "never-sent items continue above the reserved 8")
        var seen = out.seqs(to: w2)
        seen += h.send(p2, id: "u-4", mode: .userInfo).seqs(to: w2)
        seen += h.ack(w2, 3).seqs(to: w2)
        seen += h.send(p2, id: "m-4", mode: .message).seqs(to: w2)
        #expect(seen == [3, 9, 10, 11, 12], "each item once on this connection")
        h.close(w2)
        let (w3, again) = h.reconnect(.watch, lastSeq: 3)
        #expect(again.seqs(to: w3) == [9, 10, 11], "and again on the next connection, same seqs")
    }

    @Test func aRestartKeepsTokensTheBudgetTheLastContextPendingTransferredAndFinishedIDs() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "c-1", mode: .complication)  // seq 1
        let context = h.deliver(2, "x-1", .context, from: .phone)
        h.send(phone, id: "x-1", mode: .context)  // seq 2
        h.ack(watch, 2)
        h.send(watch, id: "w-1", mode: .userInfo)
        h.close(watch)
        h.ack(phone, 1)  // transferred w-1 pending for the watch
        h.restart()

        let (w2, wOut) = h.reconnect(.watch, lastSeq: 2)
        let frames = wOut.frames(to: w2)
        #expect(frames.first?.welcome?.context == context)
        #expect(frames.first?.welcome?.limits.complicationsRemaining == 49)
        #expect(Array(frames.dropFirst()) == [.transferred(Transferred(ids: ["w-1"]))])
        let (p2, _) = h.reconnect(.phone)
        #expect(h.send(p2, id: "c-1", mode: .complication).effects == [.send(p2, .accepted(Accepted(re: "c-1", remaining: 49)))])
        #expect(h.send(w2, id: "w-1", mode: .userInfo).effects == [.send(w2, .accepted(Accepted(re: "w-1")))])
        #expect(h.send(p2, .cancel(Cancel(id: "k-1", target: "x-1"))).errors(to: p2).map(\.code) == [.notSupported])
    }

    @Test func aRestartKeepsTheOrderOfOutstandingAndComplicationsFirst() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for (id, mode) in [("u-1", DeliveryMode.userInfo), ("c-1", .complication), ("u-2", .userInfo)] {
            h.send(phone, id: id, mode: mode)
        }
        h.restart()
        let (p2, _) = h.reconnect(.phone)
        #expect(h.outstanding(p2) == ["u-1", "c-1", "u-2"])
        let (w2, out) = h.reconnect(.watch)
        #expect(out.delivers(to: w2).map(\.id) == ["c-1", "u-1", "u-2"])
    }

    @Test func aPairDissolvedBeforeTheRestartStaysGone() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let old = h.tokens
        h.send(phone, .unpair(Request(id: "p-1")))
        h.restart()
        #expect(h.state.pairCount == 0)
        let link = h.open()
        #expect(h.hello(link, .phone, token: old[.phone]).errors(to: link).map(\.code) == [.unauthorized])
    }
}
