import RelayProtocol
import Testing

@testable import RelayServer

/// ``MetricsBatch`` and ``RelayMetrics/record(_:)``: what one engine step counts reaches the
/// `/metrics` text, summed over steps, and a batch starts each step empty.
struct RelayMetricsTests {
    let deliver = RelayFrame.deliver(
        Deliver(
            seq: 1, mode: .message, id: "m1", from: .phone, sentAt: Timestamp(millisecondsSinceEpoch: 0),
            payload: Payload(kind: "ping")))
    let accepted = RelayFrame.accepted(Accepted(re: "m1"))

    @Test func stepsAreSummedByTypeAndMode() {
        let metrics = RelayMetrics()
        var batch = MetricsBatch()
        #expect(batch.isEmpty)
        batch.countSent(deliver)
        batch.countSent(deliver)
        batch.countSent(accepted)
        batch.countSent(.error(ErrorFrame(re: "m2", code: .notReachable, message: "x")))
        batch.errors[.notReachable, default: 0] += 1
        batch.addLatency(0.0004, mode: .message)
        batch.addLatency(0.003, mode: .userInfo)
        #expect(!batch.isEmpty)
        metrics.record(batch)
        batch.removeAll()
        #expect(batch.isEmpty)

        batch.countSent(deliver)
        batch.addLatency(0.002, mode: .message)
        metrics.record(batch)

        let text = metrics.render()
        #expect(text.contains(#"watchrelay_frames_sent_total{type="deliver"} 3"#), "\(text)")
        #expect(text.contains(#"watchrelay_frames_sent_total{type="accepted"} 1"#))
        #expect(text.contains(#"watchrelay_frames_sent_total{type="error"} 1"#))
        #expect(text.contains(#"watchrelay_errors_total{code="not_reachable"} 1"#))
        // message: 0.4 ms and 2 ms; the 1 ms bucket holds one, the 2.5 ms bucket both.
        #expect(text.contains(#"watchrelay_delivery_latency_seconds_bucket{mode="message",le="0.001"} 1"#))
        #expect(text.contains(#"watchrelay_delivery_latency_seconds_bucket{mode="message",le="0.0025"} 2"#))
        #expect(text.contains(#"watchrelay_delivery_latency_seconds_count{mode="message"} 2"#))
        #expect(text.contains(#"watchrelay_delivery_latency_seconds_count{mode="userInfo"} 1"#))
        // A mode with no delivery has no series, as before any was counted.
        #expect(!text.contains(#"watchrelay_delivery_latency_seconds_count{mode="context"}"#))
        #expect(!text.contains(#"watchrelay_delivery_latency_seconds_count{mode="complication"}"#))
    }

    @Test func aBatchWithOnlyAnErrorCountIsNotEmpty() {
        var batch = MetricsBatch()
        batch.errors[.badFrame, default: 0] += 1
        #expect(!batch.isEmpty)
    }
}
