import Primitives
import Testing

@testable import WebSocketTransport

@Suite(.timeLimit(.minutes(5)))
struct MessageObserverTests {
    @Test func observerSeesEveryWriteAndReceiptWithMonotonicStamps() async throws {
        try await withEcho { client, url in
            let (connection, events, observer) = try await observedConnection(client, url)
            let sent = (0..<50).map { "m\($0)" }
            for text in sent { connection.send(Array(text.utf8)) }
            try await events.waitUntil("\(sent.count) echoes") { $0.count >= sent.count }

            let entries = observer.entries
            #expect(entries.filter { !$0.isReceipt }.map(\.text) == sent)
            #expect(entries.filter(\.isReceipt).map(\.text) == sent)
            #expect(entries.allSatisfy { $0.stamp > 0 })
            // One service thread calls the observer, so its clock readings never go backwards…
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.stamp <= $1.stamp })
            // …and an echo is complete no earlier than its message was written.
            for text in sent {
                let written = try #require(entries.first { !$0.isReceipt && $0.text == text })
                let received = try #require(entries.first { $0.isReceipt && $0.text == text })
                #expect(written.stamp <= received.stamp)
            }
        }
    }

    @Test func onlyObservedConnectionsAreReportedAndOnlyWhileObserved() async throws {
        try await withEcho { client, url in
            let observed = try await client.connect(to: url)
            let other = try await client.connect(to: url)
            let observedEvents = EventLog(observed.events)
            let otherEvents = EventLog(other.events)
            let observer = RecordingObserver()

            observed.send(Array("before".utf8))
            try await observedEvents.waitUntil("echo of before") { $0.count >= 1 }
            await observed.observe(observer)
            observed.send(Array("during".utf8))
            other.send(Array("elsewhere".utf8))
            try await observedEvents.waitUntil("echo of during") { $0.count >= 2 }
            try await otherEvents.waitUntil("echo of elsewhere") { $0.count >= 1 }
            await observed.observe(nil)
            observed.send(Array("after".utf8))
            try await observedEvents.waitUntil("echo of after") { $0.count >= 3 }

            #expect(observer.entries.map(\.text) == ["during", "during"])
            #expect(observedEvents.events.compactMap(\.text) == ["before", "during", "after"])
        }
    }

    @Test func observerSeesBinaryWritesAndOversizedReceipts() async throws {
        try await withEcho { client, url in
            let (connection, events, observer) = try await observedConnection(client, url, maxMessageBytes: 8)
            connection.sendBinary([1, 2, 3])
            let long = String(repeating: "x", count: 100)
            connection.send(Array(long.utf8))
            try await events.waitUntil("the oversized echo") { $0.count >= 1 }

            let entries = observer.entries
            #expect(entries.count == 3)
            #expect(entries.first?.payload == [1, 2, 3])
            #expect(entries.dropFirst().first?.text == long)
            #expect(entries.last?.isReceipt == true)
            #expect(entries.last?.oversized == 100)
        }
    }

    @Test func observingAfterShutdownReturns() async throws {
        try await withEcho { client, url in
            let connection = try await client.connect(to: url)
            try await stop(client)
            let observer = RecordingObserver()
            try await withTimeout(.seconds(5), "observe after shutdown") { await connection.observe(observer) }
            #expect(observer.entries.isEmpty)
        }
    }

    @Test func monotonicClockNeverGoesBackwards() {
        var previous = MonotonicClock.nanoseconds()
        for _ in 0..<1000 {
            let now = MonotonicClock.nanoseconds()
            #expect(now >= previous)
            previous = now
        }
    }
}

/// A new connection to `url`, its event log, and a ``RecordingObserver`` already attached.
private func observedConnection(
    _ client: WebSocketClientContext, _ url: String, maxMessageBytes: Int = 1 << 20
) async throws -> (ClientConnection, EventLog<ClientEvent>, RecordingObserver) {
    let connection = try await client.connect(to: url, maxMessageBytes: maxMessageBytes)
    let events = EventLog(connection.events)
    let observer = RecordingObserver()
    await connection.observe(observer)
    return (connection, events, observer)
}

/// Keeps what a ``ClientMessageObserver`` is told, in call order.
private final class RecordingObserver: ClientMessageObserver {
    struct Entry: Sendable {
        var isReceipt: Bool
        var payload: [UInt8]
        /// A receipt's `.tooLarge` size.
        var oversized: Int?
        var stamp: UInt64

        var text: String { String(decoding: payload, as: UTF8.self) }
    }

    private let log = LockedState<[Entry]>([])

    var entries: [Entry] { log.withLock { $0 } }

    func wrote(_ payload: [UInt8], at stamp: UInt64) {
        log.withLock { $0.append(Entry(isReceipt: false, payload: payload, stamp: stamp)) }
    }

    func received(_ event: ClientEvent, at stamp: UInt64) {
        var entry = Entry(isReceipt: true, payload: [], stamp: stamp)
        switch event {
        case .message(let bytes): entry.payload = bytes
        case .tooLarge(let size): entry.oversized = size
        case .binary, .closed: break
        }
        log.withLock { $0.append(entry) }
    }
}
