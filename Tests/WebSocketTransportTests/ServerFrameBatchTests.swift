import Foundation
import Testing
@testable import WebSocketTransport

/// Several queued messages of a server connection go out as one raw send of frames the
/// transport wrote itself (``ServerFrameBatch``): the frames must be exactly RFC 6455's, and
/// the client must get every message whole and in order, whatever the mix of sizes.
@Suite struct ServerFrameBatchTests {
    static func queue(_ sizes: [Int], kind: OutboundMessage.Kind = .text) -> OutboundQueue {
        var q = OutboundQueue()
        for (i, size) in sizes.enumerated() {
            q.append(OutboundMessage(payload: [UInt8](repeating: UInt8(ascii: "a") + UInt8(i % 26), count: size), kind: kind))
        }
        return q
    }

    @Test func headersUseTheShortestLengthForm() {
        #expect(ServerFrameBatch.header(kind: .text, length: 0) == [0x81, 0])
        #expect(ServerFrameBatch.header(kind: .text, length: 125) == [0x81, 125])
        #expect(ServerFrameBatch.header(kind: .binary, length: 126) == [0x82, 126, 0, 126])
        #expect(ServerFrameBatch.header(kind: .text, length: 0xFFFF) == [0x81, 126, 0xFF, 0xFF])
        #expect(ServerFrameBatch.header(kind: .text, length: 0x10000) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        for length in [0, 125, 126, 0xFFFF, 0x10000] {
            #expect(ServerFrameBatch.headerSize(length: length) == ServerFrameBatch.header(kind: .text, length: length).count)
        }
    }

    @Test func aBatchTakesWholeMessagesThatFitOneSendAndNeverOneAlone() {
        #expect(ServerFrameBatch.count(in: Self.queue([])) == 0)
        #expect(ServerFrameBatch.count(in: Self.queue([10])) == 0)
        #expect(ServerFrameBatch.count(in: Self.queue([10, 20, 30])) == 3)
        // One fragment in all, headers included: the third message would not fit.
        let max = ServerFrameBatch.maxBytes
        // Frames of 102 + (10 + x) + 12 bytes: x is past 64 KiB, so its header is 10 bytes.
        #expect(ServerFrameBatch.headerSize(length: max - 124) == 10)
        #expect(ServerFrameBatch.count(in: Self.queue([100, max - 124, 10])) == 3)
        #expect(ServerFrameBatch.count(in: Self.queue([100, max - 123, 10])) == 2)
        #expect(ServerFrameBatch.count(in: Self.queue([100, max - 111, 10])) == 0)
        // A message longer than its fragment size is framed by lws, so it ends a batch.
        var q = Self.queue([10, 10])
        q.append(OutboundMessage(payload: [UInt8](repeating: 1, count: 50), kind: .text, fragmentSize: 20))
        q.append(OutboundMessage(payload: [1], kind: .text))
        #expect(ServerFrameBatch.count(in: q) == 2)
        // A message half written (continuation frames under way) is never batched.
        var partial = Self.queue([10, 10, 10])
        partial.advanceFirst(by: 5)
        #expect(ServerFrameBatch.count(in: partial) == 0)
    }

    @Test func framesAreTheMessagesBackToBack() {
        var q = Self.queue([3, 0])
        q.append(OutboundMessage(payload: [0xFF, 0x00], kind: .binary))
        let frames = ServerFrameBatch.frames(of: 3, in: q)
        #expect(frames == [0x81, 3, 0x61, 0x61, 0x61, 0x81, 0, 0x82, 2, 0xFF, 0x00])
        #expect(ServerFrameBatch.frames(of: 1, in: q) == [0x81, 3, 0x61, 0x61, 0x61])
    }

    @Test func removingABatchKeepsTheQueuesCount() {
        var q = Self.queue([3, 4, 5])
        q.removeWhole(2)
        #expect(q.count == 1)
        #expect(q.queuedBytes == 5)
        #expect(q.first?.payload.count == 5)
        q.removeWhole(5)
        #expect(q.isEmpty)
        #expect(q.queuedBytes == 0)
    }

    /// A message with headroom (``OutboundBatch/send(_:headroom:to:)``): the spare bytes are
    /// never part of it, batched or framed in place.
    @Test func theHeadroomIsNeverPartOfTheMessage() {
        let headroom = OutboundBatch.frameHeadroom
        let spare = [UInt8](repeating: 0xEE, count: headroom)
        let message = OutboundMessage(storage: spare + [1, 2, 3], headroom: headroom, kind: .text)
        #expect(Array(message.payload) == [1, 2, 3])
        #expect(message.payloadArray == [1, 2, 3])
        #expect(message.framesInPlace)
        #expect(!OutboundMessage(payload: [1, 2, 3], kind: .text).framesInPlace)
        var q = OutboundQueue()
        q.append(message)
        q.append(OutboundMessage(payload: [4], kind: .text))
        q.append(message)
        #expect(q.queuedBytes == 7)
        #expect(ServerFrameBatch.frames(of: 3, in: q) == [0x81, 3, 1, 2, 3, 0x81, 1, 4, 0x81, 3, 1, 2, 3])
    }

    @Test func storedHeadersMatchAppendedOnesForEveryLengthForm() {
        for length in [0, 1, 125, 126, 0xFFFF, 0x10000, 1 << 40] {
            for (isFirst, isFinal) in [(true, true), (true, false), (false, false), (false, true)] {
                var appended: [UInt8] = []
                ServerFrameBatch.appendHeader(kind: .binary, length: length, isFirst: isFirst, isFinal: isFinal, into: &appended)
                var stored = [UInt8](repeating: 0xAA, count: 12)
                let n = stored.withUnsafeMutableBytes {
                    ServerFrameBatch.storeHeader(kind: .binary, length: length, isFirst: isFirst, isFinal: isFinal, at: $0.baseAddress!)
                }
                #expect(n == ServerFrameBatch.headerSize(length: length))
                #expect(Array(stored.prefix(n)) == appended)
                #expect(stored[n...].allSatisfy { $0 == 0xAA })
                #expect(appended[0] == (isFinal ? 0x80 : 0) | (isFirst ? 0x2 : 0x0))
            }
        }
    }

    /// Which messages of the burst are sent with headroom, so framed in place.
    enum Headroom: String, CaseIterable, CustomTestStringConvertible {
        case none, all, mixed
        var testDescription: String { rawValue }
        func applies(to index: Int) -> Bool { self == .all || (self == .mixed && index % 3 != 0) }
    }

    /// Over lws: one burst queued in one hand-off, so WRITEABLE finds many messages at once:
    /// empty, 125/126-byte boundaries, 64 KiB whole, a 200 KiB one in continuation frames; with
    /// no headroom (staged and framed by lws, or batched), all framed in place, or a mix.
    @Test(arguments: Headroom.allCases)
    func aBurstOfMixedSizesReachesTheClientWholeAndInOrder(headroom: Headroom) async throws {
        // 15 rounds of ~355 KiB: under the default 8 MiB outbound cap.
        let server = try WebSocketServer(configuration: ServerConfiguration())
        let opened = EventLog(server.events)
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        let id = try await opened.first("opened") { if case .opened(let id, _) = $0 { id } else { nil } }
        var sizes: [Int] = []
        for round in 0..<15 {
            sizes += [0, 1, 64, 125, 126, 127, 1000, 0xFFFF - 10, 200 << 10, 16 << 10, 64 << 10, round]
        }
        var batch = OutboundBatch()
        let messages = sizes.enumerated().map { index, size in
            Array("\(index):".utf8) + [UInt8](repeating: UInt8(ascii: "a") + UInt8(index % 26), count: size)
        }
        for (index, message) in messages.enumerated() {
            if headroom.applies(to: index) {
                let room = OutboundBatch.frameHeadroom
                batch.send([UInt8](repeating: 0, count: room) + message, headroom: room, to: id)
            } else {
                batch.send(message, to: id)
            }
        }
        server.send(batch)
        try await log.waitUntil("\(messages.count) messages", timeout: .seconds(60)) { $0.count >= messages.count }
        let received = log.events.compactMap { event -> [UInt8]? in
            if case .message(let bytes) = event { bytes } else { nil }
        }
        #expect(received.count == messages.count)
        #expect(received == messages)
        try await stop(client)
        try await stop(server)
    }
}
