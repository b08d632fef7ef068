import Foundation
import RelayClient
import RelayConsole
import RelayProtocol
import RelayServer
import TestClock
import TestSupport
import Testing

@testable import WatchApp

/// `watch --console`: a headless watch that publishes its widget faces makes them appear in
/// the relay's console state, and a new snapshot makes new faces appear.
@Suite(.timeLimit(.minutes(5)))
struct ConsoleFacesTests {
    static let token = "faces-token"

    @Test func aWatchStartedWithTheConsoleFlagPublishesItsFaces() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path) {
            $0.console = ConsoleConfiguration(token: ConsoleFacesTests.token)
        }
        let port = try #require(URL(string: relay.url)?.port)
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: directory.path("phone")))
        try await phone.activate()
        let clock = ManualClock(Fx.t0)
        let watch = try HeadlessWatch(
            relayURL: relay.url, stateDirectory: directory.path("watch"), deviceName: "Faces Watch", clock: .manual(clock),
            publishesFaces: true)
        try await watch.start()
        try await watch.pair(code: try await phone.beginPairing().code)

        @Sendable func faces() async throws -> [ConsoleJSON.Face] {
            let r = try await PlainHTTP.request(port: port, "/console/api/state?token=\(Self.token)")
            return try JSONDecoder().decode(ConsoleJSON.State.self, from: Data(r.body.utf8)).faces
        }
        try await eventually(10, "the watch's faces in the console") {
            try await faces().contains { $0.watch == "Faces Watch" && $0.svg.contains("<svg") }
        }
        // A snapshot reloads the widgets: the faces the console shows name the new favorite.
        try await phone.updateApplicationContext(Fx.snapshot(1, [Fx.octocat]).payload)
        try await eventually(10, "the new faces in the console") {
            clock.advance(by: .seconds(1))
            await watch.flush()
            return try await faces().first?.svg.contains("octocat") == true
        }
        await watch.stop()
        await phone.close()
        await relay.shutdown()
    }
}
