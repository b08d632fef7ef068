import Synchronization
import WebSocketTransport

/// How the generator speaks to one kind of relay; everything else is the same code path.
enum BenchDialect: String, Codable, Sendable {
    /// The WatchRelay protocol: `hello`, pairing by code, `send` → `deliver`.
    case watchRelay
    /// `/pair/<n>/phone` and `/pair/<n>/watch`; messages forwarded verbatim.
    case pathPairing
    /// MQTT 3.1.1 over WebSockets: the phone publishes, the watch subscribes, QoS 0.
    case mqtt
}

/// One phone → watch link the generator drives, in any dialect.
///
/// `send` may be called from any task; `delivery(from:)` belongs to the one task consuming the
/// watch's events.
final class BenchPair: Sendable {
    /// The pair's number (its path, topic or log name).
    let index: Int
    /// The sending side.
    let phone: ClientConnection
    /// The receiving side.
    let watch: ClientConnection
    let dialect: BenchDialect
    /// MQTT: the topic this pair uses.
    private let topic: String
    /// MQTT only: sequence and stamp of each published message, oldest first, because the
    /// transport does not hand over the bytes of binary messages (see ``BenchMQTT``).
    private let published = Mutex(BenchStampQueue())

    init(index: Int, phone: ClientConnection, watch: ClientConnection, dialect: BenchDialect) {
        self.index = index
        self.phone = phone
        self.watch = watch
        self.dialect = dialect
        topic = BenchMQTT.topic(pair: index)
    }

    /// Sends one frame from the phone; `sequence` and `stamp` are those written into `frame`.
    func send(_ frame: [UInt8], sequence: Int, stamp: UInt64) {
        let message = wire(frame, sequence: sequence, stamp: stamp)
        if message.isBinary { phone.sendBinary(message.bytes) } else { phone.send(message.bytes) }
    }

    /// Adds one frame from the phone to a ``ClientMessageHandler``'s `outbound` (on the
    /// service thread of the pair's context), like ``send(_:sequence:stamp:)``.
    func send(_ frame: [UInt8], sequence: Int, stamp: UInt64, outbound: inout OutboundBatch) {
        let message = wire(frame, sequence: sequence, stamp: stamp)
        if message.isBinary {
            outbound.sendBinary(message.bytes, to: phone.id)
        } else {
            outbound.send(message.bytes, to: phone.id)
        }
    }

    /// What goes on the phone's connection for `frame`: the frame itself, or an MQTT PUBLISH
    /// of it (whose sequence and stamp are queued for ``delivery(from:)``).
    private func wire(_ frame: [UInt8], sequence: Int, stamp: UInt64) -> (bytes: [UInt8], isBinary: Bool) {
        switch dialect {
        case .watchRelay, .pathPairing:
            return (frame, false)
        case .mqtt:
            published.withLock { $0.push(BenchDelivery(sequence: sequence, sentAt: stamp)) }
            return (BenchMQTT.publish(topic: topic, payload: frame), true)
        }
    }

    /// The bench message a watch event carries, or nil for anything else (probes, other frames).
    func delivery(from event: ClientEvent) -> BenchDelivery? {
        switch (dialect, event) {
        case (.watchRelay, .message(let bytes)), (.pathPairing, .message(let bytes)):
            return Self.delivery(inText: bytes, dialect: dialect)
        case (.mqtt, .binary):
            return published.withLock { $0.pop() }
        default:
            return nil
        }
    }

    /// The bench message in a text message the watch received, or nil for anything else.
    static func delivery(inText bytes: [UInt8], dialect: BenchDialect) -> BenchDelivery? {
        switch dialect {
        case .watchRelay: BenchDelivery.isRelayFrame(bytes, type: .deliver) ? BenchDelivery.parse(bytes) : nil
        case .pathPairing: BenchDelivery.parse(bytes)
        case .mqtt: nil
        }
    }
}

/// A FIFO of sent messages (head index + compaction, so pops are O(1)).
struct BenchStampQueue {
    private var items: [BenchDelivery] = []
    private var head = 0

    mutating func push(_ item: BenchDelivery) {
        items.append(item)
    }

    mutating func pop() -> BenchDelivery? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 4096 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}

/// Opens pairs in each dialect: connects both sides and completes the handshake, so the phone
/// can send and the watch receives as soon as `open` returns.
struct BenchConnector: Sendable {
    let clients: BenchClients
    let dialect: BenchDialect
    /// The relay's URL: `ws://127.0.0.1:PORT/v1` for WatchRelay, `ws://127.0.0.1:PORT/` for peers.
    let url: String
    /// WatchRelay: where the watch connects, when not to ``url`` (another node of a cluster).
    var watchURL: String? = nil

    /// Generous, so a 64 KiB message window never trips the client's own overflow close.
    static let maxQueuedBytes = 64 << 20

    /// Opens pair `index`; with `probe`, a path-paired link is also checked end to end.
    func open(_ index: Int, probe: Bool = true) async throws -> BenchPair {
        let context = clients.context(forPair: index)
        switch dialect {
        case .watchRelay: return try await openWatchRelay(index, context)
        case .pathPairing: return try await openPathPair(index, context, probe: probe)
        case .mqtt: return try await openMQTT(index, context)
        }
    }

    private func connect(_ url: String, subprotocol: String?, on context: WebSocketClientContext) async throws
        -> ClientConnection
    {
        try await context.connect(
            to: url, subprotocol: subprotocol, maxMessageBytes: 1 << 20, maxQueuedBytes: Self.maxQueuedBytes)
    }

