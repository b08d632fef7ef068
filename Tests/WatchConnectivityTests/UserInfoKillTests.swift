import Foundation
import RelayServer
import TestSupport
import Testing
import WatchConnectivity

/// userInfo is durable like WatchConnectivity's: queued transfers survive `kill -9` of the
/// sender right after `transferUserInfo` returned and of the receiver during its delegate call.
@Suite(.timeLimit(.minutes(3)))
struct UserInfoKillTests {
    @Test func userInfoSurvivesBothProcessesBeingKilled() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"))
        let probe = buildDirectory + "/wc-probe"
        func app(_ role: String, handleSeconds: Double = 0) throws -> AppProcess {
            try AppProcess(
                role, executable: probe, relayURL: relay.url, role: role, state: directory.path(role),
                extra: ["WCPROBE_HANDLE_SECONDS": "\(handleSeconds)"])
        }

        // The phone queues three transfers and is killed the moment the last call returned.
        var phone = try app("phone")
        try await phone.line(startingWith: "activated")
        for n in 1...3 { phone.type("userInfo \(n)") }
        try await phone.line(startingWith: "queued 3")
        await phone.kill9()

        // The phone comes back and sends what it had queued; the watch is killed while its
        // delegate handles the first transfer (so it never acknowledged it), then the phone too.
        var watch = try app("watch", handleSeconds: 30)
        try await watch.line(startingWith: "activated")
        phone = try app("phone")
        try await watch.line(startingWith: "userInfo 1")
        await watch.kill9()
        await phone.kill9()

        // Both come back: every transfer arrives, in order, and the phone hears of each.
        phone = try app("phone")
        watch = try app("watch")
        defer {
            phone.terminate()
            watch.terminate()
        }
        try await watch.line(startingWith: "activated")
        for n in 1...3 { try await watch.line(startingWith: "userInfo \(n)") }
        var finished: Set<String> = []
        while finished.count < 3 {
            finished.insert(try await phone.line(startingWith: "finished"))
        }
        #expect(finished == ["finished 1", "finished 2", "finished 3"])
        #expect(!watch.takeLines().contains { $0.hasPrefix("userInfo") })
        await relay.shutdown()
    }
}
