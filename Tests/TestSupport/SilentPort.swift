#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port that takes connections and never answers, for as long as this object lives:
/// a TCP socket on 127.0.0.1 that listens but never accepts, so a connect succeeds (the kernel's
/// backlog) and a request sent on it waits for ever. A server that hangs, for a client that must
/// be stopped mid-request.
public final class SilentPort: Sendable {
    /// The port number.
    public let port: Int
    private let fd: Int32

    /// Binds a fresh socket to 127.0.0.1 on a port the kernel picks and listens on it.
    public init() throws {
        (fd, port) = try bindLoopbackSocket()
        guard listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw TestFailure("listen: errno \(code)")
        }
    }

    /// Whether a client connected (a connection waits in the backlog), without blocking.
    public var hasConnection: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    deinit { close(fd) }
}
