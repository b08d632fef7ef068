import Foundation
import Primitives
import RelayClient
import RelayProtocol
import SQLite
import TestSupport
import Testing

/// The `uninstall` commands of `watchrelay watch` and `watchrelay phone` (PROTOCOL.md §7.1), as
/// real processes over a real relay: the app is uninstalled, the counterpart sees it, and the
/// process exits by itself; started again on the same state, the app is installed again.
@Suite(.timeLimit(.minutes(3)))
struct AppUninstallCommandTests {
    /// The watch's `uninstall`: the phone sees the watch app gone, the watch's own store
    /// (favorites, settings) is emptied as watchOS deletes an uninstalled app's data, and the
    /// process exits 0. Started again it is installed again, and shows the last list the phone
    /// sent (the session kept it) although the phone sends nothing new.
    @Test func theWatchUninstallsItsAppExitsAndShowsTheLastListWhenInstalledAgain() async throws {
        let (relay, state, phone, args, watch) = try await Self.pairedWatch()
        defer { watch.terminate() }
        try await NewUserTests.push(phone, 1, ["octocat"])
        _ = try await watch.line(startingWith: #"{"event":"snapshot""#)
        watch.type("select octocat")
        _ = try await watch.line(startingWith: #"{"command":"select""#)

        watch.type("uninstall")
        let answer = try await watch.line(startingWith: #"{"command":"uninstall""#)
        #expect(answer.contains(#""ok":true"#) && answer.contains(#""uninstalled":true"#), "\(answer)")
        #expect(answer.contains(#""relayTold":true"#), "\(answer)")
        #expect(try await watch.exitStatus() == 0)
        try await eventually(10, "the phone to see the watch app uninstalled") {
            await !phone.isPeerAppInstalled
        }
        let db = try SQLiteDatabase(path: state.path("watch") + "/watch.db")
        let rows = try db.query("SELECT (SELECT COUNT(*) FROM snapshot) + (SELECT COUNT(*) FROM settings)") { $0.int64(0) }
        #expect(rows == [0], "the uninstalled app's data is gone")

        let again = try ChildProcess(args, subcommand: "watch")
        defer { again.terminate() }
        let shown = try await again.line(startingWith: #"{"event":"snapshot""#)
        #expect(shown.contains(#""favorites":["octocat"]"#), "\(shown)")
        try await eventually(10, "the phone to see the watch app installed again") {
            await phone.isPeerAppInstalled
        }
        again.closeInput()
        #expect(try await again.exitStatus() == 0)
        await phone.close()
        await relay.stop()
    }

    /// An uninstall while the relay is away cannot be said: the watch still uninstalls (its
    /// store emptied, exit 0) but its answer says `relayTold` false, so a script knows the phone
    /// still sees the app installed. It answered as if the relay had been told.
    @Test func aWatchUninstalledWhileTheRelayIsAwaySaysTheRelayWasNotTold() async throws {
        let (relay, _, phone, _, watch) = try await Self.pairedWatch()
        defer { watch.terminate() }
        await phone.close()
        await relay.stop()
        _ = try await watch.line(startingWith: #"{"event":"disconnected""#)

        watch.type("uninstall")
        let answer = try await watch.line(startingWith: #"{"command":"uninstall""#)
        #expect(answer.contains(#""ok":true"#) && answer.contains(#""relayTold":false"#), "\(answer)")
        #expect(try await watch.exitStatus() == 0)
    }

    /// The phone's `uninstall`: the phone exits 0, the watch says the iPhone app is gone, and a
    /// delete fails with `companion_app_not_installed` (an error event names it) without staying
    /// pending. The phone started again is installed again: the watch says so, and the same
    /// delete completes.
    @Test func thePhoneUninstallsItsAppAndTheWatchsDeleteFailsUntilItRunsAgain() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        let phoneArgs = ["--machine", "--relay", relay.url, "--state", state.path("phone"), "--log-level", "error"]
        let phone = try ChildProcess(phoneArgs + ["--pair"])
        defer { phone.terminate() }
        let pairing = try JSONParser.parse(Array(try await phone.line(startingWith: #"{"code":"#).utf8))
        let code = try #require(pairing["code"]?.stringValue)
        let watch = try ChildProcess(
            ["--machine", "--relay", relay.url, "--state", state.path("watch"), "--pair", code, "--log-level", "error"],
            subcommand: "watch")
        defer { watch.terminate() }
        _ = try await watch.line(startingWith: #"{"command":"pair""#)
        phone.type("add octocat")
        _ = try await phone.line(startingWith: #"{"changed":true,"command":"add""#)
        _ = try await watch.line(startingWith: #"{"event":"snapshot","favorites":["octocat"]"#)

        phone.type("uninstall")
        let answer = try await phone.line(startingWith: #"{"command":"uninstall""#)
        #expect(answer.contains(#""ok":true"#) && answer.contains(#""uninstalled":true"#), "\(answer)")
        #expect(answer.contains(#""relayTold":true"#), "\(answer)")
        #expect(try await phone.exitStatus() == 0)
        _ = try await watch.line(startingWith: #"{"event":"companionAppInstalled","installed":false"#)
        watch.type("delete octocat")
        // Members in key order: code, event, message, source.
        let said = try await watch.line(startingWith: #"{"code":"companion_app_not_installed","event":"error""#)
        #expect(said.contains(#""source":"relay""#) && said.contains("octocat"), "\(said)")
        let refused = try await watch.line(startingWith: #"{"command":"delete""#)
        #expect(refused.contains(#""code":"companion_app_not_installed""#) && refused.contains(#""ok":false"#), "\(refused)")
        watch.type("status")
        let status = try await watch.line(startingWith: #"{"command":"status""#)
        #expect(status.contains(#""favorites":["octocat"]"#) && status.contains(#""pendingDeletes":[]"#), "\(status)")

        let again = try ChildProcess(phoneArgs)
        defer { again.terminate() }
        _ = try await watch.line(startingWith: #"{"event":"companionAppInstalled","installed":true"#)
        watch.type("delete octocat")
        _ = try await watch.line(startingWith: #"{"event":"deleteCompleted","login":"octocat""#)
        again.closeInput()
        watch.closeInput()
        #expect(try await again.exitStatus() == 0)
        #expect(try await watch.exitStatus() == 0)
        await relay.stop()
    }

    /// A relay, a phone session and a `watch --machine` child paired with it (the phone has seen
    /// the pair), and the watch's arguments without `--pair`.
    private static func pairedWatch() async throws -> (TestRelay, TemporaryDirectory, RelaySession, [String], ChildProcess) {
        let (relay, state, phone, code) = try await NewUserTests.phoneWaitingToPair()
        let args = ["--machine", "--relay", relay.url, "--state", state.path("watch"), "--log-level", "error"]
        let watch = try ChildProcess(args + ["--pair", code.code], subcommand: "watch")
        _ = try await watch.line(startingWith: #"{"command":"pair""#)
        // The watch's answer can come before the phone's `paired`: its push would be refused.
        try await eventually(10, "the phone to see the pair") { await phone.isPaired }
        return (relay, state, phone, args, watch)
    }
}
