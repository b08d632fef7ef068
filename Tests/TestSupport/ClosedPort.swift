#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port that refuses connections for as long as this object lives: a TCP socket
/// bound to 127.0.0.1 that never listens, so a connect gets a reset (ECONNREFUSED).
///
/// Better than "start a server, note its port, stop it": once the port is free again, any test
/// running in parallel may be given it, and the connect then reaches that test's server.
public final class ClosedPort: Sendable {
    /// The port number.
    public let port: Int
    private let fd: Int32

    /// Binds a fresh socket to 127.0.0.1 on a port the kernel picks.
    public init() throws {
        (fd, port) = try bindLoopbackSocket()
    }

    deinit { close(fd) }
}

/// A TCP socket bound to 127.0.0.1 on a port the kernel picks: its descriptor and port.
func bindLoopbackSocket() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    // `address` and `length` are locals; bind(2) and getsockname(2) use them only during the call.
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else {
        let code = errno
        close(fd)
        throw TestFailure("bind: errno \(code)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
