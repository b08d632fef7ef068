import Foundation

/// A server-sent-events reader over a plain socket to 127.0.0.1: sends the GET, reads the
/// status line and headers, then parses `event:`/`data:` blocks as the server pushes them.
public final class EventStreamClient {
    /// One event: its name (`message` without an `event:` line) and its data lines joined.
    public struct Event: Sendable {
        public var name: String
        public var data: String
    }

    /// The response's status code and header block.
    public let status: Int
    public let headers: String
    private let socket: TCPClientSocket
    private var buffer: [UInt8]
    /// Blocks of comments only (`:` lines: a server's heartbeat) read so far.
    public private(set) var comments = 0

    private init(socket: TCPClientSocket, status: Int, headers: String, rest: [UInt8]) {
        self.socket = socket
        self.status = status
        self.headers = headers
        self.buffer = rest
    }

    /// Opens `target` (e.g. `/console/api/events?token=…`) and waits for the response headers.
    public static func open(port: Int, _ target: String, headers: [String] = []) async throws -> EventStreamClient {
        let socket = try TCPClientSocket(port: port)
        var text = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for header in headers { text += header + "\r\n" }
        try socket.send(Array((text + "\r\n").utf8))
        var bytes: [UInt8] = []
        let end = Array("\r\n\r\n".utf8)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10 * timeoutScale))
        while ContinuousClock.now < deadline {
            if let split = bytes.firstRange(of: end) {
                let head = String(decoding: bytes[..<split.lowerBound], as: UTF8.self)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                return EventStreamClient(socket: socket, status: status, headers: head, rest: Array(bytes[split.upperBound...]))
            }
            guard let chunk = await socket.receive(maxBytes: 65536, timeoutMilliseconds: 1000) else { continue }
            bytes += chunk
        }
        throw TCPClientSocket.Failure(description: "no HTTP response to GET \(target)")
    }

    /// The next complete event, or nil when none came within `seconds` (scaled) or the stream ended.
    public func next(within seconds: Double = 10) async -> Event? {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000 * timeoutScale)))
        let blank = Array("\n\n".utf8)
        while true {
            if let split = buffer.firstRange(of: blank) {
                let block = String(decoding: buffer[..<split.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<split.upperBound)
                if let event = Self.parse(block) { return event }
                if block.hasPrefix(":") { comments += 1 }
                continue
            }
            guard ContinuousClock.now < deadline else { return nil }
            guard let chunk = await socket.receive(maxBytes: 65536, timeoutMilliseconds: 200) else { continue }
            buffer += chunk
        }
    }

    /// Reads events until one named `name` satisfies `condition`; nil if none did in time.
    public func first(
        _ name: String, within seconds: Double = 10, where condition: (String) -> Bool = { _ in true }
    ) async -> Event? {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000 * timeoutScale)))
        while ContinuousClock.now < deadline {
            guard let event = await next(within: 0.5) else { continue }
            if event.name == name, condition(event.data) { return event }
        }
        return nil
    }

    /// Ends the connection (the server sees the client leave).
    public func close() {
        socket.shutdown()
    }

    /// One block's event (nil for a block of comments or `retry:` only).
    static func parse(_ block: String) -> Event? {
        var name = "message"
        var data: [String] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
        }
        return data.isEmpty ? nil : Event(name: name, data: data.joined(separator: "\n"))
    }
}
