import Foundation
import Primitives
import TestSupport
import Testing
import WebSocketTransport

/// Streaming HTTP responses (server-sent events): written from any thread, sent by the service
/// thread as they come, closed when the client goes away (noticed by the next write at the
/// latest) or stops reading.
@Suite(.timeLimit(.minutes(5)))
struct HTTPStreamTests {
    @Test func bytesWrittenFromAnotherThreadReachTheClientAndAClosedClientClosesTheStream() async throws {
        let opened = LockedState<HTTPStream?>(nil)
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                httpHandler: { request in
                    guard request.path == "/events" else { return .text("no", status: 404) }
                    let stream = HTTPStream()
                    stream.write(Array("event: hello\ndata: first\n\n".utf8))
                    opened.withLock { $0 = stream }
                    return .eventStream(stream)
                }))
        let client = try await EventStreamClient.open(port: server.port, "/events")
        #expect(client.status == 200 && client.headers.lowercased().contains("text/event-stream") == true)
        #expect(await client.next()?.data == "first")
        let stream = try #require(opened.withLock { $0 })
        // A plain thread, not the service thread: the write wakes it through the inbox.
        Thread { stream.write(Array("event: later\ndata: from a thread\n\n".utf8)) }.start()
        let later = await client.next()
        #expect(later?.name == "later" && later?.data == "from a thread")
        #expect(!stream.isClosed)
        client.close()
        // lws notices at the latest when it writes to the gone client (a comment line here).
        try await eventually(10, "the server to notice the client left") {
            stream.write(Array(": still there?\n\n".utf8))
            return stream.isClosed
        }
        #expect(!stream.write([1]))
        await server.shutdown()
    }

    /// A backlog of megabytes written before the client reads goes out whole and in order, in
    /// the service thread's chunks (each chunk used to copy the rest of the backlog: draining
    /// 4 MiB copied about 512 MiB on the service thread).
    @Test func aLargeBacklogArrivesWholeAndInOrder() async throws {
        let events = 100_000  // 1.6 MB, below the stream's 4 MiB cap
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                httpHandler: { _ in
                    let stream = HTTPStream()
                    for i in 0..<events {
                        let digits = String(i)
                        stream.write(Array(("data: " + String(repeating: "0", count: 8 - digits.count) + digits + "\n\n").utf8))
                    }
                    return .eventStream(stream)
                }))
        let socket = try RawSocket(port: server.port)
        try socket.write("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let head = Array(await socket.read(until: "\r\n\r\n").utf8)
        let headEnd = try #require(head.firstRange(of: Array("\r\n\r\n".utf8))).upperBound
        let body = Array(head[headEnd...]) + (await socket.readBytes(events * 16 - (head.count - headEnd)))
        #expect(body.count == events * 16)
        let lines = String(decoding: body, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == events)
        #expect(lines.enumerated().allSatisfy { i, line in Int(line.dropFirst(6)) == i })
        await server.shutdown()
    }

    /// A client whose side of the connection ended (its FIN came) is gone for a stream: the
    /// next write closes the stream instead of writing. A console event stream whose page went
    /// away kept its place for two heartbeats (30 s) before, and a client that stopped sending
    /// but kept reading was never noticed (found by a black-box probe of the console).
    @Test func aClientThatEndedItsSideClosesTheStreamAtTheNextWrite() async throws {
        let opened = LockedState<HTTPStream?>(nil)
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                httpHandler: { _ in
                    let stream = HTTPStream()
                    stream.write(Array("event: hello\ndata: first\n\n".utf8))
                    opened.withLock { $0 = stream }
                    return .eventStream(stream)
                }))
        let socket = try RawSocket(port: server.port)
        try socket.write("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await socket.read(until: "data: first").contains("data: first"))
        let stream = try #require(opened.withLock { $0 })
        socket.finishSending()
        // Still reading: no write fails, so only the FIN can tell (it may take a moment to come).
        try await eventually(10, "the stream to close at a write after the client's FIN") {
            stream.write(Array(": still there?\n\n".utf8))
            return stream.isClosed
        }
        #expect(await socket.waitForEnd(timeoutMilliseconds: 10_000), "the server ended the connection")
        await server.shutdown()
    }

    @Test func aStreamWhoseClientStopsReadingClosesAtItsLimit() {
        let stream = HTTPStream(maxPending: 8)
        #expect(stream.write(Array("12345678".utf8)))
        #expect(!stream.write([9]))
        #expect(stream.isClosed)
        let closed = HTTPStream()
        closed.close()
        #expect(closed.isClosed && !closed.write([1]))
    }
}
