import Foundation
import RelayCore
import RelayProtocol
import RelayServer
import TestSupport
import Testing
import WebSocketTransport

/// Which store a test relay runs on.
enum TestStore: String, Sendable, CustomTestStringConvertible {
    case sqlite, redis
    static let all: [TestStore] = [.sqlite, .redis]
    var testDescription: String { rawValue }
}

/// An in-process relay on 127.0.0.1, port 0, with its own database (or its own redis-server).
final class TestRelay: Sendable {
    let server: RelayServer
    let directory: TemporaryDirectory
    let clients: WebSocketClientContext
    /// The relay's Redis when it runs on ``TestStore/redis``.
    let redis: RedisServerProcess?
    var url: String { server.url }

    static func start(
        store: TestStore = .sqlite, _ configure: @Sendable (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> TestRelay {
        let dir = TemporaryDirectory()
        let redis = store == .redis ? try await RedisServerProcess.start() : nil
        let server = try await RelayServer.startForTest(in: dir.path) { configuration in
            configuration.redis = redis?.endpoint
            configure(&configuration)
        }
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        return TestRelay(server: server, directory: dir, clients: clients, redis: redis)
    }

    private init(server: RelayServer, directory: TemporaryDirectory, clients: WebSocketClientContext, redis: RedisServerProcess?) {
        self.server = server
        self.directory = directory
        self.clients = clients
        self.redis = redis
    }

    func stop() async {
        await clients.shutdown()
        await server.shutdown()
        await redis?.stop()
    }

    /// A raw protocol client connected to this relay.
    func device(_ role: Role, name: String? = nil) async throws -> TestDevice {
        try await TestDevice.connect(url, clients: clients, role: role, name: name ?? "Test \(role)")
    }
}

/// A raw protocol client: frames in, frames out, no RelayClient logic.
final class TestDevice: Sendable {
    let role: Role
    let name: String
    let connection: ClientConnection
    private let inbox: AsyncStream<ClientEvent>.Iterator.Box

    static func connect(_ url: String, clients: WebSocketClientContext, role: Role, name: String) async throws -> TestDevice {
        let c = try await clients.connect(to: url)
        return TestDevice(role: role, name: name, connection: c)
    }

    private init(role: Role, name: String, connection: ClientConnection) {
        self.role = role
        self.name = name
        self.connection = connection
        self.inbox = .init(connection.events.makeAsyncIterator())
    }

    func send(_ frame: ClientFrame) { connection.send(FrameCodec.encode(frame)) }
    func sendRaw(_ bytes: [UInt8]) { connection.send(bytes) }
    func sendRaw(_ text: String) { connection.send(Array(text.utf8)) }

    /// The next relay frame (fails on close or timeout).
    func next(_ seconds: Double = 5, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RelayFrame {
        try await FrameCodec.decodeRelayFrame(nextBytes(seconds))
    }

    /// The next relay frame's bytes as they came off the socket (fails on close or timeout).
    func nextBytes(_ seconds: Double = 5) async throws -> [UInt8] {
        let box = inbox
        let event = try await withTimeout(seconds, "a frame to the \(role)") { await box.next() }
        switch event {
        case .message(let bytes)?: return bytes
        case .closed(let code, let reason)?: throw TestFailure("the \(role) was closed (\(code.map(String.init) ?? "-") \(reason)) while waiting for a frame")
        case nil: throw TestFailure("the \(role)'s stream ended")
        default: throw TestFailure("unexpected event \(String(describing: event))")
        }
    }

    /// Waits for the connection to close; returns the close code.
    func closed(_ seconds: Double = 5) async throws -> UInt16? {
        let box = inbox
        return try await withTimeout(seconds, "the \(role) to close") {
            while let e = await box.next() {
                if case .closed(let code, _) = e { return code }
            }
            return nil
        }
    }

    /// Says hello and returns the welcome.
    @discardableResult
    func hello(token: String? = nil, lastSeq: Int64? = nil, foreground: Bool? = nil) async throws -> Welcome {
        send(.hello(Hello(id: "hello-\(role)", role: role, deviceName: name, token: token, foreground: foreground, lastSeq: lastSeq)))
        let frame = try await next()
        guard case .welcome(let w) = frame else { throw TestFailure("expected welcome, got \(frame)") }
        return w
    }

    func expectError(_ code: ErrorCode, re: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let f = try await next()
        guard case .error(let e) = f else {
            Issue.record("expected error \(code), got \(f)", sourceLocation: sourceLocation)
            return
        }
        #expect(e.code == code, sourceLocation: sourceLocation)
        if let re { #expect(e.re == re, sourceLocation: sourceLocation) }
    }
}

extension AsyncStream.Iterator {
    /// A reference box so a `Sendable` test device can pull from its stream.
    final class Box: @unchecked Sendable {
        // Safe: each TestDevice is driven by one test task at a time.
        private var iterator: AsyncStream.Iterator
        init(_ iterator: AsyncStream.Iterator) { self.iterator = iterator }
        func next() async -> Element? { await iterator.next() }
    }
}

/// Pairs a fresh phone and watch on `relay`; returns them connected and paired with their tokens.
func pairDevices(_ relay: TestRelay) async throws -> (phone: TestDevice, watch: TestDevice, phoneToken: String, watchToken: String) {
    try await pairDevices(url: relay.url, clients: relay.clients)
}

/// Pairs a fresh phone and watch on the relay at `url` (an in-process or child relay).
func pairDevices(url: String, clients: WebSocketClientContext) async throws -> (
    phone: TestDevice, watch: TestDevice, phoneToken: String, watchToken: String
) {
    let phone = try await TestDevice.connect(url, clients: clients, role: .phone, name: "Test phone")
    try await phone.hello()
    phone.send(.pairBegin(Request(id: "pb-1")))
    guard case .pairCode(let code) = try await phone.next() else { throw TestFailure("expected pair.code") }
    let watch = try await TestDevice.connect(url, clients: clients, role: .watch, name: "Test watch")
    try await watch.hello()
    watch.send(.pairJoin(PairJoin(id: "pj-1", code: code.code)))
    guard case .paired(let wp) = try await watch.next() else { throw TestFailure("expected paired (watch)") }
    guard case .paired(let pp) = try await phone.next() else { throw TestFailure("expected paired (phone)") }
    return (phone, watch, pp.token, wp.token)
}

func userInfo(_ id: String, _ n: Int = 0) -> ClientFrame {
    .send(Send(id: id, mode: .userInfo, payload: Payload(kind: "test.item", ["n": .int(Int64(n))])))
}
