@testable import RelayClient
import Testing

@Suite struct DeliveryTrackerTests {
    @Test func redeliveredSeqsAreNotNew() {
        var t = DeliveryTracker(lastSeq: 5)
        #expect(!t.isNew(5) && !t.isNew(3) && t.isNew(6))
        t.received(6, durable: true)
        #expect(!t.isNew(6))
    }

    @Test func ackStopsBeforeTheFirstItemTheAppHasNotFinished() {
        var t = DeliveryTracker(lastSeq: 0)
        t.received(1, durable: true)
        t.received(2, durable: false)  // a message
        t.received(3, durable: true)
        #expect(t.ackToSend() == nil, "item 1 is still being handled")
        t.finish(3)
        #expect(t.ackToSend() == nil)
        t.finish(1)
        #expect(t.ackToSend() == 3)
        #expect(t.ackToSend() == nil, "acks only when it moves")
    }

    @Test func messagesAloneAdvanceTheAck() {
        var t = DeliveryTracker(lastSeq: 2)
        t.received(3, durable: false)
        #expect(t.ackToSend() == 3)
    }

    @Test func aNewPairStartsOver() {
        var t = DeliveryTracker(lastSeq: 40)
        t.reset()
        #expect(t.isNew(1) && t.ackedThrough == 0)
    }
}
