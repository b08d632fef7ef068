import Foundation
import Primitives
import TestSupport
import Testing

@testable import WebSocketTransport

/// A send past a connection's queue cap closes that connection at once, and the handler hears
/// `closed` while the batch the send was in is being applied. The rest of the batch goes out
/// once, in order (a review found every other connection's frames of the batch sent twice).
@Suite(.timeLimit(.minutes(2)))
struct OverflowInABatchTests {
    /// On "go" from a connection: "one" to it, more than the cap to the other, "two" to it; on
    /// the other's `closed`, "gone" to the first; on "mark", "end" back.
    final class Splitter: ServerEventHandler, @unchecked Sendable {
        // Service thread only.
        private var ids: [ConnectionID] = []
        private var sender: ConnectionID?

        func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
            switch event {
            case .opened(let id, _):
                ids.append(id)
            case .closed(let id, _, _):
                if let sender, id != sender { outbound.send(Array("gone".utf8), to: sender) }
            case .message(let id, let bytes):
                switch String(decoding: bytes, as: UTF8.self) {
                case "go":
                    guard let victim = ids.first(where: { $0 != id }) else { return }
                    sender = id
                    outbound.send(Array("one".utf8), to: id)
                    outbound.send([UInt8](repeating: 65, count: 8192), to: victim)
                    outbound.send(Array("two".utf8), to: id)
                case "mark":
                    outbound.send(Array("end".utf8), to: id)
                default:
                    break
                }
            default:
                break
            }
        }

        func received(_ message: any Sendable, outbound: inout OutboundBatch) {}
        func timerFired(outbound: inout OutboundBatch) {}
        func endOfTurn(outbound: inout OutboundBatch) -> Duration? { nil }
        func finished() {}
    }

    @Test func theRestOfTheBatchGoesOutOnceAndWhatTheCloseCausedAfterIt() async throws {
        let server = try WebSocketServer(
            configuration: ServerConfiguration(maxQueuedBytesPerConnection: 4096), handler: Splitter())
        let client = try plainClient()
        let url = "ws://127.0.0.1:\(server.port)/v1"
        let victim = try await client.connect(to: url)
        let victimLog = EventLog(victim.events)
        let sender = try await client.connect(to: url)
        let senderLog = EventLog(sender.events)
        sender.send(Array("go".utf8))
        #expect(try await victimLog.first("the victim's close") { $0.closed }.code == 1008)
        // Frames of one connection arrive in order: once "end" is here, everything before it is.
        sender.send(Array("mark".utf8))
        _ = try await senderLog.first("end") { $0.text == "end" ? true : nil }
        #expect(senderLog.events.compactMap(\.text) == ["one", "two", "gone", "end"])
        try await stop(client)
        try await stop(server)
    }
}
