import Foundation
import Primitives
import TestSupport
import Testing

@testable import WebSocketTransport

/// A server with a ``ServerEventHandler``: events handled on the service thread, answers queued
/// in the same callback, posted values and the handler's timer.
@Suite(.timeLimit(.minutes(2)))
struct ServerEventHandlerTests {
    /// Echoes every message upper-cased; answers a posted string by sending it to every
    /// connection; counts timer firings and sends "tick N" when one fires. "timer" asks for a
    /// timer in 20 ms, "arm" for one in a minute, "disarm" for none.
    final class Echo: ServerEventHandler, @unchecked Sendable {
        // Service thread only, except `log` (locked).
        private var connections = OpenConnections()
        private var ticks = 0
        private var timerWanted: Duration?
        let log = LockedState<[String]>([])

        func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
            connections.note(event, in: log)
            guard case .message(let id, let bytes) = event else { return }
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "timer" { timerWanted = .milliseconds(20) }
            if text == "arm" { timerWanted = .seconds(60) }
            if text == "disarm" { timerWanted = nil }
            outbound.send(Array(text.uppercased().utf8), to: id)
        }

        func received(_ message: any Sendable, outbound: inout OutboundBatch) {
            guard let text = message as? String else { return }
            for id in connections.ids { outbound.send(Array(text.utf8), to: id) }
        }

        func timerFired(outbound: inout OutboundBatch) {
            timerWanted = nil
            ticks += 1
            for id in connections.ids { outbound.send(Array("tick \(ticks)".utf8), to: id) }
        }

        func endOfTurn(outbound: inout OutboundBatch) -> Duration? { timerWanted }

