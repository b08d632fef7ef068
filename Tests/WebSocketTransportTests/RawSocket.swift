import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP client on 127.0.0.1 for peers that misbehave on purpose: never reading, never
/// answering pings, or speaking raw HTTP (a ``TCPClientSocket`` with HTTP helpers).
final class RawSocket {
    typealias Failure = TCPClientSocket.Failure

    private let socket: TCPClientSocket

    /// Connects to `host`:`port`; a non-nil `receiveBuffer` shrinks SO_RCVBUF first.
    init(port: Int, host: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        socket = try TCPClientSocket(port: port, host: host, receiveBuffer: receiveBuffer)
    }

    /// Ends the connection (the peer sees it leave).
    func close() {
        socket.shutdown()
    }

    /// Stops sending (the peer sees a FIN) and goes on reading.
    func finishSending() {
        socket.shutdownWriting()
    }

    func write(_ text: String) throws {
        try socket.send(Array(text.utf8))
    }

    func write(bytes: [UInt8]) throws {
        try socket.send(bytes)
    }

    /// Sends one masked text frame (mask key 0: the payload goes as it is) of under 126 bytes.
    func sendText(_ text: String) throws {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        try socket.send([0x81, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload)
    }

    /// Sends the first frame of a text message that never ends (FIN clear, mask key 0): a
    /// 16- or 64-bit length for `count` bytes of `x`, of which only `sending` (default all) go.
    func sendUnfinished(count: Int, sending: Int? = nil) throws {
        var header: [UInt8] = [0x01]
        if count < 1 << 16 {
            header += [0x80 | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            header.append(0x80 | 127)
            header += (0..<8).reversed().map { UInt8((count >> ($0 * 8)) & 0xFF) }
        }
        try socket.send(header + [0, 0, 0, 0] + [UInt8](repeating: UInt8(ascii: "x"), count: sending ?? count))
    }

    /// Reads until `terminator` appears, the peer closes, or `timeoutMilliseconds` pass.
    func read(until terminator: String? = nil, timeoutMilliseconds: Int32 = 5000) async -> String {
        var received: [UInt8] = []
        while true {
            if let terminator, String(decoding: received, as: UTF8.self).contains(terminator) { break }
            guard let chunk = await socket.receive(maxBytes: 4096, timeoutMilliseconds: timeoutMilliseconds) else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads until `count` bytes came, the peer closes, or `timeoutMilliseconds` of silence.
    func readBytes(_ count: Int, timeoutMilliseconds: Int32 = 5000) async -> [UInt8] {
        var received: [UInt8] = []
        while received.count < count {
            guard let chunk = await socket.receive(maxBytes: 64 << 10, timeoutMilliseconds: timeoutMilliseconds) else { break }
            received += chunk
        }
        return received
    }

    /// Whether the peer ends the connection before `timeoutMilliseconds` pass with nothing from it.
    func waitForEnd(timeoutMilliseconds: Int32 = 5000) async -> Bool {
        await socket.waitForEnd(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Sends a WebSocket upgrade request and returns the response head.
    func upgrade(port: Int, path: String = "/v1", subprotocol: String? = "watchrelay.v1") async throws -> String {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
        request += "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        request += "Sec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        try write(request + "\r\n")
        return await read(until: "\r\n\r\n")
    }

    /// Sends a plain HTTP GET with `Connection: close` and returns the whole response.
    func get(_ path: String) async throws -> String {
        try write("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return await read()
    }
}

/// A listening TCP socket on 127.0.0.1 that never accepts: connects complete in the kernel, and
/// the peer then waits forever for an answer (for connect timeouts and cancellation).
final class SilentListener: Sendable {
    private let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw RawSocket.Failure(description: "listen: errno \(errno)") }  // deinit closes
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }
}
