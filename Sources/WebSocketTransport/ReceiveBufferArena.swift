import CWebSockets
import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// Where lws 4.1 keeps each server connection's receive buffer (`rx_ubuf`): fixed slots in one
/// reserved region whose pages are only backed once lws writes to them.
///
/// lws `malloc`s an `rx_buffer_size`-byte buffer (16 KiB by default) for every WebSocket
/// connection it accepts. A server reads data frames in place in its per-thread service buffer
/// and writes `rx_ubuf` only for control frames and frames split across reads, so on an idle
/// connection nothing but `malloc`'s own chunk headers touches it. Those headers sit next to
/// every buffer, which made one 4 KiB page resident per connection: half of what an idle
/// connection cost (BENCHMARKS.md, "The receive buffer"). In this region there is no header:
/// a slot costs no memory until lws writes into it, and its pages go back to the system
/// (`MADV_DONTNEED`) when lws frees it.
///
/// The region is `ReceiveBufferArena.slotCount` slots of `ReceiveBufferArena.slotBytes`
/// (1 GiB of address space, `MAP_NORESERVE`, mapped on first use). A buffer larger than a slot,
/// a full region, or a failed `mmap` falls back to `realloc`, as lws would have. Every other
/// allocation lws makes goes straight to `realloc` / `free`.
///
/// ``install()`` sets the allocator once per process (`lws_set_allocator`, a global of lws),
/// before any context exists; pointers allocated before it are told apart by address.
enum ReceiveBufferArena {
    /// One slot: the largest `rx_buffer_size` (``ServerConfiguration/receiveBufferRange``),
    /// `LWS_PRE` and lws's 4 spare bytes, rounded up to whole pages.
    static let slotBytes = 36 << 10
    /// Slots in the region: more than this process can hold connections (its descriptor limit).
    static let slotCount = 28 << 10
    /// What lws allocates beyond `rx_buffer_size`: `LWS_PRE` and 4 bytes for its zlib trailer.
    static let bufferOverheadBytes = relay_lws_pre + 4

    /// Sets lws's allocator (once; later calls do nothing).
    static func install() {
        _ = installed
    }

    /// Whether `address` lies in the region (a test's view of where a buffer went).
    static func contains(_ address: UnsafeRawPointer) -> Bool {
        slotIndex(of: UInt(bitPattern: address)) != nil
    }

    /// Slots handed out and not yet freed.
    static var slotsInUse: Int {
        slots.withLock { $0.nextUnused - $0.free.count }
    }

    private static let installed: Void = {
        lws_set_allocator(lwsAllocator)
    }()

    /// The region's start address, 0 if `mmap` failed.
    private static let regionStart: UInt = {
        let bytes = slotBytes * slotCount
        let region = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let region, region != MAP_FAILED else { return 0 }
        return UInt(bitPattern: region)
    }()

    /// Slots never handed out start at `nextUnused`; freed ones wait in `free`.
    private struct Slots {
        var nextUnused = 0
        var free: [Int32] = []
    }

    private static let slots = LockedState(Slots())

    private static func slotIndex(of address: UInt) -> Int? {
        let start = regionStart
        guard start != 0, address >= start, address < start + UInt(slotBytes * slotCount) else { return nil }
        return Int((address - start) / UInt(slotBytes))
    }

    private static func slotAddress(_ index: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: regionStart + UInt(index * slotBytes))
    }

    /// What lws's allocator does: `realloc` semantics (size 0 frees). `reason` is the label lws
    /// passes: "rx_ubuf" names a server connection's receive buffer, which gets a slot.
    static func reallocate(
        _ pointer: UnsafeMutableRawPointer?, size: Int, reason: UnsafePointer<CChar>?
    ) -> UnsafeMutableRawPointer? {
        guard let pointer else {
            guard size > 0 else { return nil }
            if let reason, strcmp(reason, "rx_ubuf") == 0, let slot = takeSlot(size: size) { return slot }
            return malloc(size)
        }
        guard size > 0 else {
            if !releaseIfSlot(pointer) { free(pointer) }
            return nil
        }
        guard contains(pointer) else { return realloc(pointer, size) }
        // lws 4.1 never resizes rx_ubuf; should it, the bytes move to the heap.
        guard let moved = malloc(size) else { return nil }
        moved.copyMemory(from: pointer, byteCount: min(size, slotBytes))
        _ = releaseIfSlot(pointer)
        return moved
    }

    /// A slot for an `rx_ubuf` of `size` bytes, or nil (then `malloc` serves it).
    private static func takeSlot(size: Int) -> UnsafeMutableRawPointer? {
        guard size <= slotBytes, regionStart != 0 else { return nil }
        let index: Int? = slots.withLock { slots in
            if let reused = slots.free.popLast() { return Int(reused) }
            guard slots.nextUnused < slotCount else { return nil }
            defer { slots.nextUnused += 1 }
            return slots.nextUnused
        }
        return index.flatMap(slotAddress)
    }

    /// Frees `pointer` if it is a slot (its pages first), and says whether it was.
    private static func releaseIfSlot(_ pointer: UnsafeMutableRawPointer) -> Bool {
        guard let index = slotIndex(of: UInt(bitPattern: pointer)), let slot = slotAddress(index) else { return false }
        _ = madvise(slot, slotBytes, MADV_DONTNEED)
        slots.withLock { $0.free.append(Int32(index)) }
        return true
    }
}

/// lws's one allocation entry point, ``ReceiveBufferArena/reallocate(_:size:reason:)``.
private let lwsAllocator: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? = {
    ReceiveBufferArena.reallocate($0, size: $1, reason: $2)
}
