import Testing
@testable import WebSocketTransport

/// lws's allocator (``ReceiveBufferArena``): a server connection's receive buffer gets a slot
/// of the reserved region, every other allocation the heap, and bytes survive what lws may do
/// with its pointers. The region is the process's, shared with tests running beside these, so
/// they check only their own pointers.
@Suite struct ReceiveBufferArenaTests {
    static let receiveBuffer = "rx_ubuf"

    @Test func aReceiveBufferGetsASlotAndEveryOtherAllocationTheHeap() throws {
        let size = ServerConfiguration.defaultReceiveBufferBytes + ReceiveBufferArena.bufferOverheadBytes
        let buffer = try #require(ReceiveBufferArena.reallocate(nil, size: size, reason: Self.receiveBuffer))
        let other = try #require(ReceiveBufferArena.reallocate(nil, size: size, reason: "client frame buffer"))
        let unnamed = try #require(ReceiveBufferArena.reallocate(nil, size: 64, reason: nil))
        #expect(ReceiveBufferArena.contains(buffer))
        #expect(!ReceiveBufferArena.contains(other))
        #expect(!ReceiveBufferArena.contains(unnamed))
        #expect(Int(bitPattern: buffer) % 4096 == 0)
        #expect(ReceiveBufferArena.slotsInUse >= 1)
        // The whole slot is writable, as lws writes up to its rx_buffer_size.
        buffer.initializeMemory(as: UInt8.self, repeating: 0xA5, count: size)
        #expect(buffer.load(fromByteOffset: size - 1, as: UInt8.self) == 0xA5)
        for pointer in [buffer, other, unnamed] {
            #expect(ReceiveBufferArena.reallocate(pointer, size: 0, reason: "lws_free") == nil)
        }
    }

    @Test func theLargestReceiveBufferFitsASlotAndALargerOneComesFromTheHeap() throws {
        let largest = ServerConfiguration.receiveBufferRange.upperBound + ReceiveBufferArena.bufferOverheadBytes
        #expect(largest <= ReceiveBufferArena.slotBytes)
        let fits = try #require(ReceiveBufferArena.reallocate(nil, size: largest, reason: Self.receiveBuffer))
        let tooLarge = try #require(
            ReceiveBufferArena.reallocate(nil, size: ReceiveBufferArena.slotBytes + 1, reason: Self.receiveBuffer))
        #expect(ReceiveBufferArena.contains(fits))
        #expect(!ReceiveBufferArena.contains(tooLarge))
        _ = ReceiveBufferArena.reallocate(fits, size: 0, reason: "lws_free")
        _ = ReceiveBufferArena.reallocate(tooLarge, size: 0, reason: "lws_free")
    }

    @Test func aResizedSlotMovesItsBytesToTheHeap() throws {
        let slot = try #require(ReceiveBufferArena.reallocate(nil, size: 1000, reason: Self.receiveBuffer))
        for i in 0..<1000 { slot.storeBytes(of: UInt8(i % 251), toByteOffset: i, as: UInt8.self) }
        let grown = try #require(ReceiveBufferArena.reallocate(slot, size: ReceiveBufferArena.slotBytes * 2, reason: "grow"))
        #expect(!ReceiveBufferArena.contains(grown))
        #expect((0..<1000).allSatisfy { grown.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0 % 251) })
        // A heap pointer resizes as realloc does.
        let heap = try #require(ReceiveBufferArena.reallocate(grown, size: 10, reason: "shrink"))
        #expect((0..<10).allSatisfy { heap.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
        _ = ReceiveBufferArena.reallocate(heap, size: 0, reason: "lws_free")
    }

    @Test func aFreedSlotIsHandedOutAgain() throws {
        // Slots are reused last-freed-first; with other tests allocating beside this one the
        // next slot may be someone else's, so take several and check one of ours comes back.
        var taken: [UnsafeMutableRawPointer] = []
        for _ in 0..<8 { taken.append(try #require(ReceiveBufferArena.reallocate(nil, size: 4096, reason: Self.receiveBuffer))) }
        let addresses = Set(taken.map { UInt(bitPattern: $0) })
        for pointer in taken { _ = ReceiveBufferArena.reallocate(pointer, size: 0, reason: "lws_free") }
        var again: [UnsafeMutableRawPointer] = []
        for _ in 0..<8 { again.append(try #require(ReceiveBufferArena.reallocate(nil, size: 4096, reason: Self.receiveBuffer))) }
        #expect(again.contains { addresses.contains(UInt(bitPattern: $0)) })
        // A reused slot starts zeroed: its pages went back to the system when it was freed.
        #expect(again.allSatisfy { $0.load(as: UInt64.self) == 0 })
        for pointer in again { _ = ReceiveBufferArena.reallocate(pointer, size: 0, reason: "lws_free") }
    }

    @Test func anOpenServerConnectionHoldsASlot() async throws {
        let echo = try EchoServer()
        let client = try plainClient()
        let connection = try await client.connect(to: echo.url)
        _ = try await echo.openedID()
        #expect(ReceiveBufferArena.slotsInUse >= 1)
        // Control frames and split frames are what lws writes into the buffer: both still work.
        let log = EventLog(connection.events)
        connection.sendFragmented(Array(repeating: UInt8(ascii: "z"), count: 100_000), fragmentSize: 333)
        _ = try await log.first("echo") { $0.text?.count == 100_000 ? true : nil }
        try await stop(client)
        try await stop(echo.server)
    }
}
