import RelayCore
import RelayProtocol
import Testing

@Suite struct SeqTests {
    @Test func seqStartsAt1PerPairAndPerDirection() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        #expect((1...3).flatMap { h.send(phone, id: "p-\($0)", mode: .userInfo).seqs(to: watch) } == [1, 2, 3])
        #expect((1...2).flatMap { h.send(watch, id: "w-\($0)", mode: .userInfo).seqs(to: phone) } == [1, 2])
        let (phone2, watch2) = h.pairDevices()
        #expect(h.send(phone2, id: "q-1", mode: .userInfo).seqs(to: watch2) == [1], "a new pair counts from 1")
    }

    @Test func messagesAndDurableItemsShareOneCounterRisingInDeliveryOrder() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        var seqs: [Int64] = []
        for (id, mode) in [("u-1", DeliveryMode.userInfo), ("m-1", .message), ("x-1", .context), ("c-1", .complication), ("m-2", .message)] {
            seqs += h.send(phone, id: id, mode: mode).seqs(to: watch)
        }
        #expect(seqs == [1, 2, 3, 4, 5])
    }

    @Test func aSeqIsAssignedWhenTheItemIsFirstSentNotWhenAccepted() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "u-1", mode: .userInfo)
        h.close(watch)
        h.send(phone, id: "u-2", mode: .userInfo)
        #expect(h.store.direction(h.pairID, .phone).items.map(\.seq) == [1, nil])
        let (w2, _) = h.reconnect(.watch)
        #expect(h.send(phone, id: "m-1", mode: .message).seqs(to: w2) == [3])
        #expect(h.store.direction(h.pairID, .phone).items.map(\.seq) == [1, 2])
    }

    @Test func aBlockOfSeqsIsReservedInTheStoreBeforeAnySeqOfItIsUsed() {
        var h = RelayHarness(configuration: RelayConfiguration(seqReservationBlock: 4))
        let (phone, _) = h.pairDevices()
        var reserved: [(seq: Int, value: Int64)] = []
        for n in 1...9 {
            h.advance(ms: 600)  // slow enough for every block to keep the base size
            let out = h.send(phone, id: "u-\(n)", mode: .userInfo)
            for case .setSeqReserved(_, .phone, let v) in out.mutations { reserved.append((n, v)) }
            if n == 1 {
                #expect(out.trace.suffix(3) == ["persist setSeqReserved", "persist setItemSeq", "deliver → link-2"])
            }
        }
        // The first block when needed, the next ones ahead, once half of the block is used.
        #expect(reserved.map(\.seq) == [1, 3, 7])
        #expect(reserved.map(\.value) == [4, 8, 12])
    }

    @Test func onlyInFlightItemsGoOutBeforeAnAckAndAcksReleaseMore() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 3))
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        for n in 1...5 { h.send(phone, id: "u-\(n)", mode: .userInfo) }
        let (w2, out) = h.reconnect(.watch)
        #expect(out.seqs(to: w2) == [1, 2, 3])
        #expect(h.ack(w2, 1).seqs(to: w2) == [4])
        #expect(h.send(phone, id: "u-6", mode: .userInfo).seqs(to: w2) == [], "the window is full")
        #expect(h.ack(w2, 4).seqs(to: w2) == [5, 6])
        #expect(h.ack(w2, 6).seqs(to: w2) == [])
    }

    /// The deliveries an ack makes room for come before the ack's own store writes, so the
    /// commit gate does not hold them behind that commit; `transferred` to the sender stays after.
    @Test func theItemsAnAckLetsOutGoBeforeItsStoreWritesAndTransferredAfter() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 2))
        let (phone, watch) = h.pairDevices()
        for n in 1...4 { h.send(phone, id: "u-\(n)", mode: .userInfo) }
        let trace = h.ack(watch, 2).trace
        let deliver = trace.firstIndex(of: "deliver → \(watch)")
        let delete = trace.firstIndex(of: "persist deleteItems")
        let transferred = trace.firstIndex(of: "transferred → \(phone)")
        #expect(deliver != nil && delete != nil && transferred != nil, "\(trace)")
        if let deliver, let delete, let transferred {
            #expect(deliver < delete, "\(trace)")
            #expect(delete < transferred, "\(trace)")
        }
    }

    @Test func welcomeAnnouncesTheDeliveryWindowInForce() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 3, inFlightBytes: 4096))
        let (phone, out) = h.connect(.phone)
        let limits = out.frames(to: phone).first?.welcome?.limits
        #expect(limits?.windowItems == 3)
        #expect(limits?.windowBytes == 4096)
        let (_, watch) = h.pairDevices()
        h.close(watch)
        let (w2, again) = h.reconnect(.watch)
        #expect(again.frames(to: w2).first?.welcome?.limits.windowItems == 3, "paired devices get it too")
    }

    @Test func aMessageIsNotHeldBackByAFullWindow() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 1))
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "u-1", mode: .userInfo)
        h.send(phone, id: "u-2", mode: .userInfo)
        #expect(h.send(phone, id: "m-1", mode: .message).seqs(to: watch) == [2])
        #expect(h.ack(watch, 1).seqs(to: watch) == [3])
    }

    @Test func theByteWindowHoldsBackPayloadsPastItsSize() {
        let pad = Payload(kind: "k", ["pad": .string(String(repeating: "x", count: 50))])
        var h = RelayHarness(configuration: RelayConfiguration(inFlightBytes: 100))
        let (phone, watch) = h.pairDevices()
        #expect((1...4).flatMap { h.send(phone, id: "u-\($0)", mode: .userInfo, pad).seqs(to: watch) } == [1, 2])
        #expect(h.ack(watch, 2).seqs(to: watch) == [3, 4])
    }

    @Test func aReconnectResendsTheUnackedItemsOnceWithinTheWindow() {
        var h = RelayHarness(configuration: RelayConfiguration(inFlightItems: 2))
        let (phone, watch) = h.pairDevices()
        for n in 1...3 { h.send(phone, id: "u-\(n)", mode: .userInfo) }
        h.close(watch)
        let (w2, out) = h.reconnect(.watch)
        var seen = out.seqs(to: w2)
        seen += h.send(phone, id: "u-4", mode: .userInfo).seqs(to: w2)
        seen += h.ack(w2, 1).seqs(to: w2)
        seen += h.ack(w2, 3).seqs(to: w2)
        seen += h.ack(w2, 4).seqs(to: w2)
        #expect(seen == [1, 2, 3, 4])
    }

    @Test func theNextSeqBlockIsReservedAheadWithoutHoldingFramesAndNoSeqWaitsOnceItsReservationIsCommitted() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        var reservations: [(seq: Int, action: RelayAction)] = []
        for n in 1...2100 {
            // 500 messages a second: each half block takes more than a second, so the block
            // keeps its base size.
            h.advance(ms: 2)
            let out = h.send(phone, id: "m-\(n)", mode: .message)
            #expect(out.seqs(to: watch) == [Int64(n)])
            for action in out.actions {
                switch action {
                case .persist, .persistAhead, .awaitSeqReservation: reservations.append((n, action))
                default: break
                }
            }
        }
        // The harness's store commits each reservation at once: nothing ever waits for one.
        #expect(reservations.map(\.seq) == [1, 513, 1537])
        #expect(reservations[0].action == .persist(.setSeqReserved(h.pairID, direction: .phone, 1024)))
        #expect(reservations[1].action == .persistAhead(.setSeqReserved(h.pairID, direction: .phone, 2048)))
        #expect(reservations[2].action == .persistAhead(.setSeqReserved(h.pairID, direction: .phone, 3072)))
    }

    /// Every seq handed out while its reservation is not reported committed makes what follows
    /// wait for it (`.awaitSeqReservation`), not only the block's first: a receiver that reconnects in
    /// that window gets the next seqs on a new connection, which waits for nothing else, and a
    /// crash before the commit would hand those seqs out again (the client drops them as seen).
    @Test func everySeqWaitsUntilItsReservationIsReportedCommitted() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.commitsReservations = false
        func send(_ n: Int) -> [RelayAction] {
            h.advance(ms: 2)
            let out = h.send(phone, id: "m-\(n)", mode: .message)
            #expect(out.seqs(to: watch) == [Int64(n)])
            return out.actions.filter {
                switch $0 {
                case .persist(.setSeqReserved), .persistAhead, .awaitSeqReservation: true
                default: false
                }
            }
        }
        let waits = RelayAction.awaitSeqReservation(h.pairID, direction: .phone)
        // The first block: its first seq waits through the persist, the next ones through
        // `.awaitSeqReservation` until the commit is reported.
        #expect(send(1) == [.persist(.setSeqReserved(h.pairID, direction: .phone, 1024))])
        #expect(send(2) == [waits])
        #expect(send(3) == [waits])
        h.commitReservations()
        #expect(send(4) == [])
        // The block ahead, reserved at 513 and not committed: the seqs of the current block do
        // not wait for it; every seq of the new block does, until its commit is reported.
        for n in 5...512 { #expect(send(n) == []) }
        #expect(send(513) == [.persistAhead(.setSeqReserved(h.pairID, direction: .phone, 2048))])
        for n in 514...1024 { #expect(send(n) == []) }
        #expect(send(1025) == [waits])
        #expect(send(1026) == [waits])
        h.commitReservations()
        #expect(send(1027) == [])
    }

    /// A block half used before its commit is reported: the wait for it comes before the next
    /// reservation, so the frames wait for the current block's batch, not the newer one.
    @Test func aReservationAheadWhileTheCurrentBlockWaitsComesAfterTheWait() {
        var h = RelayHarness(configuration: RelayConfiguration(seqReservationBlock: 16))
        let (phone, watch) = h.pairDevices()
        h.commitsReservations = false
        var steps: [[RelayAction]] = []
        for n in 1...9 {
            let out = h.send(phone, id: "m-\(n)", mode: .message)
            #expect(out.seqs(to: watch) == [Int64(n)])
            steps.append(out.actions.filter { if case .send = $0 { false } else { true } })
        }
        let waits = RelayAction.awaitSeqReservation(h.pairID, direction: .phone)
        #expect(steps[0] == [.persist(.setSeqReserved(h.pairID, direction: .phone, 16))])
        #expect(steps[1...7].allSatisfy { $0 == [waits] })
        // Half of 16 used within a second: the next block is 32.
        #expect(steps[8] == [waits, .persistAhead(.setSeqReserved(h.pairID, direction: .phone, 48))])
    }

    /// A reconnected receiver gets its `welcome` (with the last context) and the items it had
    /// not acked on a new connection, where no earlier frame holds them: they carry seqs whose
    /// reservation and `setItemSeq` may not be committed yet, so `.awaitStore` comes first. A
    /// device owed nothing with a seq does not wait.
    @Test func aReconnectedReceiverWaitsForTheStoreOnlyWhenItIsSentSeqsAgain() {
        var h = RelayHarness()
        let (phone, _) = h.pairDevices()
        let (_, owedNothing) = h.reconnect(.watch)
        #expect(!owedNothing.actions.contains(.awaitStore))
        let (w2, _) = h.reconnect(.watch)
        #expect(h.send(phone, id: "u-1", mode: .userInfo).seqs(to: w2) == [1])
        let (w3, again) = h.reconnect(.watch)
        #expect(again.seqs(to: w3) == [1], "sent again, same seq")
        let wait = again.actions.firstIndex(of: .awaitStore)
        let firstToW3 = again.actions.firstIndex {
            if case .send(w3, _) = $0 { true } else { false }
        }
        #expect(wait != nil && firstToW3 != nil && wait! < firstToW3!, "\(again.actions)")
    }

    @Test func afterARestartSeqsContinuePastEveryReservationMadeAhead() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        for n in 1...600 {
            h.advance(ms: 2)
            h.send(phone, id: "m-\(n)", mode: .message)
        }
        h.restart()
        let (p2, _) = h.reconnect(.phone)
        let (w2, _) = h.reconnect(.watch)
        _ = (phone, watch)
        #expect(h.send(p2, id: "after", mode: .message).seqs(to: w2) == [2049], "the ahead block (to 2048) was stored")
    }

    @Test func aBusyDirectionReservesLargerBlocksAndASlowerOneSmallerAgain() {
        // A base block of 16: the largest is 64 × 16 = 1,024.
        var h = RelayHarness(configuration: RelayConfiguration(seqReservationBlock: 16))
        let (phone, watch) = h.pairDevices()
        var reserved: [Int64] = [0]
        var n = 0
        func send(_ count: Int, every ms: Int64) {
            for _ in 0..<count {
                n += 1
                if ms > 0 { h.advance(ms: ms) }
                let out = h.send(phone, id: "m-\(n)", mode: .message)
                #expect(out.seqs(to: watch) == [Int64(n)])
                for action in out.actions {
                    switch action {
                    case .persist(.setSeqReserved(_, _, let upTo)), .persistAhead(.setSeqReserved(_, _, let upTo)):
                        // Never a seq handed out past what was reserved.
                        #expect(Int64(n) <= upTo)
                        reserved.append(upTo)
                    default: break
                    }
                }
            }
        }
        func blocks() -> [Int64] { zip(reserved.dropFirst(), reserved).map { $0 - $1 } }
        // All at once (no time passes): each block twice the last, up to 64 × the base.
        send(3000, every: 0)
        #expect(Array(blocks().prefix(7)) == [16, 32, 64, 128, 256, 512, 1024])
        #expect(blocks().count > 7 && blocks().dropFirst(7).allSatisfy { $0 == 1024 })
        // Then one message every 200 ms: half of each block takes more than a second, so the
        // next is half its size, down to the base.
        reserved = [reserved.last!]
        send(3000, every: 200)
        #expect(Array(blocks().prefix(8)) == [512, 256, 128, 64, 32, 16, 16, 16])
    }

    @Test(arguments: [Int64.min, -5, 0, Int64.max])
    func aBlockSizeOutOfRangeStillCoversEverySeqHandedOut(block: Int64) {
        var h = RelayHarness(configuration: RelayConfiguration(seqReservationBlock: block))
        let (phone, watch) = h.pairDevices()
        var reserved: Int64 = 0
        for n in 1...40 {
            let out = h.send(phone, id: "m-\(n)", mode: .message)
            for case .setSeqReserved(_, .phone, let upTo) in out.mutations { reserved = max(reserved, upTo) }
            for action in out.actions {
                if case .persistAhead(.setSeqReserved(_, _, let upTo)) = action { reserved = max(reserved, upTo) }
            }
            #expect(out.seqs(to: watch) == [Int64(n)])
            #expect(Int64(n) <= reserved)
        }
    }
}
