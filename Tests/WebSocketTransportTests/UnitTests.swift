import Primitives
import Testing

@testable import WebSocketTransport

struct MessageReassemblerTests {
    private func feed(
        _ reassembler: inout MessageReassembler, _ bytes: [UInt8], binary: Bool = false, final: Bool
    ) -> MessageReassembler.Outcome {
        bytes.withUnsafeBytes { reassembler.consume($0, frameIsBinary: binary, isFinal: final) }
    }

    @Test func singleChunkMessageIsReturnedDirectly() {
        var reassembler = MessageReassembler(maxMessageBytes: 10)
        #expect(feed(&reassembler, [1, 2, 3], final: true) == .message([1, 2, 3]))
        #expect(feed(&reassembler, [], final: true) == .message([]))
        #expect(!reassembler.isMidMessage)
    }

    @Test func chunksAreJoined() {
        var reassembler = MessageReassembler(maxMessageBytes: 10)
        #expect(feed(&reassembler, [1, 2], final: false) == .incomplete)
        #expect(reassembler.isMidMessage)
        #expect(feed(&reassembler, [3], final: false) == .incomplete)
        #expect(feed(&reassembler, [4], final: true) == .message([1, 2, 3, 4]))
        #expect(feed(&reassembler, [5], final: true) == .message([5]))
    }

    @Test func messageOverTheCapIsDiscardedAndCountedThenTheNextOneWorks() {
        var reassembler = MessageReassembler(maxMessageBytes: 4)
        #expect(feed(&reassembler, [1, 2, 3], final: false) == .incomplete)
        #expect(feed(&reassembler, [4, 5], final: false) == .incomplete)
        #expect(feed(&reassembler, [6, 7, 8], final: true) == .tooLarge(size: 8))
        #expect(feed(&reassembler, [9, 9, 9, 9, 9], final: true) == .tooLarge(size: 5))
        #expect(feed(&reassembler, [1, 2, 3, 4], final: true) == .message([1, 2, 3, 4]))
    }

    /// A message sent as many frames grows its buffer by doubling; what comes out is no larger
    /// than it needs to be (a payload sliced from it keeps the whole buffer alive).
    @Test func aFragmentedMessageComesOutWithoutTheSpareRoomItGrewInto() {
        var reassembler = MessageReassembler(maxMessageBytes: 1 << 20)
        let fragment = [UInt8](repeating: 7, count: 17_000)
        for _ in 0..<4 {
            #expect(feed(&reassembler, fragment, final: false) == .incomplete)
        }
        guard case .message(let message) = feed(&reassembler, fragment, final: true) else {
            Issue.record("no message")
            return
        }
        #expect(message.count == 5 * fragment.count && message.allSatisfy { $0 == 7 })
        #expect(message.capacity <= message.count + message.count / 4 + 4096, "capacity \(message.capacity)")
    }

    /// What an unfinished message holds is its buffer's capacity (a frame's length reserves
    /// room before the bytes come); an abandoned one holds nothing, takes no more, and ends as
    /// too large; the next message is whole again.
    @Test func anUnfinishedMessageHoldsWhatItReservedUntilAbandoned() {
        var reassembler = MessageReassembler(maxMessageBytes: 1 << 20)
        #expect(reassembler.heldBytes == 0)
        let first = [UInt8](repeating: 1, count: 10)
        let promised = first.withUnsafeBytes { reassembler.consume($0, frameIsBinary: false, isFinal: false, remainingInFrame: 90_000) }
        #expect(promised == .incomplete)
        #expect(reassembler.heldBytes >= 90_010, "room for the frame's promised bytes counts")
        reassembler.abandon()
        #expect(reassembler.heldBytes == 0)
        #expect(feed(&reassembler, [UInt8](repeating: 2, count: 5_000), final: false) == .incomplete)
        #expect(reassembler.heldBytes == 0, "nothing more is kept")
        #expect(feed(&reassembler, [3], final: true) == .tooLarge(size: 5_011))
        #expect(feed(&reassembler, [4, 5], final: true) == .message([4, 5]))
        reassembler.abandon()  // between messages: nothing to drop
        #expect(feed(&reassembler, [6], final: true) == .message([6]))
    }

    @Test func binaryMessagesAreReportedWithoutBytes() {
        var reassembler = MessageReassembler(maxMessageBytes: 4)
        #expect(feed(&reassembler, [1], binary: true, final: true) == .binary)
        #expect(feed(&reassembler, [1, 2, 3], binary: true, final: false) == .incomplete)
        // Continuation frames are not binary-flagged; the first frame decided.
        #expect(feed(&reassembler, [4, 5, 6], final: true) == .binary)
        #expect(feed(&reassembler, [7], final: true) == .message([7]))
    }
}

