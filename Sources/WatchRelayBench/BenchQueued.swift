import Foundation
import WebSocketTransport

/// Queued memory: what the relay's RSS does with a large durable backlog for an absent watch.
extension BenchRunner {
    /// Payload of each queued `userInfo`: near the 65,536-byte limit.
    static let queuedPayloadBytes = 65_000
    /// Sends not yet `accepted` while the backlog fills.
    static let queuedWindow = 64
    /// The `at` of every queued payload (10^15: the stamps' digits have no leading zero).
    private static let stamp: UInt64 = 1_000_000_000_000_000

    /// Pairs a phone and a watch, closes the watch, sends `mebibytes` MiB of `userInfo` (payloads
    /// of ``queuedPayloadBytes``) and reads the relay's RSS; then restarts the relay on the same
    /// store and reads it again once it listens. `relayRSSMiB` is the RSS with the backlog,
    /// `relayRSSBeforeMiB` that of the empty relay; the restart's goes into the note.
    ///
    /// The store runs with `--sync normal` (a backlog of 1 GiB fills faster; RSS does not depend
    /// on it) and the quotas are raised past the backlog (as in every bench relay).
    func queuedMemory(mebibytes: Int) async throws -> BenchResult {
        let factory = BenchFrameFactory(mode: "userInfo", payloadBytes: Self.queuedPayloadBytes)
        let items = ((mebibytes << 20) + factory.payloadBytes - 1) / factory.payloadBytes
        let database = "\(directory)/queued-\(mebibytes).db"
        // A file left by an earlier run would preload its backlog.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        let limit = Self.duration(Double(items) / 20 + 120)
        let label = "\(mebibytes) MiB queued"
        var result = BenchResult(scenario: "queued", target: BenchTarget.watchrelay.rawValue, label: label)
        let filled = try await withRelay(.watchrelay, tag: "queued-\(mebibytes)", sync: "normal", database: database, limit: limit) {
            relay, _, connector in
            try await Task.sleep(for: .milliseconds(300))
            let empty = relay.rssKiB
            let pair = try await connector.open(0, probe: false)
            pair.watch.close()
            let began = ContinuousClock.now
            try await Self.fillBacklog(pair.phone, factory: factory, items: items, what: label)
            let seconds = Self.seconds(ContinuousClock.now - began)
            try await Task.sleep(for: .seconds(1))
            return (empty: empty, queued: relay.rssKiB, seconds: seconds)
        }
        // The restarted relay reads the whole store before it listens (a debug build: minutes per GiB).
        let restarting = ContinuousClock.now
        let restarted = try await withRelay(
            .watchrelay, tag: "queued-\(mebibytes)-again", sync: "normal", database: database,
            startTimeout: Self.duration(15 + Double(mebibytes) / 2), limit: limit
        ) { relay, _, _ in
            let listening = Self.seconds(ContinuousClock.now - restarting)
            try await Task.sleep(for: .seconds(1))
            return (rss: relay.rssKiB, peak: BenchSystem.peakRSSKiB(pid: relay.pid) ?? 0, seconds: listening)
        }
        result.count = items
        result.relayRSSBeforeMiB = Double(filled.empty) / 1024
        result.relayRSSMiB = Double(filled.queued) / 1024
        result.note =
            "\(items) userInfo of \(factory.payloadBytes) B for an absent watch, accepted in \(Self.format(filled.seconds)) s; "
            + "after a restart on that store (listening after \(Self.format(restarted.seconds)) s): RSS "
            + "\(BenchReport.number(Double(restarted.rss) / 1024, 1)) MiB, peak while loading "
            + "\(BenchReport.number(Double(restarted.peak) / 1024, 1)) MiB"
        return result
    }

    /// Sends `items` `userInfo` frames from `phone`, at most ``queuedWindow`` not yet accepted;
    /// returns once all are accepted. Any `error` (a quota, say) fails the scenario.
    static func fillBacklog(_ phone: ClientConnection, factory: BenchFrameFactory, items: Int, what: String) async throws {
        var sent = 0
        var accepted = 0
        var lastReport = ContinuousClock.now
        while sent < min(items, queuedWindow) {
            phone.send(factory.make(sequence: sent, at: Self.stamp))
            sent += 1
        }
        for await event in phone.events {
            guard case .message(let bytes) = event else {
                if case .closed(let code, let reason) = event {
                    throw BenchError.scenario("the phone was closed (\(code.map(String.init) ?? "none") \(reason))")
                }
                continue
            }
            if BenchDelivery.isRelayFrame(bytes, type: .error) {
                throw BenchError.scenario("send refused: \(String(decoding: bytes, as: UTF8.self))")
            }
            guard BenchDelivery.isRelayFrame(bytes, type: .accepted) else { continue }
            accepted += 1
            if accepted == items { return }
            if sent < items {
                phone.send(factory.make(sequence: sent, at: Self.stamp))
                sent += 1
            }
            if ContinuousClock.now - lastReport > .seconds(5) {
                lastReport = .now
                BenchProgress.note("\(what): \(accepted)/\(items) accepted")
            }
        }
        throw BenchError.scenario("the phone's connection ended after \(accepted) of \(items) accepted")
    }
}
