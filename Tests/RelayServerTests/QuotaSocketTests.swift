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

    /// Behind a proxy that is trusted (`serve --trusted-proxy`), the last `X-Forwarded-For`
    /// address is the client's: two clients of one proxy count apart, one client twice is over
    /// the quota. From a peer that is not trusted the header is ignored. (Behind the runbook's
    /// HAProxy every client had the proxy's address: a quota of 1000 for them all.)
    @Test func theAddressQuotaCountsTheClientsBehindATrustedProxy() async throws {
        for trusted in [true, false] {
            let relay = try await TestRelay.start {
                $0.relay.maxConnectionsPerAddress = 1
                if trusted { $0.trustedProxies = ["127.0.0.1"] }
            }
            let port = relay.server.port
            // What the client wrote, then what the proxy appended: only the last one counts, also
            // after a long list the client wrote itself (over 1 KiB, which once hid it).
            let a = try RawWebSocket(port: port)
            let written = String(repeating: "10.9.9.9, ", count: 150)
            try await a.upgrade(port: port, headers: ["X-Forwarded-For: \(written)203.0.113.7"])
            try a.sendText(FrameCodec.encode(.hello(Hello(id: "h-a", role: .phone, deviceName: "A"))))
            let welcome = try await a.readFrame().map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
            #expect(welcome.contains(#""type":"welcome""#), "\(welcome)")
            let b = try RawWebSocket(port: port)
            try await b.upgrade(port: port, headers: ["X-Forwarded-For: 203.0.113.8"])
            try b.sendText(FrameCodec.encode(.hello(Hello(id: "h-b", role: .phone, deviceName: "B"))))
            let answer = try await b.readFrame().map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
            if trusted {
                #expect(answer.contains(#""type":"welcome""#), "another client behind the proxy: \(answer)")
                let again = try RawWebSocket(port: port)
                try await again.upgrade(port: port, headers: ["X-Forwarded-For: 203.0.113.7"])
                let refused = try await again.readFrame().map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
                #expect(refused.contains("quota_exceeded"), "the same client again: \(refused)")
            } else {
                #expect(answer.contains("quota_exceeded"), "the header of an untrusted peer is ignored: \(answer)")
            }
            await relay.stop()
        }
    }
}
