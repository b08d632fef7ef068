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
