import Foundation
import GitExplorerPayloads
import RelayProtocol
import TestSupport
import Testing
import WebSocketTransport

/// A raw protocol client acting as the watch: frames in, frames out, no RelayClient logic.
///
/// A pump task moves every frame of the connection into a ``FrameInbox``, so waiting for a
/// frame with a timeout never ends the connection's stream.
final class RawWatch: Sendable {
    let clients: WebSocketClientContext
    let connection: ClientConnection
    let inbox: FrameInbox
    let token: String
    private let pump: Task<Void, Never>

    private init(clients: WebSocketClientContext, connection: ClientConnection, inbox: FrameInbox, token: String, pump: Task<Void, Never>) {
        self.clients = clients
        self.connection = connection
        self.inbox = inbox
        self.token = token
        self.pump = pump
    }

    /// Connects, says hello without a token, joins with `code`; returns once `paired` arrived.
    static func pair(relay url: String, code: String) async throws -> RawWatch {
        try await connect(relay: url) { watch in
            watch.send(.hello(Hello(id: "hello-watch", role: .watch, deviceName: "Test Watch", foreground: true)))
            _ = try await watch.inbox.next { if case .welcome(let w) = $0 { w } else { nil } }
            watch.send(.pairJoin(PairJoin(id: "pj-1", code: code)))
            return try await watch.inbox.next { frame -> String? in
                if case .paired(let p) = frame { return p.token }
                if case .error(let e) = frame { Issue.record("pair.join failed: \(e.code) \(e.message)") }
                return nil
            }
        }
    }

    /// Connects again with `token` (a paired watch coming back).
    static func reconnect(relay url: String, token: String, lastSeq: Int64) async throws -> RawWatch {
        try await connect(relay: url) { watch in
            watch.send(.hello(Hello(id: "hello-watch", role: .watch, deviceName: "Test Watch", token: token, foreground: true, lastSeq: lastSeq)))
            _ = try await watch.inbox.next { if case .welcome(let w) = $0 { w } else { nil } }
            return token
        }
    }

    private static func connect(relay url: String, handshake: (Handshake) async throws -> String) async throws -> RawWatch {
        let clients = try WebSocketClientContext(configuration: ClientConfiguration(enablesTLS: false))
        let connection = try await clients.connect(to: url)
        let inbox = FrameInbox()
        let pump = Task {
            for await event in connection.events {
                switch event {
                case .message(let bytes):
                    if let frame = try? FrameCodec.decodeRelayFrame(bytes) { await inbox.push(frame) }
                case .closed:
                    await inbox.push(nil)
                default: break
                }
            }
        }
        let token = try await handshake(Handshake(connection: connection, inbox: inbox))
        return RawWatch(clients: clients, connection: connection, inbox: inbox, token: token, pump: pump)
    }

    /// The connection before it is a ``RawWatch``.
    struct Handshake {
        let connection: ClientConnection
        let inbox: FrameInbox
        func send(_ frame: ClientFrame) { connection.send(FrameCodec.encode(frame)) }
    }

    func send(_ frame: ClientFrame) { connection.send(FrameCodec.encode(frame)) }

    /// The highest seq processed.
    var lastSeq: Int64 { get async { await inbox.lastSeq } }

    /// The next `favorites.snapshot` context, acknowledged; other frames are skipped.
    func nextSnapshot(_ seconds: Double = 5) async throws -> FavoritesSnapshot {
        let (seq, snapshot) = try await inbox.next(seconds) { frame -> (Int64, FavoritesSnapshot)? in
            guard case .deliver(let d) = frame, d.mode == .context, let s = try? d.payload.decode(FavoritesSnapshot.self) else {
                return nil
            }
            return (d.seq, s)
        }
        send(.ack(Ack(seq: seq)))
        return snapshot
    }

    /// Fails if a snapshot arrives within `seconds`.
    func expectNoSnapshot(for seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) async {
        if let snapshot = try? await nextSnapshot(seconds) {
            Issue.record("unexpected snapshot revision \(snapshot.revision)", sourceLocation: sourceLocation)
        }
    }

    /// Sends `favorites.delete` by userInfo; returns the send id once the relay accepted it.
    func delete(_ login: String) async throws -> String {
        let id = "del-" + UUID().uuidString.lowercased()
        send(.send(Send(id: id, mode: .userInfo, payload: LoginCommand.favoritesDelete(login).payload)))
        _ = try await inbox.next { if case .accepted(let a) = $0, a.re == id { a } else { nil } }
        return id
    }

    /// Waits for `transferred` naming `id` (the phone acknowledged it).
    func transferred(_ id: String) async throws {
        _ = try await inbox.next { if case .transferred(let t) = $0, t.ids.contains(id) { true } else { nil } }
    }

    /// Sends a message; with `wantsReply`, returns the reply payload decoded.
    @discardableResult
    func message(_ payload: Payload, wantsReply: Bool = true) async throws -> AppPayload? {
        let id = "msg-" + UUID().uuidString.lowercased()
        send(.send(Send(id: id, mode: .message, payload: payload, wantsReply: wantsReply ? true : nil)))
        _ = try await inbox.next { frame -> Bool? in
            if case .accepted(let a) = frame, a.re == id { return true }
            if case .error(let e) = frame, e.re == id { Issue.record("message refused: \(e.code)") }
            return nil
        }
        guard wantsReply else { return nil }
        let reply = try await inbox.next(10) { if case .reply(let r) = $0, r.re == id { r.payload } else { nil } }
        return try AppPayload(reply)
    }

    func close() async {
        connection.close()
        pump.cancel()
        await clients.shutdown()
    }
}

/// The frames a ``RawWatch`` received and not yet consumed.
actor FrameInbox {
    private var frames: [RelayFrame?] = []
    private var waiter: (id: Int, continuation: CheckedContinuation<RelayFrame??, Never>)?
    private var waiterCount = 0
    private(set) var lastSeq: Int64 = 0

    /// A frame (`nil`: the connection closed).
    func push(_ frame: RelayFrame?) {
        if case .deliver(let d)? = frame { lastSeq = max(lastSeq, d.seq) }
        if let waiter {
            self.waiter = nil
            waiter.continuation.resume(returning: .some(frame))
        } else {
            frames.append(frame)
        }
    }

    /// The first frame `match` accepts, dropping the frames before it; fails on close or after `seconds`.
    func next<T: Sendable>(_ seconds: Double = 5, _ match: @Sendable (RelayFrame) -> T?) async throws -> T {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * timeoutScale * 1000)))
        while true {
            guard let received = await nextFrame(until: deadline) else {
                throw TestFailure("timed out after \(seconds) s waiting for a frame to the watch")
            }
            guard let frame = received else { throw TestFailure("the watch's connection closed") }
            if let value = match(frame) { return value }
        }
    }

    /// The next frame (`.some(nil)`: closed), or `nil` at the deadline.
    private func nextFrame(until deadline: ContinuousClock.Instant) async -> RelayFrame?? {
        if !frames.isEmpty { return .some(frames.removeFirst()) }
        waiterCount += 1
        let id = waiterCount
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { waiter = (id, $0) }
    }

    private func expire(_ id: Int) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.continuation.resume(returning: nil)
    }
}
