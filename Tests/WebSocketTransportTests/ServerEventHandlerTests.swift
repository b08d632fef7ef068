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
}
