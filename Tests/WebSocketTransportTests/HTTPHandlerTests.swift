import Foundation
import Testing
import WebSocketTransport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The generic plain-HTTP handler (used by the fixture GitHub server).
@Suite(.timeLimit(.minutes(5)))
struct HTTPHandlerTests {
    @Test func handlerSeesPathQueryAndHeadersAndSendsExtraHeaders() async throws {
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                httpRoutes: ["/healthz": { .text("ok") }],
                httpHandler: { request in
                    let body = "\(request.method) \(request.path) \(request.query) \(request.headers["if-none-match"] ?? "-") \(request.headers["authorization"] ?? "-")"
                    return HTTPResponse(
                        status: request.path == "/missing" ? 404 : 200, contentType: "application/json",
                        body: Array(body.utf8), headers: [HTTPHeader(name: "ETag", value: "\"abc\""), HTTPHeader(name: "Link", value: "<http://x/?page=2>; rel=\"next\"")])
                }))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/users/octocat/repos?page=2&per_page=3")!)
        request.setValue("\"etag-1\"", forHTTPHeaderField: "If-None-Match")
        request.setValue("Bearer t0k", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "GET /users/octocat/repos page=2&per_page=3 \"etag-1\" Bearer t0k")
        #expect(http.value(forHTTPHeaderField: "ETag") == "\"abc\"")
        #expect(http.value(forHTTPHeaderField: "Link")?.contains("rel=\"next\"") == true)
        let (_, missing) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/missing")!)
        #expect((missing as? HTTPURLResponse)?.statusCode == 404)
        let (ok, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/healthz")!)
        #expect(String(decoding: ok, as: UTF8.self) == "ok")
        await server.shutdown()
    }

    /// lws decodes each argument after splitting the URL's query at `&`: a `%26` inside a value
    /// is part of it. Joined and split again, `?x=%26token%3Dt` also read as `token=t`.
    @Test func aDecodedAmpersandStaysInsideItsArgument() async throws {
        let server = try WebSocketServer(
            configuration: ServerConfiguration(httpHandler: { request in
                let items = request.queryItems.sorted { $0.key < $1.key }.map { "\($0.key)=[\($0.value)]" }
                return .text(items.joined(separator: " "))
            }))
        let socket = try RawSocket(port: server.port)
        try socket.write("GET /q?x=%26token%3Dt&a=1%3D2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let response = await socket.read()
        #expect(response.hasSuffix("\r\n\r\na=[1=2] x=[&token=t]"), "\(response)")
        await server.shutdown()
    }

    /// RFC 9110 §8.6: two Content-Length headers are an unrecoverable error. lws frames the body
    /// by the first, so a request hidden in what the second announced was answered as a request
    /// of its own (request smuggling past a proxy that frames by the last).
    @Test func requestWithTwoContentLengthsIsClosedUnanswered() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration(httpRoutes: ["/healthz": { .text("ok") }]))
        let hidden = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let socket = try RawSocket(port: server.port)
        try socket.write(
            "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                + "Content-Length: \(hidden.utf8.count)\r\n\r\n\(hidden)")
        let response = await socket.read(timeoutMilliseconds: 10_000)
        #expect(!response.contains("HTTP/1.1"), "\(response)")
        #expect(await socket.waitForEnd(timeoutMilliseconds: 10_000))
        // One Content-Length is served as before.
        let single = try RawSocket(port: server.port)
        try single.write("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab")
        #expect(await single.read().hasPrefix("HTTP/1.1 200"))
        await server.shutdown()
    }
}