        func finished() {
            log.withLock { $0.append("finished") }
        }
    }

    /// A handler that stops asking for its timer takes only its own timer off: the server's
    /// keepalive goes on (it was taken off too, and a silent peer stayed connected for ever;
    /// the cluster's node asks for none once it stops leading).
    @Test func aHandlerDroppingItsTimerLeavesTheKeepaliveRunning() async throws {
        let handler = Echo()
        let server = try WebSocketServer(
            configuration: ServerConfiguration(pingAfterSeconds: 1, hangupAfterSeconds: 2), handler: handler)
        let silent = try RawSocket(port: server.port)
        #expect(try await silent.upgrade(port: server.port).hasPrefix("HTTP/1.1 101"))
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        for command in ["arm", "disarm"] {
            connection.send(Array(command.utf8))
            let echoed = try await log.first(command) { $0.text == command.uppercased() ? $0.text : nil }
            #expect(echoed == command.uppercased())
        }
        try await eventually(10, "the silent socket hung up") { handler.log.withLock { $0.contains("closed") } }
        withExtendedLifetime(silent) {}
        try await stop(client)
        try await stop(server)
    }

    /// A connection the keepalive hangs up is dropped without a close frame (PROTOCOL.md §2.2),
    /// also when the handler closes it later in the same pass over the timers (a reconnecting
    /// device's `hello`, handled in the turn of its old connection's hang-up, closes the old
    /// one). The close used to replace the hang-up: the peer got a close frame, and the
    /// connection stayed up to 5 s more waiting for its answer.
    @Test func aCloseAfterAHangUpInTheSamePassDoesNotUndoIt() async throws {
        // The handler holds the service thread from the connection's opening (after lws's 101)
        // until past its hang-up time, whatever this task is doing; then the keepalive's timer
        // and the handler's, both due, fire in one pass: the hang-up first, then the close.
        let handler = CloseOnTimer(holdingTheFirstOpeningFor: 6)
        let server = try WebSocketServer(
            configuration: ServerConfiguration(pingAfterSeconds: 1, hangupAfterSeconds: 4), handler: handler)
        let silent = try RawSocket(port: server.port)
        #expect(try await silent.upgrade(port: server.port).hasPrefix("HTTP/1.1 101"))
        var frames = await silent.readBytes(1 << 20, timeoutMilliseconds: 30_000)
        #expect(handler.log.withLock { $0 } == ["opened", "held", "closing", "closed"])
        var opcodes: [UInt8] = []
        while frames.count >= 2 {
            opcodes.append(frames[0] & 0x0F)
            frames.removeFirst(min(frames.count, 2 + Int(frames[1] & 0x7F)))
        }
        #expect(!opcodes.contains(0x8), "hung up without a close frame, got frames \(opcodes)")
        try await stop(server)
    }

    /// Holds the service thread for `hold` seconds when the first connection opens, then asks
    /// for its timer at once; when it fires, closes every connection with 4001.
    final class CloseOnTimer: ServerEventHandler, @unchecked Sendable {
        let hold: Double
        // Service thread only, except `log` (locked).
        private var connections = OpenConnections()
        private var timerWanted: Duration?
        private var held = false
        let log = LockedState<[String]>([])

        init(holdingTheFirstOpeningFor seconds: Double) { hold = seconds }

        func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
            connections.note(event, in: log)
            guard case .opened = event, !held else { return }
            held = true
            Thread.sleep(forTimeInterval: hold)
            log.withLock { $0.append("held") }
            timerWanted = .zero
        }

        func received(_ message: any Sendable, outbound: inout OutboundBatch) {}

        func timerFired(outbound: inout OutboundBatch) {
            timerWanted = nil
            log.withLock { $0.append("closing") }
            for id in connections.ids { outbound.close(id, code: 4001, reason: "replaced") }
        }

        func endOfTurn(outbound: inout OutboundBatch) -> Duration? { timerWanted }

        func finished() {}
    }

    @Test func messagesArePostsAndTimersReachTheHandlerAndItsAnswersGoOut() async throws {
        let handler = Echo()
        let server = try WebSocketServer(configuration: ServerConfiguration(), handler: handler)
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        connection.send(Array("hello".utf8))
        #expect(try await log.first("echo") { $0.text } == "HELLO")
        #expect(server.post("posted"))
        #expect(try await log.first("posted") { $0.text == "posted" ? $0.text : nil } == "posted")
        connection.send(Array("timer".utf8))
        #expect(try await log.first("tick") { $0.text?.hasPrefix("tick") == true ? $0.text : nil } == "tick 1")
        try await stop(client)
        try await stop(server)
        #expect(handler.log.withLock { $0 } == ["opened", "closed", "finished"])
        // After shutdown nothing more reaches the handler.
        #expect(!server.post("late"))
    }

    /// Records, in order, every call it gets ("call") and every end of turn ("end"); asks for
    /// one timer 20 ms after the first message and answers it with "tick".
    final class TurnRecorder: ServerEventHandler, @unchecked Sendable {
        let wantsQuietTurns: Bool
        let log = LockedState<[String]>([])
        // Service thread only.
        private var timerWanted: Duration?
        private var timerAsked = false
        private var connection: ConnectionID?

        init(wantsQuietTurns: Bool) { self.wantsQuietTurns = wantsQuietTurns }

        func handle(_ event: ServerEvent, outbound: inout OutboundBatch) {
            log.withLock { $0.append("call") }
            switch event {
            case .opened(let id, _): connection = id
            case .message(let id, let bytes):
                if !timerAsked { (timerAsked, timerWanted) = (true, .milliseconds(20)) }
                outbound.send(Array("got \(bytes.count)".utf8), to: id)
            default: break
            }
        }

        func received(_ message: any Sendable, outbound: inout OutboundBatch) {
            log.withLock { $0.append("call") }
        }

        func timerFired(outbound: inout OutboundBatch) {
            log.withLock { $0.append("call") }
            timerWanted = nil
            if let connection { outbound.send(Array("tick".utf8), to: connection) }
        }

        func endOfTurn(outbound: inout OutboundBatch) -> Duration? {
            log.withLock { $0.append("end") }
            return timerWanted
        }

        func finished() {}

        /// Ends of turn with no call since the previous end (or since the start).
        var quietEnds: Int {
            var quiet = 0
            var called = false
            for entry in log.withLock({ $0 }) {
                if entry == "call" {
                    called = true
                } else {
                    if !called { quiet += 1 }
                    called = false
                }
            }
            return quiet
        }
    }

    /// A handler that declines quiet turns gets ``ServerEventHandler/endOfTurn(outbound:)`` only
    /// after turns it got a call in, though messages of 256 KiB take many reads (turns) each;
    /// its timer still fires with no traffic. The default handler is called after quiet turns too.
    @Test(arguments: [false, true])
    func quietTurnsEndOnlyForAHandlerThatWantsThem(wantsQuietTurns: Bool) async throws {
        let handler = TurnRecorder(wantsQuietTurns: wantsQuietTurns)
        let server = try WebSocketServer(configuration: ServerConfiguration(maxMessageBytes: 1 << 20), handler: handler)
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        for _ in 1...8 { connection.send(Array(repeating: UInt8(ascii: "x"), count: 256 << 10)) }
        try await log.waitUntil("8 answers and the tick") { events in
            events.filter { $0.text == "got \(256 << 10)" }.count == 8 && events.contains { $0.text == "tick" }
        }
        try await stop(client)
        try await stop(server)
        if wantsQuietTurns {
            #expect(handler.quietEnds > 0, "8 messages of 256 KiB in 16 KiB reads, and no turn without a call?")
        } else {
            #expect(handler.quietEnds == 0)
        }
    }

    /// What a turn queues is written at its end, with no POLLOUT round trip: an echo answered at
    /// wire speed never waits for WRITEABLE, on the server or on the client.
    @Test func answersGoOutAtTheEndOfTheirTurnWithoutWaitingForWriteable() async throws {
        let server = try WebSocketServer(configuration: ServerConfiguration(), handler: Echo())
        let client = try plainClient()
        let connection = try await client.connect(to: "ws://127.0.0.1:\(server.port)/v1")
        let log = EventLog(connection.events)
        for n in 1...200 { connection.send(Array("m\(n)".utf8)) }
        try await log.waitUntil("200 echoes") { $0.count >= 200 }
        #expect(log.events.compactMap(\.text) == (1...200).map { "M\($0)" })
        // The counts are published right after the turn's writes, which the client may see first.
        let deadline = ContinuousClock.now + .seconds(5) * timeoutScale
        while server.writeCounts.endOfTurn == 0 || client.writeCounts.endOfTurn == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let (served, sent) = (server.writeCounts, client.writeCounts)
        #expect(served.endOfTurn >= 1 && served.afterWriteable == 0, "server: \(served)")
        #expect(sent.endOfTurn >= 1 && sent.afterWriteable == 0, "client: \(sent)")
        try await stop(client)
        try await stop(server)
    }

    /// Messages that come one by one to a peer that stops reading: each goes out at the end of
    /// its turn until the socket is full and lws keeps the part the kernel refused; the next one
    /// waits for WRITEABLE behind it instead of being written around it (``WriteCounts/heldBack``),
    /// and the peer gets every message, whole and in order, once it reads.
    @Test func aMessageBehindAPartOnlyLwsHoldsWaitsForWriteableAndKeepsItsPlace() async throws {
        let (server, socket) = try await serverAndSilentPeer()
        // 16 KiB messages, each posted once the one before was written or held back (so every
        // one comes in a turn of its own, to an empty queue), until lws held one back: the socket
        // fills after a few MiB (Linux lets a send buffer grow to 4 MiB); at most 32 MiB.
        let size = 16 << 10
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(60) * timeoutScale
        func handled() -> Int { server.writeCounts.endOfTurn + server.writeCounts.heldBack }
        while server.writeCounts.heldBack == 0, sent < 2_048, ContinuousClock.now < deadline {
            let letter = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(sent % 26)))
            let before = handled()
            #expect(server.post(String(repeating: letter, count: size)))
            sent += 1
            while handled() == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(server.writeCounts.heldBack > 0, "no end-of-turn write found lws holding part of one after \(sent) messages")
        let letters = (0..<sent).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        await expectFrames(from: socket, header: [0x81, 126, 0x40, 0x00], size: size, letters: letters)
        try await stop(server)
    }

    /// A backlog to a peer that stops reading: the end of the turn writes one frame (64 KiB
    /// frames do not batch), the rest waits for WRITEABLE while the socket fills and lws keeps
    /// what the kernel refused, and the peer gets every frame, whole and in order, once it reads.
    @Test func aPeerThatStopsReadingGetsTheRestOnWriteableWholeAndInOrder() async throws {
        let (server, socket) = try await serverAndSilentPeer()
        // 128 messages of 64 KiB, each of one letter: 8 MiB, twice what Linux lets a socket's
        // send buffer grow to (tcp_wmem), so the socket fills before the peer reads.
        let letters = (0..<128).map { UInt8(ascii: "A") + UInt8($0 % 26) }
        for letter in letters { #expect(server.post(String(repeating: String(UnicodeScalar(letter)), count: 64 << 10))) }
        try await Task.sleep(for: .milliseconds(200))
        await expectFrames(from: socket, header: [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0], size: 64 << 10, letters: letters)
        #expect(server.writeCounts.afterWriteable > 0, "what the end-of-turn write left went out on WRITEABLE")
        try await stop(server)
    }

    /// A server that answers through ``Echo``, with room for a large backlog and lws's hang-up
    /// off (the raw socket answers no ping, and a slow ThreadSanitizer run must not lose the
    /// connection while it posts or reads), and a peer that reads nothing until told to, with a
    /// 4 KiB receive buffer.
    private func serverAndSilentPeer() async throws -> (WebSocketServer, RawSocket) {
        let server = try WebSocketServer(
            configuration: ServerConfiguration(
                maxQueuedBytesPerConnection: 32 << 20, pingAfterSeconds: 3_000, hangupAfterSeconds: 3_600),
            handler: Echo())
        let socket = try RawSocket(port: server.port, receiveBuffer: 4096)
        #expect(try await socket.upgrade(port: server.port).hasPrefix("HTTP/1.1 101"))
        return (server, socket)
    }

    /// Reads one text frame of `size` bytes per letter and checks each: `header`, then its letter only.
    private func expectFrames(from socket: RawSocket, header: [UInt8], size: Int, letters: [UInt8]) async {
        let frameBytes = header.count + size
        let bytes = await socket.readBytes(letters.count * frameBytes, timeoutMilliseconds: Int32(5000 * timeoutScale))
        #expect(bytes.count == letters.count * frameBytes)
        for (n, letter) in letters.enumerated() where (n + 1) * frameBytes <= bytes.count {
            let frame = bytes[(n * frameBytes)..<((n + 1) * frameBytes)]
            #expect(Array(frame.prefix(header.count)) == header, "frame \(n)'s header")
            #expect(frame.dropFirst(header.count).allSatisfy { $0 == letter }, "frame \(n) is all \(letter)")
        }
    }

    /// A test handler's open connections, with "opened" and "closed" in its log.
    struct OpenConnections {
        private(set) var ids: [ConnectionID] = []

        mutating func note(_ event: ServerEvent, in log: LockedState<[String]>) {
            switch event {
            case .opened(let id, _):
                ids.append(id)
                log.withLock { $0.append("opened") }
            case .closed(let id, _, _):
                ids.removeAll { $0 == id }
                log.withLock { $0.append("closed") }
            case .message, .binary, .tooLarge:
                break
            }
        }
    }
}
