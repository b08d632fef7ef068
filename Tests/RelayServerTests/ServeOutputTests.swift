import Foundation
import Primitives
import RelayConsole
import TestSupport
import Testing

@testable import RelayServer

/// What `watchrelay serve` writes for its operator: the URLs it prints, and its log on a
/// standard error nobody reads any more.
@Suite struct ServeOutputTests {
    /// `--host ::1`: the URL line and the console line are what clients and browsers can use,
    /// with the IPv6 address in brackets (RFC 3986 §3.2.2), not `ws://::1:8765/v1`.
    @Test func anIPv6InterfaceIsBracketedInThePrintedURLs() {
        var configuration = RelayServerConfiguration()
        configuration.host = "::1"
        #expect(configuration.url(port: 8765) == "ws://[::1]:8765/v1")
        configuration.host = "127.0.0.1"
        #expect(configuration.url(port: 8765) == "ws://127.0.0.1:8765/v1")
        let console = ConsoleConfiguration(token: "t")
        #expect(console.url(host: "::1", port: 8765, tls: true) == "https://[::1]:8765/console?token=t")
        #expect(console.url(host: "0.0.0.0", port: 8765, tls: false) == "http://0.0.0.0:8765/console?token=t")
    }

    /// The log carries text from peers (the phone logs `paired peer=<the watch's name>`, the
    /// logins the watch deletes and asks repos for): a control character or a bidi override in a
    /// value is written as an escape, as `PhoneConsole` writes its answers, never raw: an escape
    /// sequence in a watch's name reached the terminal through the phone's standard error.
    @Test func peerTextInALogLineIsEscaped() {
        let lines = LockedState<[String]>([])
        let log = Logger(level: .info) { line in lines.withLock { $0.append(line) } }
        log.info("paired", ("peer", "Apple\u{1B}[2JWatch"), ("login", "a\r\nb\u{7}"), ("x", "y\u{202E}z"), ("plain", "ok"))
        let line = lines.withLock { $0.first } ?? ""
        #expect(line.hasSuffix(#"msg=paired peer="Apple\u001b[2JWatch" login="a\r\nb\u0007" x="y\u202ez" plain=ok"#), "\(line)")
    }

