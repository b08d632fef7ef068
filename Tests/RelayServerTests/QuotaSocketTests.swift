import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing

/// Quotas over real sockets and a real store (PROTOCOL.md §9.1).
@Suite(.timeLimit(.minutes(1)))
struct QuotaSocketTests {
    @Test func aSendOverTheDirectionQuotaGetsQuotaExceededAndIsNotStored() async throws {
        let relay = try await TestRelay.start { $0.relay.maxQueuedItemsPerDirection = 2 }
        let (phone, watch, _, _) = try await pairDevices(relay)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer: the watch left

        for n in 1...3 { phone.send(userInfo("u-\(n)", n)) }
        for n in 1...2 {
            guard case .accepted(let a) = try await phone.next() else { throw TestFailure("expected accepted") }
            #expect(a.re == "u-\(n)")
        }
        guard case .error(let e) = try await phone.next() else { throw TestFailure("expected an error") }
        #expect(e.code == .quotaExceeded && e.re == "u-3" && e.wcCode == 7015)
        #expect(await relay.server.stats.queued == 2, "nothing of u-3 is held")
        await relay.stop()
    }

    @Test func aConnectionOverTheAddressQuotaIsClosedWith1008() async throws {
        let relay = try await TestRelay.start { $0.relay.maxConnectionsPerAddress = 1 }
        let first = try await relay.device(.phone)
        try await first.hello()
        let second = try await relay.device(.phone)
        guard case .error(let e) = try await second.next() else { throw TestFailure("expected an error") }
        #expect(e.code == .quotaExceeded && e.re == nil, "\(e.message)")
        #expect(try await second.closed() == 1008)
        await relay.stop()
    }
}
