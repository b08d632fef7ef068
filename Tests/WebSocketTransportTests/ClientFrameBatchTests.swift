import Testing

@testable import WebSocketTransport

/// A client connection's frames are built and masked by the transport (``ClientFrameBatch``):
/// each must be an RFC 6455 masked frame that unmasks to the message, fragments must carry the
/// right opcode and FIN, and a send never grows past one default fragment. The integration
/// (every client in every suite) shows lws servers accept them.
@Suite struct ClientFrameBatchTests {
    /// A decoded masked frame: FIN, opcode, and the unmasked payload.
    struct Frame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Splits `bytes` into masked frames, unmasking each with a byte-at-a-time reference loop.
    static func decode(_ bytes: [UInt8]) throws -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while index < bytes.count {
            let fin = bytes[index] & 0x80 != 0
            let opcode = bytes[index] & 0x0F
            try #require(bytes[index + 1] & 0x80 != 0, "MASK bit")
            var length = Int(bytes[index + 1] & 0x7F)
            index += 2
            if length == 126 {
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            } else if length == 127 {
                length = bytes[index..<index + 8].reduce(0) { $0 << 8 | Int($1) }
                index += 8
            }
            let key = Array(bytes[index..<index + 4])
            index += 4
            let payload = (0..<length).map { bytes[index + $0] ^ key[$0 % 4] }
            index += length
            frames.append(Frame(fin: fin, opcode: opcode, payload: payload))
        }
        return frames
    }

    static func message(_ size: Int, _ seed: Int, kind: OutboundMessage.Kind = .text, fragmentSize: Int? = nil)
        -> OutboundMessage
    {
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
        return OutboundMessage(
            payload: payload, kind: kind, fragmentSize: fragmentSize ?? OutboundMessage.defaultFragmentSize)
    }

    @Test(arguments: [0, 1, 3, 4, 7, 8, 9, 125, 126, 1000, 0xFFFF, 0x10000 - 14])
    func aWholeMessageUnmasksToItsPayload(size: Int) throws {
        var queue = OutboundQueue()
        queue.append(Self.message(size, size))
        var keys = MaskKeys()
        #expect(ClientFrameBatch.count(in: queue) == 1)
        let bytes = ClientFrameBatch.frames(of: 1, in: queue, keys: &keys)
        #expect(bytes.count == ClientFrameBatch.frameSize(length: size))
        #expect(try Self.decode(bytes) == [Frame(fin: true, opcode: 1, payload: queue.first!.payloadArray)])
    }

    @Test func severalMessagesGoInOneSendUpToOneFragment() throws {
        var queue = OutboundQueue()
        for (i, size) in [10, 300, 0].enumerated() { queue.append(Self.message(size, i)) }
        queue.append(Self.message(5, 9, kind: .binary))
        var keys = MaskKeys()
        #expect(ClientFrameBatch.count(in: queue) == 4)
        let frames = try Self.decode(ClientFrameBatch.frames(of: 4, in: queue, keys: &keys))
        #expect(frames.map(\.payload) == queue.pending.map(\.payloadArray))
        #expect(frames.map(\.opcode) == [1, 1, 1, 2])

        let max = ClientFrameBatch.maxBytes
        var full = OutboundQueue()
        full.append(Self.message(100, 0))  // a 106-byte frame
        // A payload past 64 KiB takes the 10-byte header, and the mask key is 4: exactly fills the send.
        #expect(ServerFrameBatch.headerSize(length: max - 106 - 14) == 10)
        full.append(Self.message(max - 106 - 14, 1))
        full.append(Self.message(1, 2))
        #expect(ClientFrameBatch.count(in: full) == 2)
    }

    @Test func aLongMessageGoesOutAsContinuationFrames() throws {
        var queue = OutboundQueue()
        queue.append(Self.message(1000, 3, kind: .binary, fragmentSize: 300))
        queue.append(Self.message(2, 4))
        let payload = queue.first!.payloadArray
        var keys = MaskKeys()
        #expect(ClientFrameBatch.count(in: queue) == 0)
        var frames: [Frame] = []
        while queue.count == 2, let next = ClientFrameBatch.nextFragment(of: queue, keys: &keys) {
            frames += try Self.decode(next.frame)
            queue.advanceFirst(by: next.count)
            #expect(ClientFrameBatch.count(in: queue) == (queue.count == 2 ? 0 : 1))
        }
        #expect(frames.map(\.opcode) == [2, 0, 0, 0])
        #expect(frames.map(\.fin) == [false, false, false, true])
        #expect(frames.map(\.payload.count) == [300, 300, 300, 100])
        #expect(frames.flatMap(\.payload) == payload)
    }

    @Test func keysVary() {
        var keys = MaskKeys()
        let drawn = (0..<64).map { _ in keys.next() }
        #expect(Set(drawn).count > 60)
        // Two contexts are seeded apart.
        var first = MaskKeys()
        var second = MaskKeys()
        #expect((0..<4).map { _ in first.next() } != (0..<4).map { _ in second.next() })
    }
}
