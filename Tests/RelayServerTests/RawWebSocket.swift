import TestSupport

/// A WebSocket client on plain sockets (reads wait without blocking a cooperative thread), for a peer that misbehaves on purpose: it says
/// `hello` like any client, then stops reading, so the relay's writes pile up in the kernel and
/// then in the relay's own per-connection queue.
///
/// Only what such a peer needs: the upgrade, masked text frames out, and frames in (for the
/// `welcome`, and to look for a close frame once the relay dropped the connection).
final class RawWebSocket {
    typealias Failure = TCPClientSocket.Failure

    /// One frame as read: opcode and (unmasked) payload, and whether FIN was set.
    struct Frame {
        var opcode: UInt8
        var payload: [UInt8]
        var isFinal = true
    }

    private let socket: TCPClientSocket
    /// Bytes read from the socket and not yet parsed into frames.
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port` with a small receive buffer (so the peer fills up quickly).
    init(port: Int, receiveBuffer: Int32 = 4096) throws {
        socket = try TCPClientSocket(port: port, receiveBuffer: receiveBuffer)
    }

    /// The `/v1` upgrade offering `watchrelay.v1`, with `headers` (full lines, without CRLF)
    /// added; fails unless the answer is `101`.
    func upgrade(port: Int, headers: [String] = []) async throws {
        var request = "GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
        for header in headers { request += header + "\r\n" }
        request += "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        request += "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: watchrelay.v1\r\n\r\n"
        try socket.send(Array(request.utf8))
        let terminator = Array("\r\n\r\n".utf8)
        while true {
            if let end = Self.find(terminator, in: buffer) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + terminator.count)
                guard head.hasPrefix("HTTP/1.1 101") else { throw Failure(description: "upgrade refused: \(head)") }
                return
            }
            guard try await fill(timeoutMilliseconds: 5000) else { throw Failure(description: "no upgrade response") }
        }
    }

    /// Ends the connection now (FIN both ways); the descriptor closes when this goes.
    func close() {
        socket.shutdown()
    }

    /// Sends one masked text frame (clients must mask, RFC 6455 §5.3).
    func sendText(_ payload: [UInt8]) throws {
        try sendFrame(opcode: 0x1, payload)
    }

    /// Sends one frame: `fin` set unless told, masked unless told (a client that breaks RFC 6455 §5.3).
    func sendFrame(opcode: UInt8, _ payload: [UInt8], masked: Bool = true, fin: Bool = true) throws {
        try socket.send(Self.frame(opcode: opcode, payload, masked: masked, fin: fin))
    }

    /// Sends `bytes` as they are: a frame header no encoder would write.
    func sendRawBytes(_ bytes: [UInt8]) throws {
        try socket.send(bytes)
    }

    /// Sends several frames in one write (back to back, as one TCP segment where it fits).
    func sendFrames(_ frames: [(opcode: UInt8, payload: [UInt8])]) throws {
        try socket.send(frames.flatMap { Self.frame(opcode: $0.opcode, $0.payload, masked: true, fin: true) })
    }

    /// The wire bytes of one client frame.
    static func frame(opcode: UInt8, _ payload: [UInt8], masked: Bool, fin: Bool) -> [UInt8] {
        let maskBit: UInt8 = masked ? 0x80 : 0
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        guard masked else { return frame + payload }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        return frame
    }

    /// Reads until the connection ends, answering every ping with a pong (so keepalive never
    /// drops it); the text frames and the close frame's code (nil: no close frame; code nil:
    /// a close frame without a code) that arrived.
    func readUntilClosedAnsweringPings(timeoutMilliseconds: Int32 = 5000) async throws -> (
        texts: [[UInt8]], pings: Int, close: Frame?
    ) {
        var texts: [[UInt8]] = []
        var pings = 0
        while let frame = try await readFrame(timeoutMilliseconds: timeoutMilliseconds) {
            switch frame.opcode {
            case 0x1: texts.append(frame.payload)
            case 0x9:
                pings += 1
                try? sendFrame(opcode: 0xA, frame.payload)
            case 0x8: return (texts, pings, frame)
            default: break
            }
        }
        return (texts, pings, nil)
    }

    /// The next whole frame, or nil if the connection ended (or `timeoutMilliseconds` of silence).
    func readFrame(timeoutMilliseconds: Int32 = 5000) async throws -> Frame? {
        while true {
            if let frame = parseFrame() { return frame }
            guard try await fill(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        }
    }

    /// Reads everything until the connection ends, at most `maxBytes`; returns the close frame's
    /// code if one arrived (nil when the relay dropped the TCP connection without one), and the
    /// bytes read. A reset (the relay discarded what it had queued) ends the read like EOF.
    func drainUntilClosed(maxBytes: Int = 256 << 20) async -> (closeCode: UInt16??, bytes: Int) {
        var total = buffer.count
        var closeCode: UInt16?? = nil
        while true {
            while let frame = parseFrame() {
                guard frame.opcode == 0x8 else { continue }
                closeCode = .some(frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil)
            }
            let before = buffer.count
            guard total < maxBytes, (try? await fill(timeoutMilliseconds: 5000)) == true else { break }
            total += buffer.count - before
        }
        return (closeCode, total)
    }

    /// Whether the connection ends (EOF or reset) within `timeoutMilliseconds`; what arrives
    /// meanwhile is read and dropped.
    func waitForEnd(timeoutMilliseconds: Int32) async -> Bool {
        await socket.waitForEnd(timeoutMilliseconds: timeoutMilliseconds)
    }

    // MARK: - Private

    /// Reads what is available into `buffer`; false on EOF, error or `timeoutMilliseconds` of silence.
    private func fill(timeoutMilliseconds: Int32) async throws -> Bool {
        guard let chunk = await socket.receive(maxBytes: 64 << 10, timeoutMilliseconds: timeoutMilliseconds) else { return false }
        buffer += chunk
        return true
    }

    /// Takes one whole frame off the front of `buffer` (server frames are unmasked).
    private func parseFrame() -> Frame? {
        guard buffer.count >= 2 else { return nil }
        let opcode = buffer[0] & 0x0F
        var length = Int(buffer[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            header = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        guard buffer.count >= header + length else { return nil }
        let frame = Frame(opcode: opcode, payload: Array(buffer[header..<(header + length)]), isFinal: buffer[0] & 0x80 != 0)
        buffer.removeFirst(header + length)
        return frame
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }
}


extension RawWebSocket.Frame {
    /// The status code of a close frame (nil if it has no body).
    var closeCode: UInt16? {
        payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }

    /// The reason of a close frame.
    var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
}
