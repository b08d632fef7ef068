import Foundation
import Primitives
import RelayConsole

#if canImport(Glibc)
    import Glibc
#endif

/// The relay console's `state` events (`GET /console/api/events`, PROTOCOL.md's console
/// section; on a cluster, the leading node's), decoded as the relay pushes them: the state on connect, then after every change
/// (at most one per 150 ms). What the runner awaits instead of asking the relay again and
/// again: a device showing up, the counters an `expectRelay` step wants.
///
/// Read over a plain loopback socket, not `URLSession`: ending a corelibs `URLSessionTask`
/// with `cancel()` while the relay ends the stream (the relay of a step that just stopped)
/// crashes in corelibs' task registry ("Trying to access a behaviour for a task that in not in
/// the registry"), which took down a whole `simulate --cluster` run. ``close()`` here shuts the
/// socket down, and the reader thread ends on its own.
struct ConsoleStateStream: Sendable {
    /// The states, in order; finishes when the stream ends or ``close()`` was called.
    let states: AsyncStream<ConsoleJSON.State>
    private let readers: [EventReader]

    /// Opens the event stream of the console on `127.0.0.1:port` with `token`.
    static func open(port: Int, token: String) throws -> ConsoleStateStream {
        try open(ports: [port], token: token)
    }

    /// Opens the event streams of the consoles on `127.0.0.1:` each of `ports` (a cluster's
    /// nodes) as one: the states of the node that leads as they come (each says its
    /// ``ConsoleJSON/Node``; an edge's are left out), finishing once every stream ended.
    static func open(ports: [Int], token: String) throws -> ConsoleStateStream {
        let (states, sink) = AsyncStream.makeStream(of: ConsoleJSON.State.self, bufferingPolicy: .bufferingNewest(64))
        let open = LockedState(ports.count)
        var readers: [EventReader] = []
        do {
            for port in ports {
                readers.append(
                    try EventReader(port: port, token: token, sink: sink) {
                        if open.withLock({ n in
                            n -= 1
                            return n == 0
                        }) {
                            sink.finish()
                        }
                    })
            }
        } catch {
            for reader in readers { reader.close() }
            throw error
        }
        return ConsoleStateStream(states: states, readers: readers)
    }

    /// Ends the requests (the relays see the subscriber leave).
    func close() {
        for reader in readers { reader.close() }
    }
}

/// One console's event stream on a socket of its own, read on a thread of its own: splits the
/// response body into events (blank-line separated) and yields each `state` one.
private final class EventReader: Sendable {
    /// The socket, until the reader thread closes it (then nil, so ``close()`` cannot shut down
    /// a descriptor number the process has since reused).
    private let socket: LockedState<Int32?>

    init(
        port: Int, token: String, sink: AsyncStream<ConsoleJSON.State>.Continuation, ended: @escaping @Sendable () -> Void
    ) throws {
        let fd = try Self.connect(port: port)
        let request =
            "GET /console/api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(token)\r\n"
            + "Accept: text/event-stream\r\n\r\n"
        var bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeMutableBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                Glibc.close(fd)
                throw StepFailure(expected: "the console's event stream on port \(port)", seen: String(cString: strerror(code)))
            }
            sent += n
        }
        socket = LockedState(fd)
        let reader = Thread { [socket] in
            Self.read(fd, into: sink)
            socket.withLock { open in
                Glibc.close(fd)
                open = nil
            }
            ended()
        }
        reader.name = "watchrelay-console-events"
        // Ends with the stream (the relay's end, or close()): nothing waits for the thread.
        reader.start()
    }

    /// Shuts the socket down: the reader's `read` returns and the thread ends.
    func close() {
        socket.withLock { open in
            if let fd = open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private static func connect(port: Int) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw StepFailure(expected: "a socket for the console", seen: String(cString: strerror(errno)))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            Glibc.close(fd)
            throw StepFailure(expected: "the console on port \(port)", seen: String(cString: strerror(code)))
        }
        return fd
    }

    /// Reads the response to its end: the head (a status other than 200 ends it), then events.
    private static func read(_ fd: Int32, into sink: AsyncStream<ConsoleJSON.State>.Continuation) {
        var buffer: [UInt8] = []
        var inBody = false
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            buffer.append(contentsOf: chunk[0..<n])
            if !inBody {
                guard let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) else { continue }
                let statusLine = String(decoding: buffer[..<end.lowerBound], as: UTF8.self).prefix { $0 != "\r" }
                guard statusLine.split(separator: " ").dropFirst().first == "200" else { return }
                buffer.removeSubrange(..<end.upperBound)
                inBody = true
            }
            while let end = buffer.firstRange(of: [10, 10]) {
                yieldState(String(decoding: buffer[..<end.lowerBound], as: UTF8.self), to: sink)
                buffer.removeSubrange(..<end.upperBound)
            }
        }
    }

    private static func yieldState(_ block: String, to sink: AsyncStream<ConsoleJSON.State>.Continuation) {
        let lines = block.split(separator: "\n")
        guard lines.contains("event: state"), let data = lines.first(where: { $0.hasPrefix("data: ") }) else { return }
        // A cluster node that does not lead shows none of the core's state: left out.
        if let state = try? JSONDecoder().decode(ConsoleJSON.State.self, from: Data(data.dropFirst(6).utf8)),
            state.isLeading
        {
            sink.yield(state)
        }
    }
}

extension ConsoleJSON.State {
    /// The relay's counters as the state shows them: open connections (paired devices
    /// connected, plus connections not in a pair), pairs, queued items.
    var counters: RelayCounters {
        RelayCounters(
            connections: unpairedConnections + pairs.reduce(0) { $0 + $1.devices.filter(\.connected).count },
            pairs: pairs.count, queued: pairs.reduce(0) { $0 + $1.directions.reduce(0) { $0 + $1.count } })
    }
}

/// The relay counters an `expectRelay` step checks.
struct RelayCounters: Sendable, Equatable, CustomStringConvertible {
    var connections: Int
    var pairs: Int
    var queued: Int

    var description: String { "pairs \(pairs), queued \(queued), connections \(connections)" }
}
