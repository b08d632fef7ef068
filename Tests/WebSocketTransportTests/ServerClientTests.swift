import Foundation
import Primitives
import TestSupport
import Testing

@testable import WebSocketTransport

@Suite(.timeLimit(.minutes(5)))
struct ServerClientTests {
    @Test func contextsAreCreatedAndDestroyed() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration())
        #expect(server.port > 0)
        let log = EventLog(server.events)
        let client = try plainClient()
        try await stop(client)
        try await stop(server)
        try await stop(server)  // a second call returns at once
        try await log.waitForEnd()
        await #expect(throws: TransportError.shutDown) {
            _ = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        }
    }

    @Test func echoRoundTripReportsRemoteAddress() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        connection.send(Array("hello".utf8))
        #expect(try await log.first("echo") { $0.text } == "hello")
        let address = try await echo.log.first("opened") {
            if case .opened(_, let address) = $0 { address } else { nil }
        }
        #expect(address == "127.0.0.1")
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func serverListensOnlyOnTheConfiguredAddress() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration(host: "127.0.0.1"))
        _ = try RawSocket(port: server.port, host: "127.0.0.1")
        // 127.0.0.2 is loopback too: it reaches the port only if lws listened on every address.
        #expect(throws: RawSocket.Failure.self) { _ = try RawSocket(port: server.port, host: "127.0.0.2") }
        try await stop(server)
    }

    @Test func ipv6LoopbackRoundTrip() async throws {
        let echo = try EchoServer(ServerConfiguration(host: "::1"))
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://[::1]:\(echo.server.port)/v1")
        let log = EventLog(connection.events)
        connection.send(Array("six".utf8))
        #expect(try await log.first("echo") { $0.text } == "six")
        let address = try await echo.log.first("opened") {
            if case .opened(_, let address) = $0 { address } else { nil }
        }
        #expect(address == "::1")
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func manyMessagesArriveInOrder() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        let count = 2000
        for index in 0..<count { connection.send(Array("m\(index)".utf8)) }
        try await log.waitUntil("\(count) echoes") { $0.count >= count }
        #expect(log.events.compactMap(\.text) == (0..<count).map { "m\($0)" })
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func largeMessagesRoundTripInFragments() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        let payload = (0..<(600 << 10)).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        connection.send(payload)
        connection.sendFragmented(payload, fragmentSize: 1000)
        try await log.waitUntil("two large echoes") { $0.count >= 2 }
        for event in log.events {
            guard case .message(let bytes) = event else {
                Issue.record("unexpected \(event)")
                continue
            }
            #expect(bytes == payload)
        }
        try await stop(client)
        try await stop(echo.server)
    }

    /// The receive buffer is lws's read size and RECEIVE chunk: at its smallest a 600 KiB message
    /// comes in ~1,200 chunks, at its largest in ~20, and either way it arrives whole.
    @Test(arguments: [512, ServerConfiguration.defaultReceiveBufferBytes, 32768])
    func everyReceiveBufferSizeReassemblesWholeMessages(receiveBufferBytes: Int) async throws {
        let echo = try EchoServer(ServerConfiguration(receiveBufferBytes: receiveBufferBytes))
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        let large = (0..<(600 << 10)).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let small = (0..<50).map { Array("s\($0)".utf8) }
        connection.send(large)
        for message in small { connection.send(message) }
        connection.sendFragmented(large, fragmentSize: 700)
        try await log.waitUntil("every echo") { $0.count >= small.count + 2 }
        let texts = log.events.compactMap(\.text)
        #expect(texts.count == small.count + 2)
        #expect(Array(texts.first?.utf8 ?? "".utf8) == large)
        #expect(Array(texts.last?.utf8 ?? "".utf8) == large)
        #expect(texts.dropFirst().dropLast().map { Array($0.utf8) } == small)
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func hundredConcurrentConnectionsShareOneClientContext() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let url = echo.url
        let replies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let connection = try await client.connect(to: url)
                    let log = EventLog(connection.events)
                    connection.send(Array("client \(index)".utf8))
                    let reply = try await log.first("echo \(index)") { $0.text }
                    connection.close()
                    return reply
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(replies == Set((0..<100).map { "client \($0)" }))
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func serverCloseCodeReachesClient() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        let id = try await echo.openedID()
        echo.server.send(Array("last words".utf8), to: id)
        echo.server.close(id, code: 4001, reason: "replaced")
        let closed = try await log.first("closed") { $0.closed }
        #expect(closed.code == 4001)
        #expect(closed.reason == "replaced")
        #expect(log.events.first?.text == "last words")  // queued frames go out before the close
        try await log.waitForEnd()
        let serverSide = try await echo.log.first("server closed") { event -> UInt16?? in
            if case .closed(id, let code, _) = event { code } else { nil }
        }
        #expect(serverSide == 4001)
        try await stop(client)
        try await stop(echo.server)
    }

    /// After the server's close frame only the peer's close counts (RFC 6455 §1.4): a text
    /// frame the peer sends after it reaches no one, and the close reported is the server's
    /// (the peer answered with another code).
    @Test func framesAfterTheServersCloseFrameAreDropped() async throws {
        let echo = try EchoServer()
        let raw = try RawSocket(port: echo.server.port)
        #expect(try await raw.upgrade(port: echo.server.port).hasPrefix("HTTP/1.1 101"))
        let id = try await echo.openedID()
        echo.server.close(id, code: 4002, reason: "go")
        let close = await raw.readBytes(6)
        #expect(close.prefix(4) == [0x88, 4, 0x0F, 0xA2], "an unmasked close frame, 4002: \(close)")
        try raw.sendText("late")
        try raw.sendText("later")
        try await Task.sleep(for: .milliseconds(300))
        try raw.write(bytes: [0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8])  // the answer, with 1000 (mask key 0)
        let (code, reason) = try await echo.log.first("server closed") {
            if case .closed(id, let code, let reason) = $0 { (code, reason) } else { nil }
        }
        #expect(code == 4002 && reason == "go")
        #expect(!echo.log.events.contains { $0.text != nil }, "a frame after the close frame reached the server")
        try await stop(echo.server)
    }

    @Test func clientCloseCodeReachesServer() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        let id = try await echo.openedID()
        connection.send(Array("bye".utf8))
        connection.close(code: 1000, reason: "done")
        let (code, reason) = try await echo.log.first("server closed") {
            if case .closed(id, let code, let reason) = $0 { (code, reason) } else { nil }
        }
        #expect(code == 1000)
        #expect(reason == "done")
        #expect(echo.log.events.contains { $0.text == "bye" })
        #expect(try await log.first("client closed") { $0.closed }.code == 1000)
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func serverShutdownClosesClientsWith1001() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let first = EventLog(try await client.connect(to: echo.url).events)
        let second = EventLog(try await client.connect(to: echo.url).events)
        try await echo.log.waitUntil("two opened") { events in
            events.filter { if case .opened = $0 { true } else { false } }.count == 2
        }
        try await stop(echo.server)
        for log in [first, second] {
            let closed = try await log.first("closed") { $0.closed }
            #expect(closed.code == 1001)
            #expect(closed.reason == "relay shutting down")
        }
        try await echo.log.waitForEnd()
        let serverCodes = echo.log.events.compactMap { event -> UInt16?? in
            if case .closed(_, let code, _) = event { code } else { nil }
        }
        #expect(serverCodes == [1001, 1001])
        try await stop(client)
    }

    @Test func clientShutdownClosesConnectionsAndFinishesStreams() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let log = EventLog(try await client.connect(to: echo.url).events)
        _ = try await echo.openedID()
        try await stop(client)
        try await log.waitForEnd()
        #expect(log.events.last?.closed?.code == 1001)
        let serverSide = try await echo.log.first("server closed") { event -> UInt16?? in
            if case .closed(_, let code, _) = event { code } else { nil }
        }
        #expect(serverSide == 1001)
        try await stop(echo.server)
    }

    @Test func sendsRacingShutdownEndWithTheContext() async throws {
        // Posters wake the service thread after leaving the inbox lock; the context must still
        // outlive every wake-up that was under way when it shut down.
        let echo = try EchoServer()
        for _ in 0..<5 {
            let client = try plainClient()
            let connection = try await client.connect(to: echo.url)
            let halt = LockedState(false)
            let posters = (0..<2).map { _ in
                let (finished, done) = AsyncStream.makeStream(of: Void.self)
                Thread {
                    // Paced (~10,000/s per thread), not flat out: unpaced posters outran the echo
                    // server by far, grew the run to ~1 GB and took the CPU of the whole TSan run.
                    while !halt.withLock({ $0 }) {
                        connection.send(Array("x".utf8))
                        usleep(100)
                    }
                    done.finish()
                }.start()
                return finished
            }
            try await stop(client)
            halt.withLock { $0 = true }
            for finished in posters { for await _ in finished {} }
        }
        try await stop(echo.server)
    }

    @Test func connectToClosedPortThrowsWithReason() async throws {
        // A port held bound and never listening: a stopped server's port could be handed to a
        // test running in parallel.
        let closed = try ClosedPort()
        let client = try plainClient()
        do {
            _ = try await client.connect(to: "ws://127.0.0.1:\(closed.port)/v1")
            Issue.record("connect succeeded")
        } catch let error as TransportError {
            guard case .connectionFailed(_, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(!reason.isEmpty)
        }
        withExtendedLifetime(closed) {}
        try await stop(client)
    }

    @Test func cancellingConnectThrowsCancellationError() async throws {
        let listener = try SilentListener()
        let client = try plainClient()
        let attempt = Task { try await client.connect(to: "ws://127.0.0.1:\(listener.port)/v1") }
        try await Task.sleep(for: .milliseconds(100))
        attempt.cancel()
        let outcome = try await withTimeout(.seconds(3), "cancelled connect") { await attempt.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        try await stop(client)
    }

    @Test func unansweredHandshakeTimesOut() async throws {
        let listener = try SilentListener()
        let url = "ws://127.0.0.1:\(listener.port)/v1"
        let client = try WebSocketClientContext(
            configuration: ClientConfiguration(connectTimeoutSeconds: 1, enablesTLS: false))
        await #expect(throws: TransportError.self) {
            try await withTimeout(.seconds(30), "handshake timeout") { _ = try await client.connect(to: url) }
        }
        try await stop(client)
    }

    @Test func takenPortAndBadConfigurationThrow() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration())
        #expect(throws: TransportError.self) {
            _ = try WebSocketServer(configuration: ServerConfiguration(port: server.port))
        }
        #expect(throws: TransportError.self) {
            _ = try WebSocketServer(configuration: ServerConfiguration(pingAfterSeconds: 10, hangupAfterSeconds: 5))
        }
        #expect(throws: TransportError.self) {  // TEST-NET-1: never a local address
            _ = try WebSocketServer(configuration: ServerConfiguration(host: "192.0.2.1"))
        }
        #expect(throws: TransportError.self) {
            _ = try WebSocketServer(configuration: ServerConfiguration(tlsCertificatePath: "/nonexistent"))
        }
        for receiveBufferBytes in [0, 511, 32769] {
            #expect(throws: TransportError.invalidConfiguration("receiveBufferBytes \(receiveBufferBytes) is not 512...32768")) {
                _ = try WebSocketServer(configuration: ServerConfiguration(receiveBufferBytes: receiveBufferBytes))
            }
        }
        let client = try plainClient()
        await #expect(throws: TransportError.self) { _ = try await client.connect(to: "http://127.0.0.1/") }
        try await stop(client)
        try await stop(server)
    }
}
