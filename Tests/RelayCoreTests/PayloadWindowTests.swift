import RelayCore
import RelayProtocol
import Testing

/// Payloads on demand (`loadsPayloadsOnDemand`, as `watchrelay serve` runs): a direction keeps
/// one delivery window of payloads in memory and reads the rest from the store when it gets to
/// them, in FIFO order, without losing or repeating an item.
@Suite struct PayloadWindowTests {
    /// A hot budget of one delivery window, so the tests see the reads.
    static let window = RelayConfiguration(
        inFlightItems: 8, inFlightBytes: 1 << 20, hotPayloadItems: 8, hotPayloadBytes: 1 << 20)

    static func payload(_ n: Int) -> Payload { Payload(kind: "test.item", ["n": .string("\(n)")]) }

    /// The ids a `.loadPayloads` of `out` asks for (nil if it asks for none).
    static func loadRequest(_ out: Output) -> [String]? {
        for case .loadPayloads(_, _, let ids) in out.actions { return ids }
        return nil
    }

    /// Answers the pending read of the phone's direction from the store.
    static func answer(_ h: inout RelayHarness, _ ids: [String]) -> Output {
        h.handle(.payloadsLoaded(h.pairID, direction: .phone, h.store.payloads(h.pairID, .phone, ids)))
    }

    /// Makes `h` a pair whose phone queued `u-1`…`u-count` while the watch was away; `answers` says
    /// whether the harness answers payload reads itself.
    /// (The phone's connection is returned.)
    @discardableResult
    static func queueWhileAway(_ count: Int, answers: Bool = true, in h: inout RelayHarness) -> LinkID {
        h = RelayHarness(configuration: window)
        h.answersPayloadLoads = answers
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for n in 1...count { h.send(phone, id: "u-\(n)", mode: .userInfo, payload(n)) }
        return phone
    }

