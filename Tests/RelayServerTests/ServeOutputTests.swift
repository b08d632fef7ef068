import Foundation
import TestSupport
import Testing

/// What `watchrelay serve` writes for its operator: its log on a standard error nobody reads
/// any more.
@Suite struct ServeOutputTests {
    /// A relay whose standard error is a pipe whose reader is gone (a log shipper that died,
    /// `serve 2>&1 | head`) still shuts down cleanly on SIGTERM, exit 0: a log line it cannot
    /// write is lost, not a crash (Foundation's `FileHandle.write(_:)` traps on EPIPE).
    @Test(.timeLimit(.minutes(2))) func aLogReaderThatWentAwayDoesNotCrashTheRelay() async throws {
        let directory = TemporaryDirectory()
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = ["serve", "--port", "0", "--db", directory.path("relay.db"), "--exit-on-stdin-eof"]
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin
        try p.run()
        let output = ChildOutput(reading: out.fileHandleForReading)
        let url = try await output.line(startingWith: "", from: "the relay", within: 60)
        #expect(url.hasPrefix("ws://"))
        try err.fileHandleForReading.close()
        kill(p.processIdentifier, SIGTERM)  // the relay logs "relay shutting down" into the closed pipe
        await p.ended()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "status \(p.terminationStatus)")
        withExtendedLifetime(stdin) {}
    }
}
