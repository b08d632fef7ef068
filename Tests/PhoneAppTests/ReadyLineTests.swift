import Foundation
import Primitives
import RelayProtocol
import RelayServer
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

    /// SIGHUP too: the terminal that started it went away (it used to end the relay at once,
    /// status 129, without the 1001 close).
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func serveStopsCleanlyOnASignalRightAfterItsURL(_ number: Int32) async throws {
        for _ in 0..<Self.rounds {
            let relay = try ChildProcess(["--port", "0", "--db", ":memory:", "--log-level", "error"], subcommand: "serve")
            defer { relay.terminate() }
            _ = try await relay.line(startingWith: "ws://127.0.0.1:")
            relay.signal(number)
            #expect(try await relay.exitStatus() == 0)
        }
    }

    /// `nohup watchrelay serve …`: a SIGHUP the parent set to be ignored stays ignored (the relay
    /// must outlive the terminal it was started from), while SIGTERM still stops it cleanly.
    @Test func serveStartedWithSIGHUPIgnoredOutlivesIt() async throws {
        let relay = try ChildProcess(
            [#"trap '' HUP; exec "$0" serve --port 0 --db :memory: --log-level error"#, watchrelayBinary],
            subcommand: "-c", executable: "/bin/sh")
        defer { relay.terminate() }
        _ = try await relay.line(startingWith: "ws://127.0.0.1:")
        relay.signal(SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        #expect(relay.process.isRunning, "SIGHUP ended a relay started with it ignored")
        relay.signal(SIGTERM)
        #expect(try await relay.exitStatus() == 0)
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

/// The `ready` line of a device whose relay is not there yet.
@Suite(.timeLimit(.minutes(2)))
struct ReadyWithoutARelayTests {
    /// `watch --machine` with no relay behind its URL: `ready` says `activated: false`, an
    /// `error` event says why, and the watch keeps trying: it activates once a relay listens
    /// there. (It used to exit 1 with nothing on stdout, where the phone printed `ready`.)
    @Test func machineWatchWithoutARelaySaysSoAndConnectsWhenOneStarts() async throws {
        // Held until the relay starts: a free port given back at once was taken meanwhile by
        // another suite's server (the relay's start then failed with EADDRINUSE).
        let reservation = try LoopbackPort.Reservation()
        let port = reservation.port
        let state = TemporaryDirectory()
        let watch = try ChildProcess(
            ["--machine", "--relay", "ws://127.0.0.1:\(port)/v1", "--state", state.path, "--log-level", "error"],
            subcommand: "watch", environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
        defer { watch.terminate() }
        let ready = try await watch.line(startingWith: "{")
        #expect(ready.contains(#""type":"ready""#) && ready.contains(#""activated":false"#))
        let error = try JSONParser.parse(Array(try await watch.line(startingWith: "{").utf8))
        #expect(error["event"] == "error" && error["message"]?.stringValue?.hasPrefix("relay: ") == true, "\(error)")
        // The source and code the phone's error events carry (it had only the message).
        #expect(error["source"] == "relay" && error["code"] == "timeout", "\(error)")

        var configuration = RelayServerConfiguration()
        configuration.port = port
        configuration.databasePath = state.path + "/relay.db"
        reservation.release()
        let relay = try await RelayServer.start(configuration, log: .silent)
        #expect(try await watch.line(startingWith: #"{"event":"activated""#).contains(#""paired":false"#))
        watch.type("quit")
        #expect(try await watch.exitStatus() == 0)
        await relay.shutdown()
    }

    /// The same in human mode: the watch keeps running (it used to exit 1 after the request
    /// timeout, where the phone kept running) and prints `activated` once a relay listens.
    @Test func humanWatchWithoutARelayKeepsTryingAndConnectsWhenOneStarts() async throws {
        let reservation = try LoopbackPort.Reservation()
        let port = reservation.port
        let state = TemporaryDirectory()
        let watch = try ChildProcess(
            ["--relay", "ws://127.0.0.1:\(port)/v1", "--state", state.path, "--log-level", "error"],
            subcommand: "watch", environment: ["WATCHRELAY_REQUEST_TIMEOUT_S": "1"])
        defer { watch.terminate() }
        // Past the request timeout (1 s) the watch still runs and answers a command.
        try await Task.sleep(for: .seconds(2))
        #expect(watch.process.isRunning)
        var configuration = RelayServerConfiguration()
        configuration.port = port
        configuration.databasePath = state.path + "/relay.db"
        reservation.release()
        let relay = try await RelayServer.start(configuration, log: .silent)
        #expect(try await watch.line(startingWith: "activated").contains("paired: false"))
        watch.type("quit")
        #expect(try await watch.exitStatus() == 0)
        await relay.shutdown()
    }
}
