import Foundation
import Primitives
import TestSupport
import Testing

@testable import WatchConnectivity

/// A delegate that implements only the reply variants of the message methods.
final class ReplyOnlyDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    let activated = LockedState(false)
    let received = LockedState<[String]>([])
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        activated.withLock { $0 = true }
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        received.withLock { $0.append("\(message["n"] ?? "")") }
        replyHandler([:])
    }
}

/// A message sent without a reply handler to a delegate that implements only the reply
/// variant is dropped, as on a device, where it is a common "my messages never arrive": the
/// developer is told once per method on standard error (it was dropped without a word).
@Suite(.timeLimit(.minutes(3)))
struct MissingDelegateMethodTests {
    @Test func aPlainMessageToAReplyOnlyDelegateIsDroppedAndSaidOnce() async throws {
        let replyOnly = ReplyOnlyDelegate()
        let h = try await WCHarness.start(phoneApp: replyOnly, activated: { replyOnly.activated.withLock { $0 } })
        try await eventually { h.watch.isReachable }
        h.watch.sendMessage(["n": 1], replyHandler: nil)
        h.watch.sendMessage(["n": 2], replyHandler: nil)
        h.watch.sendMessageData(Data([1]), replyHandler: nil)
        let replied = LockedState(false)
        h.watch.sendMessage(["n": 3], replyHandler: { _ in replied.withLock { $0 = true } })
        // Messages arrive in order: once 3 is answered, 1, 2 and the data were handled.
        try await eventually { replied.withLock { $0 } }
        #expect(replyOnly.received.withLock { $0 } == ["3"])
        #expect(
            h.phone.state.withLock { $0.warnedPlainVariantMissing }
                == ["session(_:didReceiveMessage:)", "session(_:didReceiveMessageData:)"])
        await h.stop()
    }
}