    /// `hello` on both sides, `pair.begin` / `pair.join`, and both `paired` frames.
    private func openWatchRelay(_ index: Int, _ context: WebSocketClientContext) async throws -> BenchPair {
        let phone = try await connect(url, subprotocol: ServerConfiguration.watchRelaySubprotocol, on: context)
        phone.send(Self.hello(role: "phone", id: "hp\(index)"))
        _ = try await Self.awaitFrame(phone, type: .welcome)
        phone.send(Array(#"{"type":"pair.begin","id":"pb\#(index)"}"#.utf8))
        let codeFrame = try await Self.awaitFrame(phone, type: .pairCode)
        guard let code = Self.stringValue(of: "code", in: codeFrame) else {
            throw BenchError.scenario("pair.code without a code: \(String(decoding: codeFrame, as: UTF8.self))")
        }
        let watch = try await connect(watchURL ?? url, subprotocol: ServerConfiguration.watchRelaySubprotocol, on: context)
        watch.send(Self.hello(role: "watch", id: "hw\(index)"))
        _ = try await Self.awaitFrame(watch, type: .welcome)
        watch.send(Array(#"{"type":"pair.join","id":"pj\#(index)","code":"\#(code)"}"#.utf8))
        _ = try await Self.awaitFrame(watch, type: .paired)
        _ = try await Self.awaitFrame(phone, type: .paired)
        return BenchPair(index: index, phone: phone, watch: watch, dialect: .watchRelay)
    }

    /// Connects watch then phone; with `probe`, sends probes until one reaches the watch.
    private func openPathPair(_ index: Int, _ context: WebSocketClientContext, probe: Bool) async throws -> BenchPair {
        let base = url.hasSuffix("/") ? url : url + "/"
        let watch = try await connect(base + "pair/\(index)/watch", subprotocol: nil, on: context)
        let phone = try await connect(base + "pair/\(index)/phone", subprotocol: nil, on: context)
        let pair = BenchPair(index: index, phone: phone, watch: watch, dialect: .pathPairing)
        if probe { try await Self.probe(pair) }
        return pair
    }

    /// CONNECT both, SUBSCRIBE the watch; SUBACK means later PUBLISHes reach it.
    private func openMQTT(_ index: Int, _ context: WebSocketClientContext) async throws -> BenchPair {
        let watch = try await connect(url, subprotocol: BenchMQTT.subprotocol, on: context)
        watch.sendBinary(BenchMQTT.connect(clientID: "bench-w\(index)"))
        try await Self.awaitBinary(watch, what: "CONNACK")
        watch.sendBinary(BenchMQTT.subscribe(topic: BenchMQTT.topic(pair: index), packetID: 1))
        try await Self.awaitBinary(watch, what: "SUBACK")
        let phone = try await connect(url, subprotocol: BenchMQTT.subprotocol, on: context)
        phone.sendBinary(BenchMQTT.connect(clientID: "bench-p\(index)"))
        try await Self.awaitBinary(phone, what: "CONNACK")
        return BenchPair(index: index, phone: phone, watch: watch, dialect: .mqtt)
    }

    /// Sends a probe every 50 ms (at most 100) until the watch receives one: the relay may
    /// register the watch's path a moment after its handshake completed.
    private static func probe(_ pair: BenchPair) async throws {
        let arrived = BenchTally()  // `stopping` doubles as "a probe arrived"
        let frame = BenchFrameFactory(mode: "message", payloadBytes: 0).probe
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<100 where !arrived.stopping.load(ordering: .relaxed) {
                    pair.phone.send(frame)
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            for await event in pair.watch.events {
                if case .message = event {
                    arrived.stopping.store(true, ordering: .relaxed)
                    break
                }
                if case .closed(let code, let reason) = event {
                    throw BenchError.scenario("pair \(pair.index): watch closed (\(code.map(String.init) ?? "-") \(reason))")
                }
            }
            group.cancelAll()
        }
        guard arrived.stopping.load(ordering: .relaxed) else {
            throw BenchError.scenario("pair \(pair.index): no probe reached the watch")
        }
    }

    /// A `hello` frame without token.
    static func hello(role: String, id: String) -> [UInt8] {
        Array(#"{"type":"hello","id":"\#(id)","protocol":1,"role":"\#(role)","device":{"name":"bench-\#(role)"}}"#.utf8)
    }

    /// The next relay frame of `type` on `connection`; other frames are skipped, an `error`
    /// frame or the end of the connection throws.
    static func awaitFrame(_ connection: ClientConnection, type: BenchFrameType) async throws -> [UInt8] {
        for await event in connection.events {
            switch event {
            case .message(let bytes):
                if BenchDelivery.isRelayFrame(bytes, type: type) { return bytes }
                if BenchDelivery.isRelayFrame(bytes, type: .error) {
                    throw BenchError.scenario("relay error while waiting for \(type): \(String(decoding: bytes, as: UTF8.self))")
                }
            case .closed(let code, let reason):
                throw BenchError.scenario("closed (\(code.map(String.init) ?? "-") \(reason)) while waiting for \(type)")
            case .binary, .tooLarge:
                continue
            }
        }
        throw BenchError.scenario("connection ended while waiting for \(type)")
    }

    /// The next binary message on `connection` (MQTT acknowledgements).
    private static func awaitBinary(_ connection: ClientConnection, what: String) async throws {
        for await event in connection.events {
            switch event {
            case .binary: return
            case .closed(let code, let reason):
                throw BenchError.scenario("closed (\(code.map(String.init) ?? "-") \(reason)) while waiting for \(what)")
            case .message, .tooLarge: continue
            }
        }
        throw BenchError.scenario("connection ended while waiting for \(what)")
    }

    /// The string value of `"name":"…"` in a small frame.
    static func stringValue(of name: String, in frame: [UInt8]) -> String? {
        let text = String(decoding: frame, as: UTF8.self)
        guard let start = text.range(of: "\"\(name)\":\"") else { return nil }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