struct WebSocketURLTests {
    @Test func parsesHostPortPathAndQuery() throws {
        let url = try WebSocketURL(parsing: "wss://relay.example:8443/v1?x=1#frag")
        #expect(url.isSecure)
        #expect(url.host == "relay.example")
        #expect(url.port == 8443)
        #expect(url.path == "/v1?x=1")
        #expect(url.hostHeader == "relay.example:8443")
    }

    @Test func appliesDefaults() throws {
        let plain = try WebSocketURL(parsing: "ws://127.0.0.1")
        #expect(plain.port == 80)
        #expect(plain.path == "/")
        #expect(plain.hostHeader == "127.0.0.1")
        let query = try WebSocketURL(parsing: "WS://h?q")
        #expect(query.path == "/?q")
        let secure = try WebSocketURL(parsing: "wss://h/")
        #expect(secure.port == 443)
    }

    @Test func parsesBracketedIPv6() throws {
        let url = try WebSocketURL(parsing: "ws://[::1]:9000/v1")
        #expect(url.host == "::1")
        #expect(url.port == 9000)
        #expect(url.hostHeader == "[::1]:9000")
    }

    @Test(arguments: [
        "http://h/", "ws://", "ws://:80/", "ws://h:0/", "ws://h:70000/", "ws://u@h/", "ws://[::1/", "ws://h/a b",
    ])
    func rejectsInvalidURLs(text: String) {
        #expect(throws: TransportError.self) { _ = try WebSocketURL(parsing: text) }
    }
}

struct OutboundQueueTests {
    @Test func countsBytesAndPopsInOrder() {
        var queue = OutboundQueue()
        queue.append(OutboundMessage(payload: [1, 2, 3], kind: .text))
        queue.append(OutboundMessage(payload: [4], kind: .binary))
        #expect(queue.queuedBytes == 4)
        queue.advanceFirst(by: 2)
        #expect(queue.first?.offset == 2)
        #expect(queue.queuedBytes == 4)
        queue.advanceFirst(by: 1)
        #expect(queue.first?.payloadArray == [4])
        #expect(queue.queuedBytes == 1)
        queue.advanceFirst(by: 1)
        #expect(queue.isEmpty)
        #expect(queue.queuedBytes == 0)
    }

    @Test func staysCorrectAcrossCompaction() {
        var queue = OutboundQueue()
        for index in 0..<5000 { queue.append(OutboundMessage(payload: [UInt8(index % 256)], kind: .text)) }
        for index in 0..<4000 {
            #expect(queue.first?.payloadArray == [UInt8(index % 256)])
            queue.advanceFirst(by: 1)
        }
        #expect(queue.count == 1000)
        #expect(queue.queuedBytes == 1000)
        #expect(queue.first?.payloadArray == [UInt8(4000 % 256)])
    }

    @Test func aCappedAppendTakesUpToTheCapAndSaysWhetherTheQueueWasEmpty() {
        var queue = OutboundQueue()
        // Headroom is not counted: only the message's own bytes.
        let framed = OutboundMessage(storage: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3], headroom: 10, kind: .text)
        #expect(framed.size == 3)
        #expect(queue.append(framed, cappedAt: 5) == true)
        #expect(queue.append(OutboundMessage(payload: [4, 5], kind: .text), cappedAt: 5) == false)
        #expect(queue.queuedBytes == 5)
        // One byte past the cap: refused, nothing changes.
        #expect(queue.append(OutboundMessage(payload: [6], kind: .text), cappedAt: 5) == nil)
        #expect(queue.count == 2)
        #expect(queue.queuedBytes == 5)
        queue.advanceFirst(by: 3)
        #expect(queue.queuedBytes == 2)
        queue.advanceFirst(by: 2)
        #expect(queue.isEmpty)
        #expect(queue.append(OutboundMessage(payload: [], kind: .text), cappedAt: 0) == true)
    }
}

struct CloseFrameTests {
    @Test func parsesCodeAndReason() {
        let payload: [UInt8] = [0x0F, 0xA1] + Array("replaced".utf8)
        let frame = payload.withUnsafeBytes { CloseFrame(payload: $0) }
        #expect(frame == CloseFrame(code: 4001, reason: "replaced"))
        let empty = [UInt8]().withUnsafeBytes { CloseFrame(payload: $0) }
        #expect(empty.code == 1005)
        let invalidUTF8: [UInt8] = [0x03, 0xE8, 0xFF]
        #expect(invalidUTF8.withUnsafeBytes { CloseFrame(payload: $0) }.reason == "\u{FFFD}")
    }

