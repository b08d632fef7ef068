import RelayCore
import RelayProtocol
import Testing

/// `queuedItemsByMode` (the `/metrics` gauge) is kept as counts updated with each change,
/// not recounted; it must always equal what `outstanding` lists, through queueing, delivery,
/// acks, a replaced context, a cancel and a restart.
@Suite struct HeldCountTests {
    /// Counts by mode of what the two devices' `outstanding` list.
    static func listed(_ h: inout RelayHarness, _ links: [LinkID], modes: [String: DeliveryMode]) -> [DeliveryMode: Int] {
        var out: [DeliveryMode: Int] = [.context: 0, .userInfo: 0, .complication: 0]
        for link in links {
            for id in h.outstanding(link) ?? [] { out[modes[id]!, default: 0] += 1 }
        }
        return out
    }

    /// The connections gauge counts live sessions by role (each connection read in place).
    @Test func theConnectionsGaugeCountsSessionsThatSaidHelloByRole() {
        var h = RelayHarness()
        #expect(h.state.connectionsByRole == [.phone: 0, .watch: 0])
        let (phone, watch) = h.pairDevices()
        _ = h.open()  // no hello yet: not counted
        #expect(h.state.connectionsByRole == [.phone: 1, .watch: 1])
        h.close(phone)
        #expect(h.state.connectionsByRole == [.phone: 0, .watch: 1])
        h.close(watch)
        _ = h.reconnect(.phone)
        #expect(h.state.connectionsByRole == [.phone: 1, .watch: 0])
    }

    @Test func theGaugeFollowsEveryChangeToTheQueues() {
        var h = RelayHarness()
        var (phone, watch) = h.pairDevices()
        var modes: [String: DeliveryMode] = [:]
        func send(_ h: inout RelayHarness, _ link: LinkID, _ id: String, _ mode: DeliveryMode) {
            modes[id] = mode
            h.send(link, id: id, mode: mode)
        }
        h.close(watch)
        for i in 1...3 { send(&h, phone, "u\(i)", .userInfo) }
        send(&h, phone, "c1", .context)
        send(&h, phone, "c2", .context)  // replaces c1
        send(&h, phone, "k1", .complication)
        send(&h, phone, "k2", .complication)
        h.send(phone, id: "m1", mode: .message)  // never held
        (watch, _) = h.reconnect(.watch)
        #expect(h.state.queuedItemsByMode == Self.listed(&h, [phone, watch], modes: modes))
        #expect(h.state.queuedItemsByMode == [.context: 1, .userInfo: 3, .complication: 2])

        // Delivered but not acked: still held. Acking the first three leaves the rest.
        #expect(h.state.queuedItemsByMode == [.context: 1, .userInfo: 3, .complication: 2])
        h.ack(watch, 3)
        #expect(h.state.queuedItemsByMode == Self.listed(&h, [phone, watch], modes: modes))

        // The watch's own sends while the phone is away, one of them cancelled.
        h.close(phone)
        send(&h, watch, "w1", .userInfo)
        send(&h, watch, "w2", .userInfo)
        h.send(watch, .cancel(Cancel(id: "x1", target: "w1")))
        (phone, _) = h.reconnect(.phone)
        #expect(h.state.queuedItemsByMode == Self.listed(&h, [phone, watch], modes: modes))

        h.restart()
        (phone, _) = h.reconnect(.phone)
        (watch, _) = h.reconnect(.watch)
        #expect(h.state.queuedItemsByMode == Self.listed(&h, [phone, watch], modes: modes))
        h.ack(watch, 1_000_000)
        h.ack(phone, 1_000_000)
        #expect(h.state.queuedItemsByMode == Self.listed(&h, [phone, watch], modes: modes))
        #expect(h.state.queuedItemsByMode == [.context: 0, .userInfo: 0, .complication: 0])
    }
}
