import RelayCore
import RelayProtocol
import Testing

@testable import RelayServer

/// ``CommitGate``: which frames wait for which commit. No sockets, no threads, no clock.
struct CommitGateTests {
    let phone = LinkID(1)
    let watch = LinkID(2)
    let other = LinkID(3)
    let pair = PairID("pr-1")

    func accepted(_ id: String, to link: LinkID) -> RelayAction {
        .send(link, .accepted(Accepted(re: id)))
    }

    func persist(_ n: Int) -> RelayAction {
        .persist(.setSeqReserved(pair, direction: .phone, Int64(n)))
    }

    /// ``CommitGate/passesThrough(_:)`` (mutating, so the engine asks it in place).
    func passes(_ gate: inout CommitGate, _ actions: [RelayAction]) -> Bool {
        gate.passesThrough(actions)
    }

    /// Feeds one step; returns what may go out now.
    func admit(_ gate: inout CommitGate, _ actions: [RelayAction]) -> [RelayAction] {
        var ready: [RelayAction] = []
        gate.admit(actions, into: &ready)
        return ready
    }

    /// The next batch for the committer, which the test expects there to be.
    func take(_ gate: inout CommitGate) throws -> CommitGate.Batch {
        let batch = gate.takeBatch()
        return try #require(batch)
    }

    func commit(_ gate: inout CommitGate, _ ticket: UInt64) -> [RelayAction] {
        var ready: [RelayAction] = []
        gate.committed(ticket, into: &ready)
        return ready
    }

    @Test func framesWithoutAPersistGoAtOnceInOrder() {
        var gate = CommitGate()
        let step = [accepted("a", to: phone), accepted("b", to: watch), accepted("c", to: phone)]
        #expect(admit(&gate, step) == step)
        #expect(gate.takeBatch() == nil)
        #expect(gate.isIdle)
    }

    /// The engine performs a step in place when ``CommitGate/passesThrough(_:)`` says so: only
    /// when admitting it would have passed it unchanged and left the gate as it was.
    @Test func aStepPassesThroughOnlyWhenNothingWouldWaitOrBeRecorded() throws {
        var gate = CommitGate()
        let frames = [accepted("a", to: phone), .close(watch, .policy, reason: "x"), accepted("b", to: phone)]
        #expect(passes(&gate, frames) && passes(&gate, []))
        #expect(admit(&gate, frames) == frames && gate.isIdle)
        // A step that persists, reserves ahead, waits for a reservation or reads does not.
        for action: RelayAction in [
            persist(1), .persistAhead(.setSeqReserved(pair, direction: .phone, 2048)),
            .awaitSeqReservation(pair, direction: .phone),
            .awaitStore, .loadPayloads(pair, direction: .phone, sendIDs: ["u1"]),
        ] {
            #expect(!passes(&gate, [accepted("c", to: other), action]))
        }
        // While a connection waits for a commit, no step passes through (its frames must queue
        // behind the waiting ones); after the commit they do again.
        #expect(admit(&gate, [persist(1), accepted("d", to: phone)]).isEmpty)
        #expect(!passes(&gate, [accepted("e", to: other)]))
        let batch = try take(&gate)
        #expect(commit(&gate, batch.ticket) == [accepted("d", to: phone)])
        #expect(passes(&gate, [accepted("e", to: phone)]))
        // A failing batch: nothing passes until it is committed.
        #expect(admit(&gate, [persist(2), accepted("f", to: phone)]).isEmpty)
        let failing = try take(&gate)
        #expect(gate.commitFailed(failing.ticket) == [phone])
        #expect(!passes(&gate, [accepted("g", to: other)]))
        #expect(commit(&gate, failing.ticket).isEmpty)
        #expect(passes(&gate, [accepted("g", to: other)]))
    }

