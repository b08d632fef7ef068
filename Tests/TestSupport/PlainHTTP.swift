import Foundation

/// One HTTP/1.1 request over a plain socket to 127.0.0.1 (`Connection: close`, read to the
/// end): the console tests' client, with no URLSession between the test and the relay.
public struct PlainHTTP {
    /// A response: status and body text.
    public struct Response: Sendable {
        public var status: Int
        public var headers: String
        public var body: String
    }

    /// Sends `method target` with `headers` (e.g. `Authorization: Bearer …`) and returns the answer.
    public static func request(
        port: Int, _ target: String, method: String = "GET", headers: [String] = []
    ) async throws -> Response {
        let socket = try TCPClientSocket(port: port)
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if method == "POST" { text += "Content-Length: 0\r\n" }
        for header in headers { text += header + "\r\n" }
        try socket.send(Array((text + "\r\n").utf8))
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(10 * timeoutScale))
        while ContinuousClock.now < deadline {
            guard let chunk = await socket.receive(maxBytes: 65536, timeoutMilliseconds: 1000) else {
                if Self.complete(bytes, head: method == "HEAD") { break }
                continue
            }
            bytes += chunk
            if Self.complete(bytes, head: method == "HEAD") { break }
        }
        let all = String(decoding: bytes, as: UTF8.self)
        guard let split = all.range(of: "\r\n\r\n") else {
            throw TCPClientSocket.Failure(description: "no HTTP response to \(method) \(target): '\(all)'")
        }
        let head = String(all[..<split.lowerBound])
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Response(status: status, headers: head, body: String(all[split.upperBound...]))
    }

    /// Whether `bytes` hold the whole response (headers and a `content-length` body; the
    /// headers alone for a `HEAD`, whose `content-length` is the body a GET would get).
    private static func complete(_ bytes: [UInt8], head isHead: Bool) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return false }
        if isHead { return true }
        let head = text[..<split.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return text.utf8.count - text[..<split.upperBound].utf8.count >= length
    }
}
