import RelayCore
import RelayProtocol
import Testing

@Suite struct ContextTests {
    static func snapshot(_ revision: Int64) -> Payload { Payload(kind: "favorites.snapshot", ["revision": .int(revision), "users": []]) }

    @Test func aContextIsCommittedAcceptedAndDeliveredAtOnceToAConnectedBackgroundWatch() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices(watchForeground: false)
        let out = h.send(phone, id: "p-051", mode: .context, Self.snapshot(7))
        let deliver = h.deliver(1, "p-051", .context, from: .phone, Self.snapshot(7))
        #expect(
            out.effects == [
                .persist(.insertItem(h.pairID, direction: .phone, h.item("p-051", .context, Self.snapshot(7)))),
                .send(phone, .accepted(Accepted(re: "p-051"))),
                .persist(.setSeqReserved(h.pairID, direction: .phone, 1024)),
                .persist(.setItemSeq(h.pairID, direction: .phone, sendID: "p-051", seq: 1)),
                .persist(.setLastSentContext(h.pairID, direction: .phone, deliver)),
                .send(watch, .deliver(deliver)),
            ])
    }

    @Test func latestWinsWhileThePeerIsAwayAndTheReplacedOneLeavesOutstanding() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.close(watch)
        h.send(phone, id: "p-051", mode: .context, Self.snapshot(7))
        let out = h.send(phone, id: "p-052", mode: .context, Self.snapshot(8))
        #expect(out.mutations.contains(.deleteItems(h.pairID, direction: .phone, sendIDs: ["p-051"])))
        #expect(out.frames(to: phone) == [.accepted(Accepted(re: "p-052"))])
        #expect(h.outstanding(phone) == ["p-052"])
        let (w2, wOut) = h.reconnect(.watch, foreground: false)
        let frames = wOut.frames(to: w2)
        #expect(frames.first?.welcome?.context == nil, "a context never sent is not in welcome")
        #expect(Array(frames.dropFirst()) == [.deliver(h.deliver(1, "p-052", .context, from: .phone, Self.snapshot(8)))])
    }

    @Test func aContextSentButNotAckedIsInWelcomeAndDeliveredAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let first = h.deliver(1, "p-051", .context, from: .phone, Self.snapshot(7))
        #expect(h.send(phone, id: "p-051", mode: .context, Self.snapshot(7)).delivers(to: watch) == [first])
        h.close(watch)
        let (w2, out) = h.reconnect(.watch)
        #expect(out.frames(to: w2).first?.welcome?.context == first)
        #expect(out.delivers(to: w2) == [first])
    }

    @Test func aNewerContextReplacesOneSentButNotAckedWhichIsNotDeliveredAgain() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        let first = h.deliver(1, "p-051", .context, from: .phone, Self.snapshot(7))
        h.send(phone, id: "p-051", mode: .context, Self.snapshot(7))
        h.close(watch)
        h.advance(ms: 5_000)
        h.send(phone, id: "p-052", mode: .context, Self.snapshot(8))
        #expect(h.outstanding(phone) == ["p-052"])
        let (w2, out) = h.reconnect(.watch)
        #expect(out.frames(to: w2).first?.welcome?.context == first, "welcome.context is the last one sent")
        #expect(out.delivers(to: w2) == [h.deliver(2, "p-052", .context, from: .phone, Self.snapshot(8))])
    }

    @Test func welcomeContextFollowsTheLastContextSent() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "p-051", mode: .context, Self.snapshot(7))
        h.ack(watch, 1)
        let second = h.deliver(2, "p-052", .context, from: .phone, Self.snapshot(8))
        #expect(h.send(phone, id: "p-052", mode: .context, Self.snapshot(8)).delivers(to: watch) == [second])
        h.ack(watch, 2)
        h.close(watch)
        let (w2, out) = h.reconnect(.watch, lastSeq: 2)
        #expect(out.frames(to: w2) == [out.frames(to: w2)[0]] && out.frames(to: w2).first?.welcome?.context == second)
    }

    @Test func anAckedContextLeavesOutstandingWithoutTransferred() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "p-051", mode: .context, Self.snapshot(7))
        let out = h.ack(watch, 1)
        #expect(
            out.effects == [
                .persist(.deleteItems(h.pairID, direction: .phone, sendIDs: ["p-051"])),
                .persist(.recordFinished(h.pairID, direction: .phone, sendIDs: ["p-051"])),
            ])
        #expect(h.outstanding(phone) == [])
    }

    @Test func contextsOfTheTwoDirectionsAreIndependent() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "p-1", mode: .context, Self.snapshot(1))
        #expect(h.send(watch, id: "w-1", mode: .context, Payload(kind: "watch.state")).seqs(to: phone) == [1])
        #expect(h.outstanding(phone) == ["p-1"])
        #expect(h.outstanding(watch) == ["w-1"])
    }

    @Test func cancellingAContextIsNotSupportedWhateverBecameOfIt() {
        var h = RelayHarness()
        let (phone, watch) = h.pairDevices()
        h.send(phone, id: "acked", mode: .context, Self.snapshot(1))
        h.ack(watch, 1)
        h.send(phone, id: "sent", mode: .context, Self.snapshot(2))  // replaces nothing unacked; sent as seq 2
        h.close(watch)
        h.send(phone, id: "replaced", mode: .context, Self.snapshot(3))
        h.send(phone, id: "queued", mode: .context, Self.snapshot(4))
        for target in ["acked", "sent", "replaced", "queued"] {
            let out = h.send(phone, .cancel(Cancel(id: "c-\(target)", target: target)))
            #expect(out.effects == [.send(phone, errorFrame(.notSupported, re: "c-\(target)"))], "\(target)")
        }
    }
}
