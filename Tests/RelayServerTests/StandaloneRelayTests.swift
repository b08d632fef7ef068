import Foundation
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// `watchrelay-relay`, the relay alone: the same relay and options as `watchrelay serve`, in its
/// own executable (built beside `watchrelay`).
@Suite struct StandaloneRelayTests {
    static var binary: String {
        URL(fileURLWithPath: watchrelayBinary).deletingLastPathComponent().appendingPathComponent("watchrelay-relay").path
    }

    /// Runs the binary (or `executable`) to its end with `arguments`: exit status, standard
    /// output, standard error.
    static func run(_ arguments: [String], executable: String = binary) async throws -> (status: Int32, out: String, err: String) {
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Its output is a screenful at most: far below a pipe's buffer, so one read after the
        // other cannot stall the child.
        let (o, e) = try await withTimeout(30, "\(URL(fileURLWithPath: executable).lastPathComponent) \(arguments)") {
            (await readToEnd(out.fileHandleForReading), await readToEnd(err.fileHandleForReading))
        }
        await p.ended()
        return (p.terminationStatus, o, e)
    }

    @Test func helpNamesTheBinaryAndEveryServeOption() async throws {
        let result = try await Self.run(["--help"])
        #expect(result.status == 0)
        #expect(result.out.contains("USAGE: watchrelay-relay [serve] [options]"))
        #expect(result.out.contains("--rx-buffer-bytes"))
        #expect(result.out.contains("--store redis://"))
    }

    /// `--version` (of both executables) names the release, the protocol and the C libraries
    /// loaded at run time, what a bug report needs.
    @Test func versionNamesTheReleaseTheProtocolAndTheLibrariesLoaded() async throws {
        let relay = try await Self.run(["--version"])
        #expect(relay.status == 0)
        #expect(relay.out.hasPrefix("watchrelay-relay 0.1.0 (protocol watchrelay.v1; libwebsockets 4.1."), "\(relay.out)")
        #expect(relay.out.contains("; SQLite 3.") && relay.out.hasSuffix(")\n"), "\(relay.out)")
        let p = TestProcess()
        p.executableURL = URL(fileURLWithPath: watchrelayBinary)
        p.arguments = ["serve", "--version"]
        let out = Pipe()
        p.standardOutput = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = try await withTimeout(30, "watchrelay serve --version") { await readToEnd(out.fileHandleForReading) }
        await p.ended()
        #expect(p.terminationStatus == 0)
        #expect(text == relay.out.replacingOccurrences(of: "watchrelay-relay ", with: "watchrelay "))
    }

    /// A second relay on the same --db refuses to start (it would serve from its own copy of
    /// the state while the first changes the rows); once the first is gone, even by SIGKILL,
    /// the file is free again.
    @Test func aSecondRelayOnTheSameDatabaseRefusesToStart() async throws {
        let directory = TemporaryDirectory()
        let db = directory.path("relay.db")
        let first = try await RelayProcess.start(db: db, binary: Self.binary, leading: [])
        let second = try await Self.run(["--port", "0", "--db", db, "--exit-on-stdin-eof"])
        #expect(second.status == 1)
        #expect(second.err.contains("relay.db: in use by another process (a relay on the same file): stop it or pass another --db"), "\(second.err)")
        // The same file through a symbolic link is the same file.
        try FileManager.default.createSymbolicLink(atPath: directory.path("link.db"), withDestinationPath: db)
        #expect(try await Self.run(["--port", "0", "--db", directory.path("link.db"), "--exit-on-stdin-eof"]).status == 1)
        await first.kill9()
        let third = try await RelayProcess.start(db: db, binary: Self.binary, leading: [])
        #expect(third.url.hasPrefix("ws://"))
        await third.stop()
        // Another file in the same directory is another relay's.
        let other = try await RelayProcess.start(db: directory.path("other.db"), binary: Self.binary, leading: [])
        await other.stop()
    }

    @Test func aBadOptionIsAUsageErrorWithExit2() async throws {
        let result = try await Self.run(["serve", "--no-such-option", "1"])
        #expect(result.status == 2)
        #expect(result.err.contains("watchrelay-relay:"))
        #expect(result.err.contains("no-such-option"))
    }

