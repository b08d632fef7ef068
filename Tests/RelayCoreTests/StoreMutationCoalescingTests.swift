import RelayProtocol
import Testing

@testable import RelayCore

@Suite struct StoreMutationCoalescingTests {
    private let pair = PairID("p")
    private let now = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    private func item(_ id: String, seq: Int64? = nil) -> QueuedItem {
        QueuedItem(sendID: id, mode: .userInfo, payload: Payload(kind: "k"), acceptedAt: now, seq: seq)
    }

    @Test func aSeqSetInTheBatchThatInsertedTheItemGoesIntoTheInsert() {
        let batch: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")),
            .setSeqReserved(pair, direction: .phone, 1024),
            .insertItem(pair, direction: .phone, item("b")),
            .setItemSeq(pair, direction: .phone, sendID: "a", seq: 1),
            .setItemSeq(pair, direction: .phone, sendID: "b", seq: 2),
        ]
        #expect(
            StoreMutation.coalesced(batch) == [
                .insertItem(pair, direction: .phone, item("a", seq: 1)),
                .setSeqReserved(pair, direction: .phone, 1024),
                .insertItem(pair, direction: .phone, item("b", seq: 2)),
            ])
    }

    /// An item of another batch, of the other direction or of another pair is not this insert's.
    @Test func aSeqForAnItemNotInsertedInTheBatchStays() {
        let batch: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")),
            .setItemSeq(pair, direction: .watch, sendID: "a", seq: 1),
            .setItemSeq(PairID("q"), direction: .phone, sendID: "a", seq: 2),
            .setItemSeq(pair, direction: .phone, sendID: "older", seq: 3),
        ]
        #expect(StoreMutation.coalesced(batch) == batch)
    }

    /// A seq set after the item was deleted (its ack or its pair's end came in between) matched
    /// no row: both stay as they were, and so does the outcome.
    @Test func anItemDeletedBeforeItsSeqKeepsBoth() {
        let acked: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")),
            .deleteItems(pair, direction: .phone, sendIDs: ["x", "a"]),
            .setItemSeq(pair, direction: .phone, sendID: "a", seq: 1),
        ]
        #expect(StoreMutation.coalesced(acked) == acked)
        let dissolved: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")),
            .deletePair(pair),
            .setItemSeq(pair, direction: .phone, sendID: "a", seq: 1),
        ]
        #expect(StoreMutation.coalesced(dissolved) == dissolved)
    }

    /// Inserted again after a delete, the item's later seq goes into the new insert.
    @Test func theSeqGoesIntoTheLatestInsertOfTheItem() {
        let batch: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")),
            .deleteItems(pair, direction: .phone, sendIDs: ["a"]),
            .insertItem(pair, direction: .phone, item("a")),
            .setItemSeq(pair, direction: .phone, sendID: "a", seq: 7),
        ]
        #expect(
            StoreMutation.coalesced(batch) == [
                .insertItem(pair, direction: .phone, item("a")),
                .deleteItems(pair, direction: .phone, sendIDs: ["a"]),
                .insertItem(pair, direction: .phone, item("a", seq: 7)),
            ])
    }

    /// The insert is looked for a short way back: the seq of the step that accepted the item is
    /// always within reach; one further back stays an update (the same outcome, more work).
    @Test func aSeqIsMergedOnlyWithinReachOfItsInsert() {
        let filler = (0..<(StoreMutation.coalescingReach - 1)).map {
            StoreMutation.setSeqReserved(pair, direction: .watch, Int64($0))
        }
        let near: [StoreMutation] =
            [.insertItem(pair, direction: .phone, item("a"))] + filler + [.setItemSeq(pair, direction: .phone, sendID: "a", seq: 1)]
        #expect(StoreMutation.coalesced(near) == [.insertItem(pair, direction: .phone, item("a", seq: 1))] + filler)
        let far: [StoreMutation] =
            [.insertItem(pair, direction: .phone, item("a")), .setSeqReserved(pair, direction: .phone, 9)] + filler
            + [.setItemSeq(pair, direction: .phone, sendID: "a", seq: 1)]
        #expect(StoreMutation.coalesced(far) == far)
    }

    @Test func aBatchWithoutSeqsComesBackAsItIs() {
        let batch: [StoreMutation] = [
            .insertItem(pair, direction: .phone, item("a")), .deleteItems(pair, direction: .phone, sendIDs: ["a"]),
            .recordFinished(pair, direction: .phone, sendIDs: ["a"]),
        ]
        #expect(StoreMutation.coalesced(batch) == batch)
    }
}
