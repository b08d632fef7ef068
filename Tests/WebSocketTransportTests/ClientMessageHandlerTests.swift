import Primitives
import TestSupport
import Testing

@testable import WebSocketTransport

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(5)))
struct ClientMessageHandlerTests {
    @Test func handlerRunsOnTheServiceThreadAndWhatItConsumesNeverReachesEvents() async throws {
        try await withEcho { client, url in
            let connection = try await client.connect(to: url)
            let events = EventLog(connection.events)
            let observer = ThreadObserver()
            let handler = RecordingHandler { text, _, _ in text.hasPrefix("keep") ? .yield : .consume }
            await connection.observe(observer)
            await connection.handle(with: handler)
            for text in ["a", "keep 1", "b", "c", "keep 2"] { connection.send(Array(text.utf8)) }
            try await handler.waitUntil("five echoes handled") { $0.count >= 5 }
            try await events.waitUntil("the kept echoes") { $0.count >= 2 }

            #expect(handler.seen.map(\.text) == ["a", "keep 1", "b", "c", "keep 2"])
            #expect(handler.seen.allSatisfy { $0.connection == connection.id })
            #expect(events.events.compactMap(\.text) == ["keep 1", "keep 2"])
            // Every call came on one thread, the one lws calls the observer on (the service
            // thread), which is no thread of the test's tasks.
            let threads = handler.seen.map(\.thread) + observer.threads
            let serviceThread = try #require(threads.first)
            #expect(threads.allSatisfy { pthread_equal($0, serviceThread) != 0 })
            #expect(pthread_equal(pthread_self(), serviceThread) == 0)

            // Detached, every message is yielded again.
            await connection.handle(with: nil)
            connection.send(Array("after".utf8))
            try await events.waitUntil("the echo after detaching") { $0.count >= 3 }
            #expect(events.events.compactMap(\.text) == ["keep 1", "keep 2", "after"])
            #expect(handler.seen.count == 5)
        }
    }

    @Test func handlerSendsOnAnyConnectionOfItsContextFromTheServiceThread() async throws {
        try await withEcho { client, url in
            let ping = try await client.connect(to: url)
            let pong = try await client.connect(to: url)
            #expect(ping.sharesContext(with: pong))
            let pongEvents = EventLog(pong.events)
            let pingEvents = EventLog(ping.events)
            // A rally: `attached` serves "1" on ping; each echo n on ping is answered with n + 1
            // on ping and "pong n" on the other connection, up to 20, all from the service thread.
            let handler = RecordingHandler(
                start: { id, outbound in outbound.send(Array("1".utf8), to: id) },
                { text, id, outbound in
                    guard let n = Int(text) else { return .yield }
                    if n < 20 { outbound.send(Array("\(n + 1)".utf8), to: id) }
                    outbound.send(Array("pong \(n)".utf8), to: pong.id)
                    return .consume
                })
            await ping.handle(with: handler)
            try await pongEvents.waitUntil("twenty pongs") { $0.count >= 20 }

            #expect(pongEvents.events.compactMap(\.text) == (1...20).map { "pong \($0)" })
            #expect(handler.seen.map(\.text) == (1...20).map(String.init))
            #expect(pingEvents.events.isEmpty)
        }
    }

    @Test func closesStillReachTheEventsOfAHandledConnection() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let serverID = try await echo.openedID()
        let events = EventLog(connection.events)
        let handler = RecordingHandler { _, _, _ in .consume }
        await connection.handle(with: handler)
        connection.send(Array("swallowed".utf8))
        try await handler.waitUntil("the echo handled") { $0.count >= 1 }
        echo.server.close(serverID, code: 4001, reason: "bye")
        try await events.waitForEnd()

        #expect(events.events.count == 1)
        let closed = try #require(events.events.first?.closed)
        #expect(closed.code == 4001)
        #expect(closed.reason == "bye")
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func connectionsOfDifferentContextsDoNotShareOne() async throws {
        let echo = try EchoServer()
        let first = try plainClient()
        let second = try plainClient()
        let a = try await first.connect(to: echo.url)
        let b = try await second.connect(to: echo.url)
        #expect(!a.sharesContext(with: b))
        #expect(a.sharesContext(with: a))
        try await stop(first)
        try await stop(second)
        try await stop(echo.server)
    }

    @Test func attachingAHandlerAfterShutdownReturns() async throws {
        try await withEcho { client, url in
            let connection = try await client.connect(to: url)
            try await stop(client)
            let handler = RecordingHandler { _, _, _ in .consume }
            try await withTimeout(.seconds(5), "handle(with:) after shutdown") { await connection.handle(with: handler) }
            #expect(handler.seen.isEmpty)
        }
    }
}

/// A handler that records each call (text, connection, thread) and answers with `decide`.
private final class RecordingHandler: ClientMessageHandler {
    struct Call: Sendable {
        var text: String
        var connection: ConnectionID
        var thread: pthread_t
    }

    typealias Decide = @Sendable (String, ConnectionID, inout OutboundBatch) -> ClientEventDisposition

    private let start: @Sendable (ConnectionID, inout OutboundBatch) -> Void
    private let decide: Decide
    private let log = LockedState<[Call]>([])

    init(start: @escaping @Sendable (ConnectionID, inout OutboundBatch) -> Void = { _, _ in }, _ decide: @escaping Decide) {
        self.start = start
        self.decide = decide
    }

    var seen: [Call] { log.withLock { $0 } }

    func attached(to connection: ConnectionID, outbound: inout OutboundBatch) {
        start(connection, &outbound)
    }

    func handle(_ event: ClientEvent, on connection: ConnectionID, outbound: inout OutboundBatch)
        -> ClientEventDisposition
    {
        let text = event.text ?? ""
        log.withLock { $0.append(Call(text: text, connection: connection, thread: pthread_self())) }
        return decide(text, connection, &outbound)
    }

    /// Waits (× ``timeoutScale``) until `condition` holds for the calls so far.
    func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: ([Call]) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout * timeoutScale
        while !condition(seen) {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Records the thread of each receipt it is told of (the service thread, by its contract).
private final class ThreadObserver: ClientMessageObserver {
    private let log = LockedState<[pthread_t]>([])

    var threads: [pthread_t] { log.withLock { $0 } }

    func wrote(_ payload: [UInt8], at stamp: UInt64) {}

    func received(_ event: ClientEvent, at stamp: UInt64) {
        log.withLock { $0.append(pthread_self()) }
    }
}
