import Foundation
import RelayCore
import RelayProtocol
import TestSupport
import Testing

/// A watch that reads, but slowly (one frame at a time, pausing in between), while the phone
/// sends faster than it reads: the relay closes it with a 1008 close frame that reaches it after
/// the bytes already in flight (PROTOCOL.md §2.2), not with a bare TCP close (seen as 1006).
@Suite(.timeLimit(.minutes(2)))
struct SlowReaderTests {
    /// A relay with a 256 KiB outbound cap and the given keepalive, a paired phone, and the
    /// watch on a raw socket (a 4 KiB receive buffer) that said `hello` and read its `welcome`.
    private func slowWatch(pingAfter: Int, hangupAfter: Int) async throws -> (TestRelay, TestDevice, RawWebSocket, Welcome) {
        let relay = try await TestRelay.start { c in
            c.maxQueuedBytesPerConnection = 256 << 10
            c.pingAfterSeconds = pingAfter
            c.hangupAfterSeconds = hangupAfter
        }
        let (phone, firstWatch, _, watchToken) = try await pairDevices(relay)
        firstWatch.connection.close()
        _ = try await firstWatch.closed()
        _ = try await phone.next()  // peer: the watch left

        let slow = try RawWebSocket(port: relay.server.port)
        try await slow.upgrade(port: relay.server.port)
        let hello = Hello(id: "h-slow", role: .watch, deviceName: "Slow", token: watchToken, foreground: true, lastSeq: 0)
        try slow.sendText(FrameCodec.encode(.hello(hello)))
        // With a 1 s keepalive a ping can come first on a loaded machine (a fresh-clone run).
        var first = try await slow.readFrame()
        while let ping = first, ping.opcode == 0x9 {
            try slow.sendFrame(opcode: 0xA, ping.payload)
            first = try await slow.readFrame()
        }
        guard let first, case .welcome(let welcome) = try FrameCodec.decodeRelayFrame(first.payload)
        else { throw TestFailure("the slow watch got no welcome") }
        return (relay, phone, slow, welcome)
    }

    /// Reads one frame, pauses, reads the next, answering pings, until the close frame (returned)
    /// or the end of the connection or `silence` ms (scaled) without a frame (nil).
    private func readSlowly(
        _ slow: RawWebSocket, pause: Duration, silence: Int
    ) async throws -> (close: RawWebSocket.Frame?, delivers: Int, pings: Int) {
        var delivers = 0
        var pings = 0
        while let frame = try await slow.readFrame(timeoutMilliseconds: Int32(Double(silence) * timeoutScale)) {
            switch frame.opcode {
            case 0x8: return (frame, delivers, pings)
            case 0x1: delivers += 1
            case 0x9:
                pings += 1
                try? slow.sendFrame(opcode: 0xA, frame.payload)
            default: break
            }
            try await Task.sleep(for: pause)
        }
        return (nil, delivers, pings)
    }

    @Test func aWatchThatReadsSlowlyGetsA1008CloseFrameWithTheReason() async throws {
        let (relay, phone, slow, welcome) = try await slowWatch(pingAfter: 600, hangupAfter: 700)
        #expect(welcome.limits.windowItems == 256 && welcome.limits.windowBytes == 1 << 20, "the window is announced")

        // 12 MB of messages at once: far more than the 256 KiB cap plus what loopback's socket
        // buffers can hold (a few MB each way once autotuned: 2.4 MB once all fit, on a loaded
        // machine whose slow reader kept up, and nothing was closed), as fast as the relay takes them.
        let filler = String(repeating: "m", count: 8_000)
        let count = 1_500
        for n in 0..<count {
            phone.send(.send(Send(id: "m-\(n)", mode: .message, payload: Payload(kind: "test.fill", ["s": .string(filler)]))))
        }

        // One frame, a pause, the next: slower than the relay writes, never stopped.
        let (close, delivers, _) = try await readSlowly(slow, pause: .milliseconds(2), silence: 20_000)
        #expect(close != nil, "a close frame arrived (after \(delivers) delivers), not just the end of the TCP stream")
        #expect(close?.closeCode == 1008)
        #expect(close?.closeReason == "outbound queue limit exceeded")
        #expect(delivers < count, "the backlog past the cap was dropped")
        await relay.stop()
    }

    /// The same, with keepalive on: the watch reads a frame every 30 ms and answers the pings it
    /// finds, while the phone sends faster than that for a while. The close frame and what is in
    /// flight ahead of it take the watch longer than lws 4.1's own close allowed (5 s to write the
    /// frame, 5 s for the answer; then a bare close, and the pong the watch wrote after it made
    /// the relay's kernel reset the connection, discarding what the watch had not read).
    @Test func aWatchThatReadsSlowlyAndAnswersPingsStillGetsTheCloseFrame() async throws {
        let (relay, phone, slow, _) = try await slowWatch(pingAfter: 1, hangupAfter: 30)

        // 8 KB every 5 ms (1.6 MB/s) against 8 KB read every 30 ms: the cap is passed within
        // seconds, with pings in the stream ahead of the close frame.
        let filler = String(repeating: "m", count: 8_000)
        let sender = Task {
            for n in 0..<1_500 where !Task.isCancelled {
                phone.send(.send(Send(id: "m-\(n)", mode: .message, payload: Payload(kind: "test.fill", ["s": .string(filler)]))))
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        defer { sender.cancel() }

        let (close, _, pings) = try await readSlowly(slow, pause: .milliseconds(30), silence: 40_000)
        #expect(close != nil, "a close frame arrived (\(pings) pings answered on the way), not a reset or a bare end")
        #expect(close?.closeCode == 1008)
        #expect(close?.closeReason == "outbound queue limit exceeded")
        await relay.stop()
    }
}
