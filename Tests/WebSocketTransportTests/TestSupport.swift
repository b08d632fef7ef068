import Foundation
import TestSupport
import Testing

@testable import WebSocketTransport

/// A test waited too long for something.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Records every event of a stream (pumped by one task) so tests can wait for conditions.
///
/// Uses `NSLock` rather than `Mutex`: ThreadSanitizer cannot follow `Mutex` on Linux.
final class EventLog<Event: Sendable>: Sendable {
    private final class Storage: @unchecked Sendable {  // every access holds `lock`
        let lock = NSLock()
        var events: [Event] = []
    }

    private let storage = Storage()
    private let pump: Task<Void, Never>

    /// Starts pumping `stream`; `onEvent` runs for each event (e.g. to echo) before it is recorded.
    init<Events: AsyncSequence<Event, Never> & Sendable>(
        _ stream: Events, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        let storage = self.storage
        pump = Task {
            for await event in stream {
                onEvent(event)
                storage.lock.withLock { storage.events.append(event) }
            }
        }
    }

    deinit { pump.cancel() }

    var events: [Event] { storage.lock.withLock { storage.events } }

    /// Waits until `condition` holds for the recorded events (`timeout` × ``timeoutScale``).
    func waitUntil(
        _ what: String, timeout: Duration = .seconds(10), _ condition: ([Event]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout * timeoutScale
        while !condition(events) {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the first recorded event that `match` maps to a value, and returns the value.
    func first<T>(
        _ what: String, timeout: Duration = .seconds(10), _ match: (Event) -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout * timeoutScale
        while true {
            if let value = events.lazy.compactMap(match).first { return value }
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the pump to see the end of the stream.
    func waitForEnd(timeout: Duration = .seconds(10)) async throws {
        try await withTimeout(timeout * timeoutScale, "end of stream") { [pump] in await pump.value }
    }
}

/// Runs `operation`, throwing ``TimedOut`` after `timeout` even if the operation ignores
/// cancellation (it is then left running in the background; the test has failed anyway).
func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let once = ResumeOnce<T>()
    var tasks: [Task<Void, Never>] = []
    defer { tasks.forEach { $0.cancel() } }
    return try await withCheckedThrowingContinuation { continuation in
        once.lock.withLock { once.continuation = continuation }
        tasks.append(
            Task {
                do { once.resume(.success(try await operation())) } catch { once.resume(.failure(error)) }
            })
        tasks.append(
            Task {
                try? await Task.sleep(for: timeout)
                once.resume(.failure(TimedOut(what: what)))
            })
    }
}

/// Resumes a continuation at most once, from whichever racer comes first.
private final class ResumeOnce<T: Sendable>: @unchecked Sendable {  // every access holds `lock`
    let lock = NSLock()
    var continuation: CheckedContinuation<T, any Error>?

    func resume(_ result: Result<T, any Error>) {
        let waiting = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}

/// A client context for plain `ws://` (TLS off, see `ClientConfiguration.enablesTLS`).
func plainClient() throws -> WebSocketClientContext {
    try WebSocketClientContext(configuration: ClientConfiguration(connectTimeoutSeconds: 5, enablesTLS: false))
}

/// Shuts a server down, failing the test if that takes more than 5 seconds.
func stop(_ server: WebSocketServer) async throws {
    try await withTimeout(.seconds(5), "server shutdown") { await server.shutdown() }
}

/// Shuts a client context down, failing the test if that takes more than 5 seconds.
func stop(_ client: WebSocketClientContext) async throws {
    try await withTimeout(.seconds(5), "client shutdown") { await client.shutdown() }
}

/// Runs `body` with a plain client context and an echo server's URL, then stops both.
func withEcho(_ body: (WebSocketClientContext, String) async throws -> Void) async throws {
    let echo = try EchoServer()
    let client = try plainClient()
    try await body(client, echo.url)
    try await stop(client)
    try await stop(echo.server)
}

/// A server whose event log echoes every text message back to its sender.
struct EchoServer {
    let server: WebSocketServer
    let log: EventLog<ServerEvent>

    init(_ configuration: ServerConfiguration = ServerConfiguration()) throws {
        let server = try WebSocketServer(configuration: configuration)
        self.server = server
        log = EventLog(server.events) { event in
            if case .message(let id, let bytes) = event { server.send(bytes, to: id) }
        }
    }

    var url: String { "ws://127.0.0.1:\(server.port)/v1" }

    /// The first opened connection's ID.
    func openedID() async throws -> ConnectionID {
        try await log.first("opened") { if case .opened(let id, _) = $0 { id } else { nil } }
    }
}

extension ClientEvent {
    /// The payload of a `.message`, as text.
    var text: String? {
        if case .message(let bytes) = self { String(decoding: bytes, as: UTF8.self) } else { nil }
    }

    /// The code and reason of a `.closed`.
    var closed: (code: UInt16?, reason: String)? {
        if case .closed(let code, let reason) = self { (code, reason) } else { nil }
    }
}

extension ServerEvent {
    /// The payload of a `.message`, as text.
    var text: String? {
        if case .message(_, let bytes) = self { String(decoding: bytes, as: UTF8.self) } else { nil }
    }
}
