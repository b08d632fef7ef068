import Foundation
import RelayClient
import TestSupport
import Testing

@testable import WatchConnectivity

/// A context its sender sends again with the same transfer id (killed between the relay's
/// `accepted` and noting it, it sends it again at its next launch) reaches the counterpart's
/// delegate once, as a userInfo does (from a review: `didReceiveApplicationContext` ran twice).
@Suite(.timeLimit(.minutes(1)))
struct RepeatedContextTests {
    @Test func aContextSentAgainWithItsTransferIDIsHandledOnce() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.watch, h.watchDelegate)
        // The phone's app, at the session level: what its outbox sends for updateApplicationContext.
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: h.relay.url, role: .phone, deviceName: "Phone", stateDirectory: h.directory.path("phone"),
                requestTimeoutSeconds: 10 * timeoutScale))
        try await phone.activate()
        let first = try PropertyListPayload.encode(["n": 1], channel: .context, extra: ["tid": .string("t-1")])
        try await phone.updateApplicationContext(first)
        try await eventually { h.watchDelegate.details("context").count == 1 }
        try await phone.updateApplicationContext(first)  // the same transfer again
        let next = try PropertyListPayload.encode(["n": 2], channel: .context, extra: ["tid": .string("t-2")])
        try await phone.updateApplicationContext(next)
        // Contexts are handed over in order: once the next one is here, a repeat would be too.
        try await eventually { h.watchDelegate.details("context").contains("2") }
        #expect(h.watchDelegate.details("context") == ["1", "2"])
        await phone.close()
        await h.stop()
    }
}
