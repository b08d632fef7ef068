#if canImport(Glibc)
    import Glibc
#endif

/// A TCP client written with plain sockets, for tests whose peer misbehaves on purpose: never
/// reading, never answering pings, speaking raw HTTP or raw WebSocket frames. Reads wait with
/// ``waitReadable(_:timeoutMilliseconds:)``, never blocking a cooperative thread.
public final class TCPClientSocket {
    /// A socket call failed: which one, and its errno.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, e.g. `connect: errno 111`.
        public let description: String

        /// A failure that says `description`.
        public init(description: String) { self.description = description }
    }

    private let fd: Int32

    /// Connects to `host`:`port`; a non-nil `receiveBuffer` shrinks SO_RCVBUF first (so the
    /// peer's writes pile up quickly).
    public init(port: Int, host: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        // `address` is a local of this function; connect(2) only reads it during the call.
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: a class whose init throws after full initialization still runs deinit,
        // and closing twice could close a descriptor another thread has reused meanwhile.
        guard result == 0 else { throw Failure(description: "connect: errno \(errno)") }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Ends the connection both ways now (FIN to the peer), whoever else still holds the socket;
    /// the descriptor itself is closed by deinit.
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Ends this side's sending (FIN to the peer) and keeps reading.
    public func shutdownWriting() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends all of `bytes` (no SIGPIPE when the peer is gone: a ``Failure`` instead).
    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            // `bytes` is owned by the caller and alive for the call; send(2) only reads it.
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
    }

    /// Reads and drops what arrives until the peer ends the connection (true: end of file or a
    /// reset), or until nothing at all arrived for `timeoutMilliseconds` (false).
    public func waitForEnd(timeoutMilliseconds: Int32) async -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while await waitReadable(fd, timeoutMilliseconds: timeoutMilliseconds) {
            // `chunk` is owned by this function; recv(2) fills at most its count.
            let n = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return true }
        }
        return false
    }

    /// Waits up to `timeoutMilliseconds` for data and reads what has arrived, at most `maxBytes`;
    /// nil at end of file, on an error or on timeout.
    public func receive(maxBytes: Int, timeoutMilliseconds: Int32) async -> [UInt8]? {
        guard await waitReadable(fd, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        var chunk = [UInt8](repeating: 0, count: maxBytes)
        // `chunk` is owned by this function; recv(2) fills at most its `maxBytes`.
        let n = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Array(chunk[..<n])
    }
}
