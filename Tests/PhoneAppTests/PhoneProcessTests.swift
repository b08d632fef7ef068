import Foundation
import PhoneApp
import RelayProtocol
import TestSupport
import Testing

/// `watchrelay phone` as a real process: kill -9 loses neither the favorites nor the pairing.
@Suite(.timeLimit(.minutes(4)))
struct PhoneProcessTests {
    @Test func favoritesAndThePairingSurviveSIGKILL() async throws {
        let relay = try await TestRelay.start()
        let github = try TestGitHub.start()
        let state = TemporaryDirectory()
        let arguments = [
            "--relay", relay.url, "--state", state.path, "--github", github.baseURL.absoluteString, "--log-level", "error",
        ]
        let first = try ChildProcess(arguments + ["--pair"])
        defer { first.terminate() }
        #expect(try await first.line(startingWith: "ok start").contains("paired=false"))
        let code = String(try await first.line(startingWith: "pairing code: ").dropFirst("pairing code: ".count))
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        let watch = try await RawWatch.pair(relay: relay.url, code: code)
        let empty = try await watch.nextSnapshot()
        #expect(empty.users.isEmpty)

        first.type("add octocat")
        #expect(try await first.line(startingWith: "ok add").contains("sync=pushed"))
        first.type("add mattt")
        #expect(try await first.line(startingWith: "ok add").contains("sync=pushed"))
        _ = try await watch.nextSnapshot()
        let before = try await watch.nextSnapshot()
        #expect(before.users.map(\.login) == ["octocat", "mattt"])
        try await first.kill9()

        // Same state, no --pair: it comes back paired, with the list intact, and no new code.
        let second = try ChildProcess(arguments)
        defer { second.terminate() }
        let start = try await second.line(startingWith: "ok start")
        #expect(start.contains("activated=true") && start.contains("paired=true") && start.contains("favorites=2"))
        second.type("list --json")
        let listing = try await second.line(startingWith: "[")
        let parsed = try JSONParser.parse(Array(listing.utf8))
        #expect(parsed.arrayValue?.compactMap { $0["login"]?.stringValue } == ["octocat", "mattt"])

        // Still the same pair: a change reaches the same watch, with the revision going on.
        second.type("add torvalds")
        #expect(try await second.line(startingWith: "ok add").contains("sync=pushed"))
        let after = try await watch.nextSnapshot()
        #expect(after.users.map(\.login) == ["octocat", "mattt", "torvalds"])
        #expect(after.revision > before.revision)
        second.type("quit")
        #expect(try await second.exitStatus() == 0)

        // `--watch default` names that same watch (the one paired without an id, at the top of
        // the state), as `pair` and `switch-watch` do; it was a new, unpaired DIR/watches/default.
        let third = try ChildProcess(arguments + ["--watch", "default"])
        defer { third.terminate() }
        #expect(try await third.line(startingWith: "ok start").contains("paired=true"))
        third.type("quit")
        #expect(try await third.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: state.path + "/watches/default"))

        await watch.close()
        await relay.stop()
        await github.stop()
    }

    @Test func subcommandsEditTheStateOfARunningCompanion() async throws {
        let relay = try await TestRelay.start()
        let state = TemporaryDirectory()
        // The embedded default GitHub: the fixture server started by the companion itself.
        let phone = try ChildProcess([
            "--relay", relay.url, "--state", state.path, "--fixtures", fixturesDirectory, "--pair", "--log-level", "error",
        ])
        defer { phone.terminate() }
        #expect(try await phone.line(startingWith: "github: http://127.0.0.1:") != "")
        let code = String(try await phone.line(startingWith: "pairing code: ").dropFirst("pairing code: ".count))
        let watch = try await RawWatch.pair(relay: relay.url, code: code)
        _ = try await watch.nextSnapshot()

        #expect(try await runSubcommand(["add", "octocat", "--state", state.path]) == "ok add login=octocat added=true\n")
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["octocat"])
        #expect(try await runSubcommand(["add", "ghost", "--state", state.path]).hasPrefix("ok add"))
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["octocat", "ghost"])
        #expect(try await runSubcommand(["move", "ghost", "0", "--state", state.path]).hasPrefix("ok move"))
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["ghost", "octocat"])
        // An index past the end is clamped, and the answer says where the favorite went.
        #expect(try await runSubcommand(["move", "ghost", "99", "--state", state.path]).hasPrefix("ok move login=ghost index=1 moved=true"))
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["octocat", "ghost"])
        #expect(try await runSubcommand(["move", "ghost", "0", "--state", state.path]).hasPrefix("ok move login=ghost index=0 moved=true"))
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["ghost", "octocat"])
        #expect(try await runSubcommand(["remove", "octocat", "--state", state.path]).hasPrefix("ok remove"))
        #expect(try await watch.nextSnapshot().users.map(\.login) == ["ghost"])
        let json = try await runSubcommand(["list", "--json", "--state", state.path])
        #expect(try JSONParser.parse(Array(json.utf8)).arrayValue?.count == 1)

        #expect(try await runSubcommand(["refresh", "--state", state.path]) == "ok refresh requested=true\n")
        phone.type("status")
        #expect(try await phone.line(startingWith: "ok status").contains("favorites=1"))

        phone.signal(SIGTERM)
        #expect(try await phone.exitStatus() == 0)
        await watch.close()
        await relay.stop()
    }

    /// Runs `watchrelay phone <args>` to completion; expects exit 0 and returns its stdout.
    private func runSubcommand(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let (status, output) = try await ChildProcess.run(args)
        #expect(status == 0, sourceLocation: sourceLocation)
        return output
    }
}
