#if canImport(Glibc)
    import Glibc

    /// Ports on 127.0.0.1 for a server a tool starts itself (a `redis-server` child of the
    /// simulator or the bench), which cannot bind port 0 and report what it got.
    public enum LoopbackPort {
        /// Why no port could be had.
        public struct Failure: Error, CustomStringConvertible, Sendable {
            public let description: String
        }

        /// A port the kernel picked as free just now: bound to port 0, read back, closed. Another
        /// process can take it before the caller's server binds it; callers retry on a bind failure.
        public static func free() throws(Failure) -> Int {
            let reservation = try Reservation()
            reservation.release()
            return reservation.port
        }

        /// A free port held bound (not listening: a connection to it is refused, as to a port
        /// nobody has) until ``release()``, so no other socket gets it meanwhile, not even a
        /// client's ephemeral port: for a test whose client dials a port before its server
        /// starts there, and starts the server right after releasing it.
        public final class Reservation: Sendable {
            /// The port.
            public let port: Int
            /// The bound socket, until released.
            private let descriptor: LockedState<Int32?>

            public init() throws(Failure) {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
                var address = loopback(port: 0)
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                // `address` and `length` are locals; bind(2) and getsockname(2) use them only during the call.
                let bound = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                    }
                }
                guard bound else {
                    let reason = String(cString: strerror(errno))
                    close(fd)
                    throw Failure(description: "bind 127.0.0.1:0: \(reason)")
                }
                descriptor = LockedState(fd)
                port = Int(UInt16(bigEndian: address.sin_port))
            }

            /// Frees the port (again: nothing); a reservation dropped unreleased frees it too.
            public func release() {
                if let fd = descriptor.withLock({ held -> Int32? in defer { held = nil }; return held }) { close(fd) }
            }

            deinit { release() }
        }

        /// `127.0.0.1:port` as a socket address.
        public static func loopback(port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            return address
        }
    }
#endif
