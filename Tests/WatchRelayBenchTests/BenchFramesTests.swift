import RelayProtocol
import Testing

@testable import WatchRelayBench

/// The load generator's reading of frames: what it sends must be a frame the relay accepts, and
/// what it reads back (sequence, timestamp, `seq`, frame type) must come from the relay's real
/// encoder, not from a hand-written frame.
struct BenchFramesTests {
    /// The generator's send frame as the relay decodes it.
    private func decodedSend(_ frame: [UInt8]) throws -> Send {
        guard case .send(let send) = try FrameCodec.decodeClientFrame(frame) else {
            throw BenchFramesTestError.notASend
        }
        return send
    }

    /// The `deliver` the relay writes for `send`.
    private func relayDeliver(of send: Send, seq: Int64) -> [UInt8] {
        let sentAt = Timestamp(millisecondsSinceEpoch: 1_780_000_000_123)
        let deliver = Deliver(seq: seq, mode: send.mode, id: send.id, from: .phone, sentAt: sentAt, payload: send.payload)
        return FrameCodec.encode(.deliver(deliver))
    }

    @Test(arguments: [64, 1024, 16384, 65536])
    func aSendFrameOfEverySizeIsValidAndItsDeliverReadsBack(payloadBytes: Int) throws {
        let factory = BenchFrameFactory(mode: "message", payloadBytes: payloadBytes)
        let stamp = BenchClock.base + 123_456_789
        let send = try decodedSend(factory.make(sequence: 42, at: stamp))
        #expect(send.id == "m0000000042")
        #expect(send.mode == .message)
        #expect(send.payload.encodedSize == payloadBytes)

        let deliver = relayDeliver(of: send, seq: 7_001)
        #expect(BenchDelivery.isRelayFrame(deliver, type: .deliver))
        #expect(!BenchDelivery.isRelayFrame(deliver, type: .accepted))
        let delivery = try #require(BenchDelivery.parse(deliver))
        #expect(delivery.sequence == 42)
        #expect(delivery.sentAt == stamp)
        #expect(BenchDelivery.relaySeq(deliver) == 7_001)
    }

    @Test func everySequenceAndStampDigitIsPatchedIn() throws {
        let factory = BenchFrameFactory(mode: "userInfo", payloadBytes: 64)
        let stamp: UInt64 = 9_876_543_210_987_654
        let frame = factory.make(sequence: 1_234_567_890, at: stamp)
        let send = try decodedSend(frame)
        #expect(send.id == "m1234567890")
        #expect(send.mode == .userInfo)
        #expect(BenchDelivery.parse(frame)?.sentAt == stamp)
    }

    @Test func theRelaysAcceptedAndErrorFramesAreToldApart() {
        let accepted = FrameCodec.encode(.accepted(Accepted(re: "m0000000001")))
        #expect(BenchDelivery.isRelayFrame(accepted, type: .accepted))
        #expect(!BenchDelivery.isRelayFrame(accepted, type: .deliver))
        #expect(BenchDelivery.parse(accepted) == nil)  // no payload.at: not a delivery
        for wcCode in [nil, 7014] {
            let error = FrameCodec.encode(.error(ErrorFrame(re: "m0000000001", code: .notPaired, message: "no watch", wcCode: wcCode)))
            #expect(BenchDelivery.isRelayFrame(error, type: .error), "\(String(decoding: error, as: UTF8.self))")
            #expect(!BenchDelivery.isRelayFrame(error, type: .accepted))
        }
    }

    /// `wantsReply` sorts after `type`; a payload's own `type` is not the frame's.
    @Test func aDeliverIsKnownWithAKeyAfterItsTypeAndAPayloadTypeIsNot() throws {
        let payload = try Payload(bytes: Array(#"{"kind":"x","type":"accepted"}"#.utf8))
        let sentAt = Timestamp(millisecondsSinceEpoch: 1_780_000_000_123)
        for wantsReply in [nil, true, false] {
            let deliver = FrameCodec.encode(
                .deliver(Deliver(seq: 1, mode: .message, id: "m1", from: .phone, sentAt: sentAt, payload: payload, wantsReply: wantsReply)))
            #expect(BenchDelivery.isRelayFrame(deliver, type: .deliver), "\(String(decoding: deliver, as: UTF8.self))")
            #expect(!BenchDelivery.isRelayFrame(deliver, type: .accepted))
        }
    }

    @Test func shortOrForeignFramesReadAsNothing() {
        for text in ["", "{}", #"{"type":"deliver"}"#, #""type":"deliver"}"#, #"{"id":"m12","at":}"#, "not json at all"] {
            let bytes = Array(text.utf8)
            #expect(BenchDelivery.parse(bytes) == nil, "\(text)")
            #expect(BenchDelivery.relaySeq(bytes) == nil, "\(text)")
        }
        #expect(!BenchDelivery.isRelayFrame(Array(#"x"type":"deliver"}"#.utf8), type: .accepted))
        #expect(!BenchDelivery.isRelayFrame([], type: .deliver))
    }

    @Test func theProbeHasNoSequence() {
        let probe = BenchFrameFactory(mode: "message", payloadBytes: 64).probe
        #expect(BenchDelivery.parse(probe) == nil)
    }
}

private enum BenchFramesTestError: Error {
    case notASend
}
