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
        let rig = try await ProbeRig.start()
        let relay = rig.relay
        func app(_ role: String, handleSeconds: Double = 0) throws -> AppProcess {
            try rig.app(role, handleSeconds: handleSeconds)
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

    @Test func aFileSurvivesItsSenderBeingKilledTwice() async throws {
        let rig = try await ProbeRig.start()
        let (relay, directory) = (rig.relay, rig.directory)
        func app(_ role: String, handleSeconds: Double = 0) throws -> AppProcess {
            try rig.app(role, handleSeconds: handleSeconds)
        }
        var generator = SeededGenerator(seed: 14)
        let data = Data((0..<400_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let path = directory.path("photo.jpg")
        try data.write(to: URL(fileURLWithPath: path))
        let fnv = data.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }

        var phone = try app("phone")
        try await phone.line(startingWith: "activated")
        phone.type("file \(path)")
        try await phone.line(startingWith: "queued file")
        await phone.kill9()
        try FileManager.default.removeItem(atPath: path)  // the transfer has its own copy
        phone = try app("phone")
        try await phone.line(startingWith: "activated")
        await phone.kill9()

        phone = try app("phone")
        let watch = try app("watch")
        defer {
            phone.terminate()
            watch.terminate()
        }
        #expect(try await watch.line(startingWith: "file ") == "file photo.jpg 400000 \(fnv)")
        #expect(try await phone.line(startingWith: "file") == "fileFinished 400000/400000")
        await relay.shutdown()
    }
}

/// A relay, two paired state directories, and `wc-probe` processes on them.
private struct ProbeRig {
    let relay: RelayServer
    let directory: TemporaryDirectory

    static func start() async throws -> ProbeRig {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        _ = try await WatchRelayPairing.pair(
            relayURL: relay.url, phoneState: directory.path("phone"), watchState: directory.path("watch"))
        return ProbeRig(relay: relay, directory: directory)
    }

    /// A `wc-probe` playing `role`; its delegate takes `handleSeconds` per userInfo.
    func app(_ role: String, handleSeconds: Double = 0) throws -> AppProcess {
        try AppProcess(
            role, executable: buildDirectory + "/wc-probe", relayURL: relay.url, role: role,
            state: directory.path(role), extra: ["WCPROBE_HANDLE_SECONDS": "\(handleSeconds)"])
    }
}
