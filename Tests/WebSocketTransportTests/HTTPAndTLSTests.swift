import TestSupport
import Testing

@testable import WebSocketTransport

@Suite(.timeLimit(.minutes(5)))
struct HTTPAndTLSTests {
    private static func routedServer() throws -> EchoServer {
        try EchoServer(
            ServerConfiguration(httpRoutes: [
                "/healthz": { .text("ok") },
                "/metrics": {
                    HTTPResponse(
                        contentType: "text/plain; version=0.0.4",
                        body: Array(String(repeating: "m 1\n", count: 20_000).utf8))
                },
            ]))
    }

    @Test func healthzAnswers200Ok() async throws {
        let echo = try Self.routedServer()
        let response = try await RawSocket(port: echo.server.port).get("/healthz")
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.lowercased().contains("content-length: 2"))
        #expect(response.hasSuffix("\r\n\r\nok"))
        try await stop(echo.server)
    }

    @Test func headRequestGetsHeadersWithoutBody() async throws {
        let echo = try Self.routedServer()
        let socket = try RawSocket(port: echo.server.port)
        try socket.write("HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let response = await socket.read()
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.hasSuffix("\r\n\r\n"))
        try await stop(echo.server)
    }

    @Test func largeRouteBodyArrivesWhole() async throws {
        let echo = try Self.routedServer()
        let response = try await RawSocket(port: echo.server.port).get("/metrics")
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.hasSuffix(String(repeating: "m 1\n", count: 20_000)))
        try await stop(echo.server)
    }

    @Test(arguments: ["/nope", "/v1", "/healthz/x"])
    func unknownPathAnswers404(path: String) async throws {
        let echo = try Self.routedServer()
        let response = try await RawSocket(port: echo.server.port).get(path)
        #expect(response.hasPrefix("HTTP/1.1 404"))
        try await stop(echo.server)
    }

    @Test func websocketAndHTTPShareThePort() async throws {
        let echo = try Self.routedServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        let log = EventLog(connection.events)
        #expect(try await RawSocket(port: echo.server.port).get("/healthz").hasSuffix("ok"))
        connection.send(Array("after http".utf8))
        #expect(try await log.first("echo") { $0.text } == "after http")
        try await stop(client)
        try await stop(echo.server)
    }

    @Test func wssRoundTripWithSelfSignedCertificate() async throws {
        let directory = TemporaryDirectory()
        let (certificate, key) = try await makeSelfSignedCertificate(in: directory, named: "localhost")
        let echo = try EchoServer(ServerConfiguration(tlsCertificatePath: certificate, tlsPrivateKeyPath: key))
        let client = try WebSocketClientContext()
        let url = "wss://127.0.0.1:\(echo.server.port)/v1"
        let connection = try await client.connect(to: url, allowSelfSigned: true)
        let log = EventLog(connection.events)
        let big = [UInt8](repeating: UInt8(ascii: "t"), count: 200 << 10)
        connection.send(Array("secure".utf8))
        connection.send(big)
        try await log.waitUntil("two echoes") { $0.count >= 2 }
        #expect(log.events[0].text == "secure")
        #expect(log.events[1].text?.utf8.count == big.count)
        await #expect(throws: TransportError.self) {
            _ = try await client.connect(to: url, allowSelfSigned: false)
        }
        connection.close(code: 4000, reason: "tls bye")
        #expect(try await log.first("closed") { $0.closed }.code == 4000)
        try await stop(client)
        try await stop(echo.server)
        withExtendedLifetime(directory) {}
    }

    @Test func extraHandshakeHeadersAreAcceptedAndInjectionIsRejected() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        _ = try await client.connect(to: echo.url, headers: [HTTPHeader(name: "Authorization", value: "Bearer x")])
        await #expect(throws: TransportError.self) {
            _ = try await client.connect(to: echo.url, headers: [HTTPHeader(name: "X-Bad", value: "a\r\nb: c")])
        }
        try await stop(client)
        try await stop(echo.server)
    }
}
