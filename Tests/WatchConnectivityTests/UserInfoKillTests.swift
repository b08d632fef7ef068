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
        let fnv = fnv1a(data)

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

extension UserInfoKillTests {
    /// Three recordings (1, 3 and 2 MiB) from a watch app to its phone app: once the first one's
    /// `didFinish` came, the phone app is killed while the second one's chunks come in, then the
    /// watch app, and the relay restarts while both are down. Once both run again, every
    /// file has reached the phone exactly once, byte for byte (FNV-1a), in the order sent, and
    /// the watch has heard `didFinish` exactly once for each (Apple: "Will be called on next
    /// launch if the sender was not running when the transfer finished").
    @Test func filesSurviveTheSenderTheReceiverAndTheRelayGoingDownMidTransfer() async throws {
        let rig = try await ProbeRig.start()
        var files: [(path: String, line: String)] = []
        for (n, size) in [1 << 20, 3 << 20, 2 << 20].enumerated() {
            let data = WorkoutRecorder.samples(size, seed: UInt64(n + 1))
            let path = rig.directory.path("rec-\(n).workout")
            try data.write(to: URL(fileURLWithPath: path))
            files.append((path, "file rec-\(n).workout \(size) \(fnv1a(data))"))
        }
        var watch = try rig.app("watch")
        var phone = try rig.app("phone")
        try await watch.line(startingWith: "activated")
        for file in files { watch.type("file \(file.path)") }

        var received = [try await phone.line(startingWith: "file ", within: 40)]
        // The watch hears the first one finished (the phone's ack can follow the next chunks'
        // storing: killed before it went, the phone acks it at its next launch); no line dropped,
        // as the first file can reach the phone before the last one is queued.
        var said = try await watch.lines(through: "fileFinished", within: 40)
        while said.filter({ $0 == "queued file" }).count < 3 { said += try await watch.lines(through: "queued file") }
        let partial = rig.directory.path("phone/WatchConnectivity/Partial")
        // Aimed at the middle of the second file; if this look misses it (the file came whole
        // between two looks on a loaded machine, and its parts went), the kill comes later, and
        // everything below must hold all the same: a bounded wait, not a condition that may
        // never come true (a `make test` run waited out the suite's time limit here).
        try? await eventually(10, "part of the second file stored") {
            let parts = (try? FileManager.default.contentsOfDirectory(atPath: partial)) ?? []
            return parts.contains { ((try? FileManager.default.contentsOfDirectory(atPath: partial + "/" + $0)) ?? []).count >= 2 }
        }
        await phone.kill9()
        received += phone.takeLines().filter { $0.hasPrefix("file ") }
        await watch.kill9()
        var finished = (said + watch.takeLines()).filter { $0.hasPrefix("file") }
        await rig.relay.shutdown()
        let relay = try await RelayServer.startForTest(in: rig.directory.path) { $0.port = rig.relay.port }

        phone = try rig.app("phone")
        watch = try rig.app("watch")
        defer {
            phone.terminate()
            watch.terminate()
        }
        try await watch.line(startingWith: "activated")
        watch.type("userInfo 9")  // after the files: it comes after them
        received += try await phone.lines(through: "userInfo 9", within: 50).filter { $0.hasPrefix("file ") }
        finished += try await watch.lines(through: "finished 9", within: 60).filter { $0.hasPrefix("file") }
        #expect(received == files.map(\.line))
        #expect(finished.sorted() == ["fileFinished 1048576/1048576", "fileFinished 2097152/2097152", "fileFinished 3145728/3145728"])
        await relay.shutdown()
    }
}

/// FNV-1a (64-bit) of `data`, as `wc-probe` prints it for a file it received.
private func fnv1a(_ data: Data) -> UInt64 {
    data.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
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
