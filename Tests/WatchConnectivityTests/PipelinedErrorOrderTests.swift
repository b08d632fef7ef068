import Foundation
import Primitives
import TestSupport
import Testing
import WatchConnectivity

/// The errorHandlers of a pipelined burst, when the sender's session closes with some messages
/// accepted (waiting for replies) and some not yet, run in the order sent (they did not).
@Suite(.timeLimit(.minutes(2)))
struct PipelinedErrorOrderTests {
    @Test func closingWithABurstInFlightCallsErrorHandlersInTheOrderSent() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let order = LockedState<[Int]>([])
        let count = 2000
        for n in 0..<count {
            h.phone.sendMessage(["n": n, "hold": true], replyHandler: { _ in }, errorHandler: { _ in order.withLock { $0.append(n) } })
        }
        try await eventually(20, "some received") { watchDelegate.received.withLock { $0.count } >= 20 }
        await h.phone.close()
        try await eventually(20, "every errorHandler") { order.withLock { $0.count } == count }
        let got = order.withLock { $0 }
        let firstInversion = zip(got, got.dropFirst()).first { $0 > $1 }
        #expect(firstInversion == nil, "first inversion \(String(describing: firstInversion)); head \(got.prefix(8))")
        await h.stop()
    }
}
