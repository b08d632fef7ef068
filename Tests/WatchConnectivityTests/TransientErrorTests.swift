import RelayClient
import RelayProtocol
import Testing

@testable import WatchConnectivity

/// Which relay session errors make the outbox send the same item again rather than fail it
/// (`didFinish` with an error): the relay away or slow, the two codes PROTOCOL.md §11 says to
/// retry later (they failed a userInfo for good with 7001), and the session's own store failing
/// (after `accepted`, the app heard of a failure while the item was delivered).
struct TransientErrorTests {
    @Test(arguments: [
        RelaySessionError.disconnected, .notActivated, .relay(code: .internal, message: "store"),
        .relay(code: .rateLimited, message: "slow down"), .persistFailed("disk full"),
    ])
    func theItemIsSentAgainAfter(_ error: RelaySessionError) {
        #expect(WCSession.isTransient(error))
    }

    @Test(arguments: [
        RelaySessionError.relay(code: .payloadTooLarge, message: "big"), .relay(code: .quotaExceeded, message: "full"),
        .relay(code: .notPaired, message: "alone"),
    ])
    func theItemFailsAfter(_ error: RelaySessionError) {
        #expect(!WCSession.isTransient(error))
    }
}