    /// A mistyped option last on the line, or a mistyped flag before another option, is named
    /// as unknown (they used to read "--bogus needs a value" and "unexpected argument '0'").
    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"),
        (["--consol", "--port", "0"], "unknown option --consol"),
        (["--port"], "option --port needs a value"),
        (["--db", "--port", "0"], "option --db needs a value"),
        (["--console", "--console-token", ""], "--console-token must not be empty"),
        (["--console", "--console-token", "a&b c"], "--console-token may hold only A-Z a-z 0-9 - . _ ~"),
        (["--host", "no-such-host.invalid"], "--host: 'no-such-host.invalid' is not an IP address"),
        (["--tls-cert", "--tls-key", "k.pem"], "option --tls-cert needs a value"),
        (["--store", "--single-node"], "option --store needs a value"),
    ])
    func aMistypedOptionIsNamed(arguments: [String], message: String) async throws {
        let result = try await Self.run(["serve"] + arguments)
        #expect(result.status == 2)
        #expect(result.err.contains(message), "\(result.err)")
    }

    /// TLS files that do not go together (a key of another certificate): lws's cause is said
    /// once (it was printed twice: once for the libev attempt, once for poll()), and a file that
    /// is not there is a usage error before lws is asked.
    @Test func aTLSProblemIsSaidOnceAndAMissingFileBeforeTheStart() async throws {
        let directory = TemporaryDirectory()
        let first = try await makeSelfSignedCertificate(in: directory, named: "first")
        let second = try await makeSelfSignedCertificate(in: directory, named: "second")
        let mismatch = try await Self.run(["--port", "0", "--db", ":memory:", "--tls-cert", first.certificate, "--tls-key", second.key])
        #expect(mismatch.status == 1)
        #expect(mismatch.err.components(separatedBy: "key values mismatch").count == 2, "\(mismatch.err)")
        let missing = try await Self.run(["--port", "0", "--db", ":memory:", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", first.key])
        #expect(missing.status == 2)
        #expect(missing.err.contains("--tls-cert /nonexistent/cert.pem: no such file"), "\(missing.err)")
        withExtendedLifetime(directory) {}
    }

    /// A second relay on a port in use says so in one line, without lws's own error lines
    /// (three per attempt, before the transport's message), and exits 1.
    @Test func aPortInUseIsOneLineAndExit1() async throws {
        let dir = TemporaryDirectory()
        let first = try await RelayProcess.start(db: dir.path + "/first.db", binary: Self.binary)
        defer { first.terminate() }
        let port = try #require(URLComponents(string: first.url)?.port)
        let second = try await Self.run(["--port", String(port), "--db", dir.path + "/second.db"])
        #expect(second.status == 1)
        #expect(second.err.contains("port \(port) on 127.0.0.1 is in use"), "\(second.err)")
        #expect(!second.err.contains("E: "), "\(second.err)")
        // The relay that did not start left no database (nor its lock file) behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("second.db") }
        #expect(left.isEmpty, "\(left)")
    }

    /// With or without the `serve` word, it is the relay: it pairs, stores a userInfo durably,
    /// and after `kill -9` a restarted relay delivers it.
    @Test(arguments: [[], ["serve"]])
    func itRelaysAndKeepsWhatItAcceptedAcrossKill9(leading: [String]) async throws {
        let dir = TemporaryDirectory()
        let db = dir.path + "/relay.db"
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        var relay = try await RelayProcess.start(db: db, binary: Self.binary, leading: leading)
        defer { relay.terminate() }
        let (phone, watch, _, watchToken) = try await pairDevices(url: relay.url, clients: clients)
        watch.connection.close()
        _ = try await watch.closed()
        _ = try await phone.next()  // peer gone
        phone.sendRaw(#"{"type":"send","id":"u-1","mode":"userInfo","payload":{"kind":"note","n":1}}"#)
        let answer = try await phone.next()
        guard case .accepted = answer else { throw TestFailure("expected accepted, got \(answer)") }
        await relay.kill9()
        relay = try await RelayProcess.start(db: db, binary: Self.binary, leading: leading)
        let watch2 = try await TestDevice.connect(relay.url, clients: clients, role: .watch, name: "W")
        _ = try await watch2.hello(token: watchToken)
        guard case .deliver(let item) = try FrameCodec.decodeRelayFrame(try await watch2.nextBytes()) else {
            throw TestFailure("expected the stored userInfo")
        }
        #expect(item.id == "u-1")
        await relay.stop()
        await clients.shutdown()
    }
}
