import Foundation
import TestSupport
import Testing

/// `watchrelay serve --console` as a child process: the console line, the token, the interface rule.
@Suite(.timeLimit(.minutes(5)))
struct ConsoleCommandTests {
    @Test func serveConsolePrintsTheConsoleURLOnStandardErrorAndStdoutStaysTheRelayURL() async throws {
        let dir = TemporaryDirectory()
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = [
            "serve", "--port", "0", "--db", dir.path("relay.db"), "--log-level", "error", "--exit-on-stdin-eof",
            "--console", "--console-token", "cli-token",
        ]
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin
        try p.run()
        let stdout = ChildOutput(reading: out.fileHandleForReading)
        let stderr = ChildOutput(reading: err.fileHandleForReading)
        let url = try await stdout.line(startingWith: "ws://", from: "the relay", within: 60)
        let line = try await stderr.line(startingWith: "console: ", from: "the relay", within: 60)
        let port = Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0
        #expect(line == "console: http://127.0.0.1:\(port)/console?token=cli-token")
        #expect(try await PlainHTTP.request(port: port, "/console").status == 401)
        #expect(try await PlainHTTP.request(port: port, "/console?token=cli-token").status == 200)
        p.terminate()
        await waitForExit(p)
        #expect(p.terminationStatus == 0)
    }

    @Test(arguments: [
        ["--console", "--host", "0.0.0.0"],
        ["--console-token", "x"],
    ])
    func serveRefusesAnInsecureOrIncompleteConsoleWithAUsageError(_ extra: [String]) async throws {
        let dir = TemporaryDirectory()
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = ["serve", "--port", "0", "--db", dir.path("relay.db")] + extra
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        await waitForExit(p)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 2, "\(text)")
        #expect(text.contains("console"), "\(text)")
    }
}

/// `watchrelay demo --console`: the story, then the link stays up with the console's URL
/// printed and the watch's faces on the page, until `quit`.
@Suite(.timeLimit(.minutes(5)))
struct DemoConsoleTests {
    @Test func demoConsoleKeepsTheLinkUpAndPublishesTheWatchFaces() async throws {
        let dir = TemporaryDirectory()
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = ["demo", "--console", "--out", dir.path("out")]
        let out = Pipe()
        let stdin = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = stdin
        try p.run()
        let stdout = ChildOutput(reading: out.fileHandleForReading)
        let line = try await stdout.line(startingWith: "  console: http://", from: "the demo", within: 120)
        let url = try #require(URL(string: String(line.dropFirst("  console: ".count))))
        let port = try #require(url.port)
        let target = url.path + "/api/state?" + (url.query ?? "")
        try await eventually(10, "the watch's faces in the console") {
            let r = try await PlainHTTP.request(port: port, target)
            return r.status == 200 && r.body.contains("Jiwoo's Watch") && r.body.contains("<svg")
        }
        // A command typed in the terminal is answered, and the link keeps serving afterwards
        // (the demo once hung on its first command: fflush(NULL) against the stdin reader).
        try stdin.fileHandleForWriting.write(contentsOf: Data("add torvalds\n".utf8))
        _ = try await stdout.line(startingWith: "  phone: add torvalds", from: "the demo", within: 30)
        try await eventually(10, "the console after the command") {
            try await PlainHTTP.request(port: port, target).status == 200
        }
        try stdin.fileHandleForWriting.write(contentsOf: Data("quit\n".utf8))
        await waitForExit(p)
        #expect(p.terminationStatus == 0)
    }
}
