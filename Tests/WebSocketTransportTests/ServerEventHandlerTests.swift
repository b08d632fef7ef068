import Foundation
import Primitives
import TestSupport
import Testing

@testable import WebSocketTransport

/// A server with a ``ServerEventHandler``: events handled on the service thread, answers queued
/// in the same callback, posted values and the handler's timer.
@Suite(.timeLimit(.minutes(2)))
struct ServerEventHandlerTests {
    /// Echoes every message upper-cased; answers a posted string by sending it to every
    /// connection; counts timer firings and sends "tick N" when one fires.
    final class Echo: ServerEventHandler, @unchecked Sendable {
        // Service thread only, except `log` (locked).
        private var connections: [ConnectionID] = []
        private var ticks = 0
        private var timerWanted: Duration?
        let log = LockedState<[String]>([])

        func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
            switch event {
            case .opened(let id, _):
                connections.append(id)
                log.withLock { $0.append("opened") }
            case .message(let id, let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                if text == "timer" { timerWanted = .milliseconds(20) }
                outbound.send(Array(text.uppercased().utf8), to: id)
            case .closed(let id, _, _):
                connections.removeAll { $0 == id }
                log.withLock { $0.append("closed") }
            case .binary, .tooLarge:
                break
            }
        }

        func received(_ message: any Sendable, outbound: inout OutboundBatch) {
            guard let text = message as? String else { return }
            for id in connections { outbound.send(Array(text.utf8), to: id) }
        }

        func timerFired(outbound: inout OutboundBatch) {
            timerWanted = nil
            ticks += 1
            for id in connections { outbound.send(Array("tick \(ticks)".utf8), to: id) }
        }

        func endOfTurn(outbound: inout OutboundBatch) -> Duration? { timerWanted }

        func finished() {
            log.withLock { $0.append("finished") }
        }
    }

    @Test func messagesArePostsAndTimersReachTheHandlerAndItsAnswersGoOut() async throws {
        let handler = Echo()
        let server = try WebSocketServer(configuration: ServerConfiguration(), handler: handler)
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        connection.send(Array("hello".utf8))
        #expect(try await log.first("echo") { $0.text } == "HELLO")
        #expect(server.post("posted"))
        #expect(try await log.first("posted") { $0.text == "posted" ? $0.text : nil } == "posted")
        connection.send(Array("timer".utf8))
        #expect(try await log.first("tick") { $0.text?.hasPrefix("tick") == true ? $0.text : nil } == "tick 1")
        try await stop(client)
        try await stop(server)
        #expect(handler.log.withLock { $0 } == ["opened", "closed", "finished"])
        // After shutdown nothing more reaches the handler.
        #expect(!server.post("late"))
    }

    /// What a turn queues is written at its end, with no POLLOUT round trip: an echo answered at
    /// wire speed never waits for WRITEABLE, on the server or on the client.
    @Test func answersGoOutAtTheEndOfTheirTurnWithoutWaitingForWriteable() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration(), handler: Echo())
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        for n in 1...200 { connection.send(Array("m\(n)".utf8)) }
        try await log.waitUntil("200 echoes") { $0.count >= 200 }
        #expect(log.events.compactMap(\.text) == (1...200).map { "M\($0)" })
        // The counts are published right after the turn's writes, which the client may see first.
        let deadline = ContinuousClock.now + .seconds(5) * timeoutScale
        while server.writeCounts.endOfTurn == 0 || client.writeCounts.endOfTurn == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let (served, sent) = (server.writeCounts, client.writeCounts)
        #expect(served.endOfTurn >= 1 && served.afterWriteable == 0, "server: \(served)")
        #expect(sent.endOfTurn >= 1 && sent.afterWriteable == 0, "client: \(sent)")
        try await stop(client)
        try await stop(server)
    }

    /// A backlog to a peer that stops reading: the end of the turn writes one frame (64 KiB
    /// frames do not batch), the rest waits for WRITEABLE while the socket fills and lws keeps
    /// what the kernel refused, and the peer gets every frame, whole and in order, once it reads.
    @Test func aPeerThatStopsReadingGetsTheRestOnWriteableWholeAndInOrder() async throws {
        // The raw socket answers no ping: lws's hang-up must not end the connection while a slow
        // (ThreadSanitizer) run is still posting or reading.
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                maxQueuedBytesPerConnection: 32 << 20, pingAfterSeconds: 3_000, hangupAfterSeconds: 3_600),
            handler: Echo())
        let socket = try RawSocket(port: server.port, receiveBuffer: 4096)
        #expect(try await socket.upgrade(port: server.port).hasPrefix("HTTP/1.1 101"))
        // 128 messages of 64 KiB, each of one letter: 8 MiB, twice what Linux lets a socket's
        // send buffer grow to (tcp_wmem), so the socket fills before the peer reads.
        let letters = (0..<128).map { UInt8(ascii: "A") + UInt8($0 % 26) }
        for letter in letters { #expect(server.post(String(repeating: String(UnicodeScalar(letter)), count: 64 << 10))) }
        try await Task.sleep(for: .milliseconds(200))
        let frameBytes = 10 + (64 << 10)  // 0x81, 127, an 8-byte length, the payload
        let bytes = await socket.readBytes(letters.count * frameBytes, timeoutMilliseconds: Int32(5000 * timeoutScale))
        #expect(bytes.count == letters.count * frameBytes)
        for (n, letter) in letters.enumerated() where (n + 1) * frameBytes <= bytes.count {
            let frame = bytes[(n * frameBytes)..<((n + 1) * frameBytes)]
            #expect(Array(frame.prefix(10)) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0], "frame \(n)'s header")
            #expect(frame.dropFirst(10).allSatisfy { $0 == letter }, "frame \(n) is all \(letter)")
        }
        #expect(server.writeCounts.afterWriteable > 0, "what the end-of-turn write left went out on WRITEABLE")
        try await stop(server)
    }
}