    @Test func mapsCodesAndCutsReasonsForTheWire() {
        #expect(CloseFrame.sendable(code: 4001) == 4001)
        #expect(CloseFrame.sendable(code: 1006) == 1000)
        #expect(CloseFrame.sendable(code: 999) == 1000)
        let long = String(repeating: "é", count: 100)  // 200 bytes
        let cut = CloseFrame.sendable(reason: long)
        #expect(cut.count == 122)
        #expect(String(validating: cut, as: UTF8.self) != nil)
    }
}

struct PeerAddressTests {
    @Test(arguments: [
        ("::ffff:127.0.0.1", "127.0.0.1"), ("::FFFF:10.0.0.2", "10.0.0.2"), ("::1", "::1"),
        ("192.168.1.1", "192.168.1.1"), ("::ffff:abcd", "::ffff:abcd"),
    ])
    func ipv4MappedAddressesAreUnmapped(input: String, expected: String) {
        #expect(ServiceCore.unmappingIPv4(input) == expected)
    }

    @Test func anXForwardedForIsReadAtItsLastAddress() {
        #expect(ServiceCore.forwardedClient("198.51.100.1, 203.0.113.7") == "203.0.113.7")
        #expect(ServiceCore.forwardedClient(" 2001:db8::1 ") == "2001:db8::1")
        #expect(ServiceCore.forwardedClient("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(ServiceCore.forwardedClient("203.0.113.7, unknown") == nil)
        #expect(ServiceCore.forwardedClient("203.0.113.7,") == nil)
        #expect(ServiceCore.forwardedClient(nil) == nil)
        #expect(ServiceCore.forwardedClient("198.51.100.1, 2001:DB8:0:0::1") == "2001:db8::1")
    }

    /// Trusted proxies and forwarded addresses are compared as text with the addresses lws
    /// reports, which `inet_ntop` writes: any other spelling is brought to that one.
    @Test(arguments: [
        ("2001:DB8::5", "2001:db8::5"), ("2001:db8:0:0::5", "2001:db8::5"), ("2001:0db8::5", "2001:db8::5"),
        ("::FFFF:192.0.2.1", "192.0.2.1"), ("::ffff:c000:201", "192.0.2.1"), ("127.0.0.1", "127.0.0.1"), ("::1", "::1"),
    ])
    func anAddressIsKeptInTheSpellingPeersAreReportedIn(text: String, spelled: String) {
        #expect(ServerConfiguration.plainIPAddress(text) == spelled)
    }

    @Test(arguments: ["", "localhost", "1.2.3", "2001:db8::g", "192.0.2.1/24", "[::1]"])
    func anythingElseIsNotAnAddress(text: String) {
        #expect(ServerConfiguration.plainIPAddress(text) == nil)
    }
}

/// The receive buffer setting reaches the protocol entry lws allocates per connection from.
struct ReceiveBufferTests {
    @Test func theServersWebSocketProtocolTakesTheConfiguredBufferAndClientsTheDefault() {
        let (_, continuation) = AsyncStream<[ServerEvent]>.makeStream()
        let server = LWSContextResources(role: .server(ServerConfiguration(receiveBufferBytes: 1024), continuation))
        #expect(server.protocols[server.webSocketProtocolIndex].rx_buffer_size == 1024)
        server.deallocate()
        let client = LWSContextResources(role: .client(ClientConfiguration(enablesTLS: false)))
        #expect(client.protocols[client.webSocketProtocolIndex].rx_buffer_size == ServerConfiguration.defaultReceiveBufferBytes)
        client.deallocate()
    }
}

/// `ConnectionID`'s table hash (``CounterHash``): the conformance reaches it, and a table of
/// many connections finds each one.
struct ConnectionIDHashTests {
    @Test func theTableHashIsTheCounterHashAndEveryConnectionIsFound() {
        for n: UInt64 in [0, 1, 42, 1 << 40, .max] {
            #expect(ConnectionID(rawValue: n).hashValue == CounterHash.mix(n, seed: 0))
        }
        var table: [ConnectionID: UInt64] = [:]
        for n in 1...20_000 as ClosedRange<UInt64> { table[ConnectionID(rawValue: n)] = n }
        #expect(table.count == 20_000)
        #expect((1...20_000 as ClosedRange<UInt64>).allSatisfy { table[ConnectionID(rawValue: $0)] == $0 })
        #expect(table[ConnectionID(rawValue: 20_001)] == nil)
    }
}
