import Foundation
import TestSupport
import Testing

/// A script starts a long-running command, waits for the line that says it is ready, and sends
/// SIGTERM at once. The command must hear it and shut down cleanly (exit 0). It used to print
/// that line before its signal handlers existed: a SIGTERM just after it either killed the
/// process with the default action (status 15, no clean shutdown) or arrived between `SIG_IGN`
/// and the dispatch source's registration and was dropped (the process ran on).
@Suite(.timeLimit(.minutes(4)))
struct SignalAtReadyTests {
    static let rounds = 4

    @Test func serveStopsOnSIGTERMRightAfterItsURL() async throws {
        for _ in 0..<Self.rounds {
            let relay = try ChildProcess(["--port", "0", "--db", ":memory:", "--log-level", "error"], subcommand: "serve")
            defer { relay.terminate() }
            _ = try await relay.line(startingWith: "ws://127.0.0.1:")
            relay.signal(SIGTERM)
            #expect(try await relay.exitStatus() == 0)
        }
    }

    @Test func githubStubStopsOnSIGTERMRightAfterItsURL() async throws {
        for _ in 0..<Self.rounds {
            let stub = try ChildProcess(["--port", "0", "--log-level", "error"], subcommand: "github-stub")
            defer { stub.terminate() }
            _ = try await stub.line(startingWith: "http://127.0.0.1:")
            stub.signal(SIGTERM)
            #expect(try await stub.exitStatus() == 0)
        }
    }

    @Test(arguments: ["phone", "watch"])
    func machineModeStopsOnSIGTERMRightAfterReady(role: String) async throws {
        let relay = try await TestRelay.start()
        for _ in 0..<Self.rounds {
            let state = TemporaryDirectory()
            let child = try ChildProcess(
                ["--machine", "--relay", relay.url, "--state", state.path, "--log-level", "error"], subcommand: role)
            defer { child.terminate() }
            let ready = try await child.line(startingWith: "{")
            #expect(ready.contains(#""type":"ready""#))
            child.signal(SIGTERM)
            #expect(try await child.exitStatus() == 0)
        }
        await relay.stop()
    }

    @Test func interactivePhoneStopsOnSIGTERMRightAfterItsFirstLine() async throws {
        let relay = try await TestRelay.start()
        for _ in 0..<Self.rounds {
            let state = TemporaryDirectory()
            let phone = try ChildProcess(["--relay", relay.url, "--state", state.path, "--log-level", "error"])
            defer { phone.terminate() }
            _ = try await phone.line(startingWith: "github: ")
            phone.signal(SIGTERM)
            #expect(try await phone.exitStatus() == 0)
        }
        await relay.stop()
    }
}
