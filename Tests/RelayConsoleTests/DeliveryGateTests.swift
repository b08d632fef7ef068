import RelayConsole
import RelayCore
import Testing

/// Frames held by delay and slow-writes faults keep each connection's order.
@Suite struct DeliveryGateTests {
    let a = LinkID(1)
    let b = LinkID(2)

    @Test func withoutFaultsEverythingGoesAtOnce() {
        var gate = DeliveryGate<Int>()
        let goes = gate.submit(1, to: a, delay: 0, spacing: 0, now: 0)
        #expect(goes == 1 && gate.isEmpty)
    }

    /// What a connection holds is counted, so the engine can close one that holds too much.
    @Test func theBytesHeldPerConnectionAreCounted() {
        var gate = DeliveryGate<Int>()
        _ = gate.submit(1, bytes: 100, to: a, delay: 100, spacing: 0, now: 0)
        _ = gate.submit(2, bytes: 50, to: a, delay: 200, spacing: 0, now: 0)
        _ = gate.submit(3, bytes: 7, to: b, delay: 100, spacing: 0, now: 0)
        #expect(gate.heldBytes(to: a) == 150 && gate.heldBytes(to: b) == 7)
        _ = gate.release(now: 100)
        #expect(gate.heldBytes(to: a) == 50 && gate.heldBytes(to: b) == 0)
        gate.forget(a)
        #expect(gate.heldBytes(to: a) == 0 && gate.isEmpty)
    }

    @Test func aDelayedItemGoesWhenItsTimeComes() {
        var gate = DeliveryGate<Int>()
        let goes = gate.submit(1, to: a, delay: 100, spacing: 0, now: 0)
        let early = gate.release(now: 99)
        #expect(goes == nil && early.isEmpty)
        let out = gate.release(now: 100)
        #expect(out.map(\.1) == [1] && out.map(\.0) == [a])
        #expect(gate.isEmpty)
    }

    @Test func anUndelayedItemWaitsBehindAHeldOneOnTheSameConnectionOnly() {
        var gate = DeliveryGate<Int>()
        _ = gate.submit(1, to: a, delay: 100, spacing: 0, now: 0)
        let second = gate.submit(2, to: a, delay: 0, spacing: 0, now: 10)
        let other = gate.submit(3, to: b, delay: 0, spacing: 0, now: 10)
        let released = gate.release(now: 100)
        #expect(second == nil && other == 3)
        #expect(released.map(\.1) == [1, 2])
    }

    @Test func slowWritesSpaceItemsApart() {
        var gate = DeliveryGate<Int>()
        let goes = [1, 2, 3].map { gate.submit($0, to: a, delay: 0, spacing: 50, now: 0) }
        #expect(goes == [1, nil, nil] && gate.heldCount == 2)
        let at50 = gate.release(now: 50).map(\.1)
        let at99 = gate.release(now: 99).map(\.1)
        let at100 = gate.release(now: 100).map(\.1)
        #expect(at50 == [2] && at99.isEmpty && at100 == [3])
    }

    @Test func aClosedConnectionsItemsAreForgotten() {
        var gate = DeliveryGate<Int>()
        _ = gate.submit(1, to: a, delay: 100, spacing: 0, now: 0)
        gate.forget(a)
        let later = gate.release(now: 1000)
        #expect(gate.isEmpty && later.isEmpty)
    }
}