    @Test func itemsQueuedWhileTheWatchIsAwayKeepNoPayloadInMemory() {
        var h = RelayHarness()
        let phone = Self.queueWhileAway(100, in: &h)
        #expect(h.state.queuedItemCount == 100)
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted, "the quotas still count every byte")
        #expect(h.state.payloadsInMemory.items == 0)
        #expect(h.outstanding(phone) == (1...100).map { "u-\($0)" }, "outstanding lists them all, in order")
    }

    @Test func aReturningWatchGetsTheWindowOnlyAfterTheReadAndTheNextBatchIsReadAhead() {
        var h = RelayHarness()
        Self.queueWhileAway(20, answers: false, in: &h)

        let (w2, hello) = h.reconnect(.watch)
        #expect(hello.delivers(to: w2).isEmpty, "nothing goes out before its payload is read")
        #expect(Self.loadRequest(hello) == (1...8).map { "u-\($0)" }, "one window is read, in order")

        let first = Self.answer(&h, (1...8).map { "u-\($0)" })
        #expect(first.delivers(to: w2).map(\.id) == (1...8).map { "u-\($0)" })
        #expect(first.delivers(to: w2).map(\.payload) == (1...8).map(Self.payload), "with their stored payloads")
        #expect(Self.loadRequest(first) == (9...16).map { "u-\($0)" }, "the next window is read ahead")
        #expect(h.state.payloadsInMemory.items == 8, "only the window in flight is in memory")

        #expect(h.ack(w2, 8).delivers(to: w2).isEmpty, "the read is still pending")
        let second = Self.answer(&h, (9...16).map { "u-\($0)" })
        #expect(second.seqs(to: w2) == Array(9...16))
        #expect(Self.loadRequest(second) == (17...20).map { "u-\($0)" })
        h.ack(w2, 16)
        #expect(Self.answer(&h, (17...20).map { "u-\($0)" }).seqs(to: w2) == Array(17...20))
        h.ack(w2, 20)
        #expect(h.state.queuedItemCount == 0)
        #expect(h.state.payloadsInMemory.items == 0)
    }

    @Test func whileTheWatchIsConnectedOnlyOneWindowOfUnsentPayloadsStaysInMemory() {
        var h = RelayHarness(configuration: Self.window)
        let (phone, watch) = h.pairDevices()
        var seen: [Int64] = []
        for n in 1...40 { seen += h.send(phone, id: "u-\(n)", mode: .userInfo, Self.payload(n)).seqs(to: watch) }
        #expect(seen == Array(1...8), "the delivery window went out; the watch has not acked")
        let held = h.state.payloadsInMemory.items
        #expect(held <= 16, "8 in flight and at most 8 unsent in memory, not 40 (held \(held))")
        var n: Int64 = 8
        while n < 40 {
            let out = h.ack(watch, n)
            seen += out.seqs(to: watch)
            n = seen.last ?? n
            if out.seqs(to: watch).isEmpty { break }
        }
        #expect(seen == Array(1...40), "every item once, in order")
    }

    @Test func aComplicationQueuedWhileTheWatchIsAwayStillGoesFirst() {
        var h = RelayHarness(configuration: Self.window)
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for n in 1...3 { h.send(phone, id: "u-\(n)", mode: .userInfo) }
        h.send(phone, id: "c-1", mode: .complication)
        let (w2, out) = h.reconnect(.watch)
        #expect(out.delivers(to: w2).map(\.id) == ["c-1", "u-1", "u-2", "u-3"])
    }

    @Test func cancellingAnItemWhoseReadIsPendingCancelsItAndTheReadSkipsIt() {
        var h = RelayHarness()
        let phone = Self.queueWhileAway(3, answers: false, in: &h)
        let (w2, hello) = h.reconnect(.watch)
        #expect(Self.loadRequest(hello) == ["u-1", "u-2", "u-3"])
        let cancel = h.send(phone, .cancel(Cancel(id: "k-1", target: "u-2")))
        #expect(cancel.frames(to: phone) == [.cancelled(Answer(re: "k-1"))], "not delivered yet: cancelled")
        let out = Self.answer(&h, ["u-1", "u-2", "u-3"])
        #expect(out.delivers(to: w2).map(\.id) == ["u-1", "u-3"])
        #expect(h.state.queuedBytes == h.state.queuedBytesRecounted)
    }

    @Test func aReadAnsweredAfterTheWatchLeftIsDroppedAndReadAgainWhenItIsBack() {
        var h = RelayHarness()
        Self.queueWhileAway(3, answers: false, in: &h)
        let (w2, hello) = h.reconnect(.watch)
        let ids = Self.loadRequest(hello) ?? []
        h.close(w2)
        #expect(Self.answer(&h, ids).effects.isEmpty)
        #expect(h.state.payloadsInMemory.items == 0, "nothing is kept for an absent watch")
        let (w3, again) = h.reconnect(.watch)
        #expect(Self.loadRequest(again) == ids)
        #expect(Self.answer(&h, ids).delivers(to: w3).map(\.id) == ["u-1", "u-2", "u-3"])
    }

    @Test func afterARestartEveryQueuedItemArrivesOnceInOrderThroughReadsOfOneWindow() {
        var h = RelayHarness()
        Self.queueWhileAway(50, in: &h)
        h.restart()
        #expect(h.state.queuedItemCount == 50)
        #expect(h.state.payloadsInMemory.items == 0, "the restart loads no unsent payload")
        let (w2, hello) = h.reconnect(.watch)
        var got = hello.delivers(to: w2)
        while let last = got.last, got.count < 50 {
            let more = h.ack(w2, last.seq).delivers(to: w2)
            if more.isEmpty { break }
            got += more
        }
        #expect(got.map(\.id) == (1...50).map { "u-\($0)" })
        #expect(got.map(\.payload) == (1...50).map(Self.payload))
        #expect(h.state.payloadsInMemory.items <= 16)
    }

    /// The default hot budget (1,024 items, 4 MiB): a phone several delivery windows ahead of a
    /// connected watch costs no store read, however the acks come; past the budget, reads again.
    @Test func aConnectedWatchSeveralWindowsBehindNeedsNoStoreReadWithinTheHotBudget() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 64), defaultHotBudget: true)
        let (phone, watch) = h.pairDevices()
        var seen: [Int64] = []
        var reads = 0
        for n in 1...300 {
            let out = h.send(phone, id: "u-\(n)", mode: .userInfo, Self.payload(n))
            if Self.loadRequest(out) != nil { reads += 1 }
            seen += out.seqs(to: watch)
        }
        #expect(seen == Array(1...64), "one delivery window went out")
        #expect(h.state.payloadsInMemory.items == 300, "the rest waits in memory, under the budget")
        while let last = seen.last, seen.count < 300 {
            let out = h.ack(watch, last)
            if Self.loadRequest(out) != nil { reads += 1 }
            let more = out.seqs(to: watch)
            if more.isEmpty { break }
            seen += more
        }
        #expect(seen == Array(1...300), "every item once, in order")
        #expect(reads == 0)

        // All acked; 1,100 more: a window goes out, 1,024 stay hot, the rest wait in the store.
        #expect(h.ack(watch, 300).seqs(to: watch).isEmpty)
        for n in 301...1400 { seen += h.send(phone, id: "u-\(n)", mode: .userInfo, Self.payload(n)).seqs(to: watch) }
        #expect(seen.count == 300 + 64)
        #expect(h.state.payloadsInMemory.items == 64 + 1024)
        var more: [Int64] = []
        var sawRead = false
        var last = seen.last ?? 0
        while seen.count < 1400 {
            let out = h.ack(watch, last)
            if Self.loadRequest(out) != nil { sawRead = true }
            more = out.seqs(to: watch)
            if more.isEmpty { break }
            seen += more
            last = more.last ?? last
        }
        #expect(seen.count == 1400)
        #expect(seen == Array(1...1400), "every item once, in order")
        #expect(sawRead, "past the budget the relay reads from the store again")
    }
}
