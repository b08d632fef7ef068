import Foundation
import WebSocketTransport

/// A stored backlog: how long the relay takes to start on it, what it costs in memory, and how
/// fast it drains to a watch that comes online (the issue's "how cost grows with work").
extension BenchRunner {
    /// Payload of each backlog item: small, so the count (not the bytes) is what grows.
    static let backlogPayloadBytes = 64

    /// Pairs a phone and a watch, closes the watch and stores `items` `userInfo` for it
    /// (`--sync normal`, to fill faster; the figures below do not depend on it). Then restarts the
    /// relay on that store and measures the time until it listens and its RSS, and connects the
    /// watch with its token: the drain rate is `items` over the time from its `hello` to the last
    /// delivery, the watch acking every 16 as the durable scenario does.
    func backlog(items: Int) async throws -> BenchResult {
        let factory = BenchFrameFactory(mode: "userInfo", payloadBytes: Self.backlogPayloadBytes)
        let database = "\(directory)/backlog-\(items).db"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        let limit = Self.duration(Double(items) / 2000 + 120)
        let label = "\(items) items"
        var result = BenchResult(scenario: "backlog", target: BenchTarget.watchrelay.rawValue, label: label)
        let filled = try await withRelay(.watchrelay, tag: "backlog-\(items)", sync: "normal", database: database, limit: limit) {
            relay, clients, connector in
            try await Task.sleep(for: .milliseconds(300))
            let empty = relay.rssKiB
            let (phone, watch, token) = try await Self.pairKeepingWatchToken(clients, url: connector.url)
            watch.close()
            let began = ContinuousClock.now
            try await Self.fillBacklog(phone, factory: factory, items: items, what: "backlog \(label)")
            let seconds = Self.seconds(ContinuousClock.now - began)
            try await Task.sleep(for: .milliseconds(500))
            return (empty: empty, queued: relay.rssKiB, seconds: seconds, token: token)
        }
        let restarting = ContinuousClock.now
        let drained = try await withRelay(
            .watchrelay, tag: "backlog-\(items)-again", sync: "normal", database: database,
            startTimeout: Self.duration(15 + Double(items) / 5000), limit: limit
        ) { relay, clients, connector in
            let listening = Self.seconds(ContinuousClock.now - restarting)
            try await Task.sleep(for: .milliseconds(500))
            let rss = relay.rssKiB
            let peak = BenchSystem.peakRSSKiB(pid: relay.pid) ?? 0
            let cpuBefore = BenchCPUSample(relayPID: relay.pid)
            let began = ContinuousClock.now
            let received = try await Self.drain(items: items, token: filled.token, clients: clients, url: connector.url)
            let seconds = Self.seconds(ContinuousClock.now - began)
            let cpu = BenchCPUSample(relayPID: relay.pid).relay - cpuBefore.relay
            return (listening: listening, rss: rss, peak: peak, received: received, seconds: seconds, cpu: cpu)
        }
        result.count = items
        result.messagesPerSecond = Double(drained.received) / max(drained.seconds, 1e-9)
        result.relayCPUSecondsPer1k = drained.cpu / Double(max(drained.received, 1)) * 1000
        result.relayRSSBeforeMiB = Double(filled.empty) / 1024
        result.relayRSSMiB = Double(drained.rss) / 1024
        result.note =
            "\(items) userInfo of \(factory.payloadBytes) B stored for an absent watch in \(Self.format(filled.seconds)) s "
            + "(RSS with it \(BenchReport.number(Double(filled.queued) / 1024, 1)) MiB); restarted relay listening after "
            + "\(Self.format(drained.listening)) s, peak RSS while loading \(BenchReport.number(Double(drained.peak) / 1024, 1)) MiB; "
            + "drained to the watch at \(Int(result.messagesPerSecond ?? 0))/s (msg/s column; CPU-s/1k of the drain)"
        return result
    }

    /// `hello`, `pair.begin`/`pair.join` like ``BenchConnector``, keeping the watch's token.
    private static func pairKeepingWatchToken(_ clients: BenchClients, url: String) async throws
        -> (phone: ClientConnection, watch: ClientConnection, token: String)
    {
        let context = clients.context(forPair: 0)
        let maxQueued = BenchConnector.maxQueuedBytes
        let phone = try await context.connect(to: url, subprotocol: ServerConfiguration.watchRelaySubprotocol, maxMessageBytes: 1 << 20, maxQueuedBytes: maxQueued)
        phone.send(BenchConnector.hello(role: "phone", id: "hp-backlog"))
        _ = try await BenchConnector.awaitFrame(phone, type: .welcome)
        phone.send(Array(#"{"type":"pair.begin","id":"pb-backlog"}"#.utf8))
        let codeFrame = try await BenchConnector.awaitFrame(phone, type: .pairCode)
        guard let code = BenchConnector.stringValue(of: "code", in: codeFrame) else {
            throw BenchError.scenario("pair.code without a code")
        }
        let watch = try await context.connect(to: url, subprotocol: ServerConfiguration.watchRelaySubprotocol, maxMessageBytes: 1 << 20, maxQueuedBytes: maxQueued)
        watch.send(BenchConnector.hello(role: "watch", id: "hw-backlog"))
        _ = try await BenchConnector.awaitFrame(watch, type: .welcome)
        watch.send(Array(#"{"type":"pair.join","id":"pj-backlog","code":"\#(code)"}"#.utf8))
        let paired = try await BenchConnector.awaitFrame(watch, type: .paired)
        _ = try await BenchConnector.awaitFrame(phone, type: .paired)
        guard let token = BenchConnector.stringValue(of: "token", in: paired) else {
            throw BenchError.scenario("paired without a token")
        }
        return (phone, watch, token)
    }

    /// Connects the watch with `token` and reads deliveries until `items` arrived; returns how many.
    private static func drain(items: Int, token: String, clients: BenchClients, url: String) async throws -> Int {
        let watch = try await clients.context(forPair: 0).connect(
            to: url, subprotocol: ServerConfiguration.watchRelaySubprotocol, maxMessageBytes: 1 << 20, maxQueuedBytes: BenchConnector.maxQueuedBytes)
        watch.send(
            Array(
                #"{"type":"hello","id":"hw-again","protocol":1,"role":"watch","device":{"name":"bench-watch"},"token":"\#(token)","lastSeq":0}"#
                    .utf8))
        var received = 0
        for await event in watch.events {
            guard case .message(let bytes) = event else {
                if case .closed(let code, let reason) = event {
                    throw BenchError.scenario("the watch was closed after \(received) (\(code.map(String.init) ?? "none") \(reason))")
                }
                continue
            }
            if BenchDelivery.isRelayFrame(bytes, type: .error) {
                throw BenchError.scenario("watch got \(String(decoding: bytes, as: UTF8.self))")
            }
            guard BenchDelivery.isRelayFrame(bytes, type: .deliver) else { continue }
            received += 1
            if received % 16 == 0 || received == items, let seq = BenchDelivery.relaySeq(bytes) {
                watch.send(Array(#"{"type":"ack","seq":\#(seq)}"#.utf8))
            }
            if received == items { break }
        }
        watch.close()
        return received
    }
}
