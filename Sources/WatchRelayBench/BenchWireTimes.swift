import Foundation
import Primitives
import WebSocketTransport

/// When each of one pair's bench messages left the generator and when it came back, stamped on
/// the lws client's service thread (``ClientMessageObserver``), by sequence number.
///
/// `written` is read just before the phone's frame goes to `lws_write`, `received` as the
/// watch's frame is complete: their difference is the relay's latency plus two loopback hops
/// and the generator service thread's wake-up, without the generator's hand-offs between the
/// pacer, the service thread and the consuming task.
final class BenchWireTimes: Sendable {
    private struct State {
        /// Index = sequence number (0 unused); 0 = not seen. ``BenchClock`` stamps.
        var written: [UInt64]
        var received: [UInt64]
        /// The `at` stamp each message carries: when the pacer posted it.
        var posted: [UInt64]
        /// MQTT: PUBLISHes the watch received since the observer was attached (their sequence).
        var binaries = 0
    }

    private let dialect: BenchDialect
    private let state: LockedState<State>

    /// Room for sequence numbers `1...messages`; later ones are not recorded.
    init(dialect: BenchDialect, messages: Int) {
        self.dialect = dialect
        let slots = [UInt64](repeating: 0, count: messages + 1)
        state = LockedState(State(written: slots, received: slots, posted: slots))
    }

    /// Observes both sides of `pair`; returns once the service thread applies it, so every
    /// message sent after this is stamped (and, for MQTT, every binary message the watch gets
    /// from then on is a PUBLISH of ours: the SUBACK was consumed when the pair opened).
    func attach(to pair: BenchPair) async {
        await pair.watch.observe(Side(times: self, isPhone: false))
        await pair.phone.observe(Side(times: self, isPhone: true))
    }

    /// What the generator measured for the messages written at or after `from` (a stamp):
    /// write → complete latencies and post → write delays (ns), and how many never arrived.
    func samples(writtenFrom from: UInt64) -> (latencies: [UInt64], postToWrite: [UInt64], missing: Int) {
        state.withLock { state in
            var latencies: [UInt64] = []
            var postToWrite: [UInt64] = []
            var missing = 0
            for sequence in state.written.indices where state.written[sequence] >= from {
                let written = state.written[sequence]
                postToWrite.append(written > state.posted[sequence] ? written - state.posted[sequence] : 0)
                let received = state.received[sequence]
                if received == 0 {
                    missing += 1
                } else {
                    latencies.append(received > written ? received - written : 0)
                }
            }
            return (latencies, postToWrite, missing)
        }
    }

    /// Writes every pair's stamps to `directory/name-<stamp>.tsv` (one line per message:
    /// pair, sequence, then when it was posted, written and received as ``MonotonicClock``
    /// nanoseconds, 0 where missing), for looking at a run's tail message by message, e.g.
    /// beside `perf sched record -k CLOCK_MONOTONIC`; a failure is only reported.
    static func writeTrace(_ pairs: [BenchWireTimes], to directory: String, name: String) {
        var text = "pair\tsequence\tposted\twritten\treceived\n"
        for (index, times) in pairs.enumerated() {
            times.state.withLock { state in
                for sequence in state.written.indices.dropFirst() {
                    let stamps = [state.posted[sequence], state.written[sequence], state.received[sequence]]
                    text += "\(index)\t\(sequence)\t"
                        + stamps.map { String(BenchClock.monotonic(stamp: $0)) }.joined(separator: "\t") + "\n"
                }
            }
        }
        let path = directory + "/\(name)-\(BenchClock.stamp()).tsv"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            BenchProgress.note("latency trace: \(path)")
        } catch {
            BenchProgress.note("cannot write the latency trace \(path): \(error)")
        }
    }

    /// Service thread: the phone's frame of a bench message went to `lws_write`.
    fileprivate func wrote(_ payload: [UInt8], at stamp: UInt64) {
        // Also finds the message inside an MQTT PUBLISH: the JSON follows a short header.
        guard let message = BenchDelivery.parse(payload) else { return }  // not a bench message
        state.withLock { state in
            guard message.sequence < state.written.count else { return }
            state.written[message.sequence] = stamp
            state.posted[message.sequence] = message.sentAt
        }
    }

    /// Service thread: a message to the watch is complete.
    fileprivate func received(_ event: ClientEvent, at stamp: UInt64) {
        switch (dialect, event) {
        case (.watchRelay, .message(let bytes)), (.pathPairing, .message(let bytes)):
            guard let message = BenchPair.delivery(inText: bytes, dialect: dialect) else { return }
            state.withLock { state in
                if message.sequence < state.received.count { state.received[message.sequence] = stamp }
            }
        case (.mqtt, .binary):
            state.withLock { state in
                state.binaries += 1
                if state.binaries < state.received.count { state.received[state.binaries] = stamp }
            }
        default:
            return
        }
    }

    /// The observer of one side of the pair.
    private struct Side: ClientMessageObserver {
        let times: BenchWireTimes
        let isPhone: Bool

        func wrote(_ payload: [UInt8], at stamp: UInt64) {
            if isPhone { times.wrote(payload, at: BenchClock.stamp(monotonic: stamp)) }
        }

        func received(_ event: ClientEvent, at stamp: UInt64) {
            if !isPhone { times.received(event, at: BenchClock.stamp(monotonic: stamp)) }
        }
    }
}