    /// A relay whose standard error is a pipe whose reader is gone (a log shipper that died,
    /// `serve 2>&1 | head`) still shuts down cleanly on SIGTERM, exit 0: a log line it cannot
    /// write is lost, not a crash (Foundation's `FileHandle.write(_:)` traps on EPIPE).
    @Test(.timeLimit(.minutes(2))) func aLogReaderThatWentAwayDoesNotCrashTheRelay() async throws {
        let directory = TemporaryDirectory()
        let (p, out, err, stdin) = try Self.serve(directory)
        let output = ChildOutput(reading: out.fileHandleForReading)
        let url = try await output.line(startingWith: "", from: "the relay", within: 60)
        #expect(url.hasPrefix("ws://"))
        try err.fileHandleForReading.close()
        kill(p.processIdentifier, SIGTERM)  // the relay logs "relay shutting down" into the closed pipe
        await p.ended()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "status \(p.terminationStatus)")
        withExtendedLifetime(stdin) {}
    }

    /// Standard output whose reader is gone before the URL line: the relay ends as a Unix tool
    /// does, by SIGPIPE and quietly, not by the trap in `FileHandle.write(_:)` (SIGILL and a
    /// backtrace on stderr). The same line printer serves `phone`/`watch --machine | head -5`.
    @Test(.timeLimit(.minutes(2))) func aStdoutReaderThatWentAwayEndsItBySIGPIPE() async throws {
        let directory = TemporaryDirectory()
        let (p, _, err, stdin) = try Self.serve(directory, closingStdout: true)
        let stderr = ChildOutput(reading: err.fileHandleForReading)
        await p.ended()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGPIPE, "status \(p.terminationStatus)")
        try await eventually { stderr.isClosed }
        #expect(!stderr.takeAll().contains { $0.contains("Fatal error") || $0.contains("backtrace") })
        withExtendedLifetime(stdin) {}
    }

    /// `--host localhost` binds what the name resolves to (lws takes only addresses and
    /// interface names: it failed with "iface localhost … DOESN'T EXIST"), and `--host lo` the
    /// interface's address (the URL said `ws://lo:…`); a name nothing resolves is a usage error
    /// (StandaloneRelayTests.aMistypedOptionIsNamed).
    @Test(.timeLimit(.minutes(2)), arguments: ["localhost", "lo"])
    func aHostNameIsResolvedBeforeLwsSeesIt(host: String) async throws {
        let directory = TemporaryDirectory()
        let (p, out, _, stdin) = try Self.serve(directory, ["--host", host])
        let url = try await ChildOutput(reading: out.fileHandleForReading).line(startingWith: "", from: "the relay", within: 60)
        #expect(url.hasPrefix("ws://127.0.0.1:") || url.hasPrefix("ws://[::1]:"), "\(url)")
        try stdin.fileHandleForWriting.close()
        await p.ended()
        #expect(p.terminationStatus == 0)
    }

    /// A relay stopped by SIGTERM closes its database before it exits: what it stored is in
    /// `relay.db` alone, as a CI job that keeps that file as an artifact expects. The store used
    /// to close whenever its last holder let go, which the exit usually outran: `-wal` (every
    /// commit since the last checkpoint) and `-shm` were left beside it. Three relays, each
    /// idle a moment as a job's relay is (one stopped at once mostly closed in time).
    @Test(.timeLimit(.minutes(2))) func aStoppedRelayLeavesItsDatabaseInOneFile() async throws {
        let directory = TemporaryDirectory()
        for run in 1...3 {
            let db = directory.path("relay-\(run).db")
            let relay = try await RelayProcess.start(db: db)
            #expect(try await relay.healthy())
            try await Task.sleep(for: .milliseconds(200))
            await relay.stop()
            #expect(relay.process.terminationReason == .exit && relay.process.terminationStatus == 0)
            for suffix in ["-wal", "-shm"] {
                #expect(!FileManager.default.fileExists(atPath: db + suffix), "run \(run): relay.db\(suffix) is left")
            }
        }
    }

    /// Help and version text that cannot be written (`> /dev/full`) is an error, said on
    /// standard error with status 1: it went out through `print`'s buffer, whose failure
    /// `exit` swallowed (status 0, nothing written, nothing said).
    @Test(.timeLimit(.minutes(2)), arguments: [["--version"], ["serve", "--help"], ["--help"]])
    func outputThatCannotBeWrittenIsAnError(arguments: [String]) async throws {
        try await Self.runWithStdoutFull(arguments)
    }

    /// A relay that cannot write its URL line (`> /dev/full`) did not start for anyone: it
    /// exits 1, said on stderr, and leaves no new database or lock file behind, as a failed
    /// start does (they were left).
    @Test(.timeLimit(.minutes(2))) func aURLLineThatCannotBeWrittenLeavesNoNewDatabase() async throws {
        let directory = TemporaryDirectory()
        try await Self.runWithStdoutFull(["serve", "--port", "0", "--db", directory.path("relay.db"), "--exit-on-stdin-eof"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    /// Runs `watchrelay arguments` with standard output on `/dev/full` to its end, and checks
    /// that it exited 1 saying why on standard error.
    private static func runWithStdoutFull(_ arguments: [String]) async throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = arguments
        let err = Pipe()
        p.standardOutput = full
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let said = try await withTimeout(30, "watchrelay \(arguments)") { await readToEnd(err.fileHandleForReading) }
        await p.ended()
        #expect(p.terminationReason == .exit && p.terminationStatus == 1, "status \(p.terminationStatus)")
        #expect(said.contains("cannot write to standard output"), "\(said)")
    }

    /// `watchrelay serve` on a database in `directory`, its three streams pipes (stdout's read
    /// end closed before the start when `closingStdout`).
    private static func serve(
        _ directory: TemporaryDirectory, closingStdout: Bool = false, _ more: [String] = []
    ) throws -> (TestProcess, out: Pipe, err: Pipe, stdin: Pipe) {
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = ["serve", "--port", "0", "--db", directory.path("relay.db"), "--exit-on-stdin-eof"] + more
        let (out, err, stdin) = (Pipe(), Pipe(), Pipe())
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin
        if closingStdout { try out.fileHandleForReading.close() }
        try p.run()
        return (p, out, err, stdin)
    }
}