    @Test func aFrameBehindAPersistWaitsForThatCommitAndLaterFramesOnTheConnectionWaitBehindIt() throws {
        var gate = CommitGate()
        #expect(admit(&gate, [persist(1), accepted("a", to: phone)]).isEmpty)
        // A later step's frame on the same connection needs no commit of its own, yet waits.
        #expect(admit(&gate, [accepted("b", to: phone)]).isEmpty)
        // Another connection's frames do not wait.
        #expect(admit(&gate, [accepted("x", to: other)]) == [accepted("x", to: other)])
        let batch = try take(&gate)
        #expect(batch.ticket == 1 && batch.mutations.count == 1 && batch.urgent)
        #expect(gate.waitingCount == 2)
        #expect(commit(&gate, 1) == [accepted("a", to: phone), accepted("b", to: phone)])
        #expect(gate.isIdle)
        // Once released, the connection's frames go at once again.
        #expect(admit(&gate, [accepted("c", to: phone)]) == [accepted("c", to: phone)])
    }

    @Test func mutationsThatPileUpDuringACommitFormTheNextBatch() throws {
        var gate = CommitGate()
        _ = admit(&gate, [persist(1), accepted("a", to: phone)])
        let first = try take(&gate)
        // While batch 1 is with the committer, three steps persist: one batch, not three.
        _ = admit(&gate, [persist(2), accepted("b", to: phone)])
        _ = admit(&gate, [persist(3), accepted("c", to: watch)])
        _ = admit(&gate, [persist(4), accepted("d", to: phone)])
        #expect(gate.takeBatch() == nil)  // one batch at a time
        #expect(commit(&gate, first.ticket) == [accepted("a", to: phone)])
        let second = try take(&gate)
        #expect(second.ticket == 2 && second.mutations.count == 3 && second.urgent)
        #expect(
            commit(&gate, second.ticket) == [accepted("b", to: phone), accepted("c", to: watch), accepted("d", to: phone)])
    }

    @Test func aFrameOnAConnectionWaitingForTheBatchInFlightWaitsForItOnly() throws {
        var gate = CommitGate()
        _ = admit(&gate, [persist(1), accepted("a", to: phone)])
        _ = try take(&gate)
        // Batch 2 opens for the watch; the phone's next frame waits for batch 1, not 2.
        _ = admit(&gate, [persist(2), accepted("w", to: watch)])
        _ = admit(&gate, [accepted("b", to: phone)])
        #expect(commit(&gate, 1) == [accepted("a", to: phone), accepted("b", to: phone)])
        _ = try take(&gate)
        #expect(commit(&gate, 2) == [accepted("w", to: watch)])
    }

    @Test func aCommitNothingWaitsForIsNotUrgent() throws {
        var gate = CommitGate()
        // An ack's deletion whose `transferred` goes nowhere: no frame follows the persist.
        let deletion = RelayAction.persist(.deleteItems(pair, direction: .phone, sendIDs: ["u1"]))
        #expect(admit(&gate, [accepted("x", to: other), deletion]) == [accepted("x", to: other)])
        let batch = try take(&gate)
        #expect(!batch.urgent)
        #expect(commit(&gate, batch.ticket).isEmpty)
    }

    /// The core takes a committed seq reservation as durable (seqs it covers go out without
    /// waiting), so its batch is flushed to stable storage even when no frame waits for it,
    /// e.g. after a failed commit dropped the frames that did.
    @Test func aBatchWithASeqReservationIsUrgentEvenWithNoFrameWaiting() throws {
        var gate = CommitGate()
        #expect(admit(&gate, [persist(1024)]).isEmpty)
        let batch = try take(&gate)
        #expect(batch.urgent)
        var ready: [RelayAction] = []
        #expect(gate.committed(batch.ticket, into: &ready) == [SeqReservationCommit(pair: pair, direction: .phone, upTo: 1024)])
    }

    /// `.awaitStore` (a reconnected receiver's welcome and redelivered items): what follows it
    /// waits for the newest batch not yet committed, open or in flight; with none, nothing.
    @Test func anAwaitForTheStoreWaitsForTheNewestBatchNotYetCommitted() throws {
        var gate = CommitGate()
        let newWatch = LinkID(4)
        let welcome1 = accepted("welcome-1", to: newWatch)
        #expect(admit(&gate, [.awaitStore, welcome1]) == [welcome1], "nothing pending: no wait")
        // A batch in flight (an item's seq, its deliver on the old connection).
        #expect(admit(&gate, [.persist(.setItemSeq(pair, direction: .phone, sendID: "u1", seq: 1)), accepted("d1", to: watch)]).isEmpty)
        let inFlight = try take(&gate)
        let welcome2 = accepted("welcome-2", to: newWatch)
        let redelivery = accepted("d1-again", to: newWatch)
        #expect(admit(&gate, [.awaitStore, welcome2, redelivery]).isEmpty)
        // Another mutation opens the next batch: a later await waits for that one.
        #expect(admit(&gate, [.persist(.deleteItems(pair, direction: .watch, sendIDs: ["w1"]))]).isEmpty)
        let welcome3 = accepted("welcome-3", to: other)
        #expect(admit(&gate, [.awaitStore, welcome3]).isEmpty)
        #expect(commit(&gate, inFlight.ticket) == [accepted("d1", to: watch), welcome2, redelivery])
        let open = try take(&gate)
        #expect(commit(&gate, open.ticket) == [welcome3])
        #expect(gate.isIdle)
    }

    @Test func aSeqReservationAheadIsUrgentButHoldsNothingBackUntilAwaited() throws {
        var gate = CommitGate()
        let ahead = RelayAction.persistAhead(.setSeqReserved(pair, direction: .phone, 2048))
        let deliver1 = accepted("d1", to: watch)
        #expect(admit(&gate, [ahead, deliver1]) == [deliver1])
        // The first seq of the reserved block is used before the reservation is durable: wait.
        let deliver2 = accepted("d2", to: watch)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver2]).isEmpty)
        let batch = try take(&gate)
        #expect(batch.urgent)
        #expect(commit(&gate, batch.ticket) == [deliver2])
        // Awaiting a reservation that is already committed holds nothing.
        let deliver3 = accepted("d3", to: watch)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver3]) == [deliver3])
    }

    /// The gap a receiver's reconnect opened: seqs of a block whose reservation is in flight,
    /// delivered on a new connection (nothing waits there), could be handed out again after a
    /// crash. Every `.awaitSeqReservation` waits for the direction's last reservation, by `persist` or
    /// `persistAhead`, until that batch is committed; the commit names what it reserved.
    @Test func everyAwaitWaitsForTheDirectionsLastReservationUntilItsBatchIsCommitted() throws {
        var gate = CommitGate()
        let newWatch = LinkID(4)
        // seq 1 reserves the block now: its deliver waits for the batch.
        let deliver1 = accepted("d1", to: watch)
        #expect(admit(&gate, [persist(1024), deliver1]).isEmpty)
        let first = try take(&gate)
        // The watch reconnects; seqs 2 and 3 go to the new connection: they wait too.
        let deliver2 = accepted("d2", to: newWatch)
        let deliver3 = accepted("d3", to: newWatch)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver2]).isEmpty)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver3]).isEmpty)
        // The other direction reserved nothing: its frames do not wait.
        let fromWatch = accepted("w1", to: phone)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .watch), fromWatch]) == [fromWatch])
        var ready: [RelayAction] = []
        let reserved = gate.committed(first.ticket, into: &ready)
        #expect(ready == [deliver1, deliver2, deliver3])
        #expect(reserved == [SeqReservationCommit(pair: pair, direction: .phone, upTo: 1024)])
        // An ahead reservation, then seqs of its block before its commit: each waits.
        let ahead = RelayAction.persistAhead(.setSeqReserved(pair, direction: .phone, 2048))
        #expect(admit(&gate, [ahead]).isEmpty)
        let second = try take(&gate)
        let deliver4 = accepted("d4", to: newWatch)
        let deliver5 = accepted("d5", to: other)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver4]).isEmpty)
        #expect(admit(&gate, [.awaitSeqReservation(pair, direction: .phone), deliver5]).isEmpty)
        ready = []
        #expect(gate.committed(second.ticket, into: &ready) == [SeqReservationCommit(pair: pair, direction: .phone, upTo: 2048)])
        #expect(ready == [deliver4, deliver5])
        // A batch without a reservation names none.
        #expect(admit(&gate, [.persist(.deletePair(pair)), accepted("x", to: phone)]).isEmpty)
        let third = try take(&gate)
        ready = []
        #expect(gate.committed(third.ticket, into: &ready).isEmpty)
        #expect(gate.isIdle)
    }

    @Test func aWrongPairingCodeCountHoldsNothingBackAndIsNotUrgent() throws {
        var gate = CommitGate()
        let now = Timestamp(millisecondsSinceEpoch: 1_000)
        let wrong = WrongPairingCode(address: "203.0.113.7", at: now, countsUntil: now.adding(milliseconds: 120_000))
        let invalid = RelayAction.send(watch, .error(ErrorFrame(re: "j-1", code: .pairingCodeInvalid, message: "no such pairing code")))
        #expect(admit(&gate, [.persistAhead(.recordWrongPairingCode(wrong)), invalid]) == [invalid])
        let batch = try take(&gate)
        #expect(batch.mutations == [.recordWrongPairingCode(wrong)])
        #expect(!batch.urgent, "no flush of its own: the next urgent batch's covers it")
        #expect(commit(&gate, batch.ticket).isEmpty)
    }

    @Test func aCloseKeepsItsPlaceBehindTheConnectionsWaitingFrames() throws {
        var gate = CommitGate()
        let close = RelayAction.close(phone, .unpaired, reason: "unpaired")
        #expect(admit(&gate, [persist(1), accepted("a", to: phone), close]).isEmpty)
        _ = try take(&gate)
        #expect(commit(&gate, 1) == [accepted("a", to: phone), close])
    }

    @Test func aFailedCommitReleasesNothingNamesTheWaitingConnectionsAndHoldsEveryLaterFrame() throws {
        var gate = CommitGate()
        _ = admit(&gate, [persist(1), accepted("a", to: phone), accepted("w", to: watch)])
        let batch = try take(&gate)
        // The committer reports the failure (and keeps retrying): nothing is released, the
        // connections that waited are named for the caller to close (1011).
        #expect(gate.commitFailed(batch.ticket) == [phone, watch])
        #expect(gate.waitingCount == 0)
        // While it fails, even a frame with no persist of its own (a repeated `accepted` for a
        // send whose item is in the failing batch) waits for it.
        let repeated = accepted("a", to: other)
        #expect(admit(&gate, [repeated]).isEmpty)
        // The retry succeeds: what waited since goes, and frames flow again.
        #expect(commit(&gate, batch.ticket) == [repeated])
        #expect(admit(&gate, [accepted("b", to: other)]) == [accepted("b", to: other)])
        #expect(gate.isIdle)
    }

    @Test func aCommitterThatNeverConfirmsNeverLetsTheFrameOut() throws {
        var gate = CommitGate()
        _ = admit(&gate, [persist(1), accepted("a", to: phone)])
        _ = try take(&gate)
        for _ in 0..<100 { #expect(admit(&gate, [accepted("more", to: phone)]).isEmpty) }
        #expect(gate.waitingCount == 101)
        #expect(!gate.isIdle)
    }

    @Test func aPayloadReadGoesToTheCommitterOnlyBehindTheBatchWithTheInsertsBeforeIt() throws {
        var gate = CommitGate()
        let read = RelayAction.loadPayloads(pair, direction: .phone, sendIDs: ["u-1"])
        let expected = CommitGate.PayloadRead(pair: pair, direction: .phone, sendIDs: ["u-1"])
        #expect(admit(&gate, [persist(1), read]).isEmpty, "a read is no frame: nothing goes out")
        #expect(gate.takeReads().isEmpty, "its batch is still open")
        let first = try take(&gate)
        #expect(gate.takeReads() == [expected], "submitted after that batch, the read sees its writes")
        // With the next batch still open behind one with the committer, a read waits for it.
        _ = admit(&gate, [persist(2), read])
        #expect(gate.takeBatch() == nil && gate.takeReads().isEmpty)
        _ = commit(&gate, first.ticket)
        _ = try take(&gate)
        #expect(gate.takeReads() == [expected])
        // Nothing open: at once.
        _ = admit(&gate, [read])
        #expect(gate.takeReads() == [expected])
    }
}
