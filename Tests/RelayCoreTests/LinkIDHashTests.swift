import Primitives
import Testing

@testable import RelayCore

/// `LinkID`'s table hash (``CounterHash``, as `ConnectionID`'s): tables of links behave as with
/// SipHash, and the numbers the transport hands out (consecutive, or far apart) spread over a
/// table's low bits.
struct LinkIDHashTests {
    @Test func tablesOfConsecutiveAndStridedLinksFindEveryKey() {
        let ids = (1...20_000).map { LinkID(UInt64($0)) } + (1...2_000).map { LinkID(UInt64($0) << 32) }
        var table: [LinkID: Int] = [:]
        for (i, id) in ids.enumerated() { table[id] = i }
        #expect(table.count == ids.count)
        for (i, id) in ids.enumerated() { #expect(table[id] == i) }
        #expect(table[LinkID(0)] == nil)
        #expect(table[LinkID(20_001)] == nil)
        for id in ids.prefix(10_000) { table[id] = nil }
        #expect(table.count == ids.count - 10_000)
        #expect(Set(ids).count == ids.count)
    }

    @Test func equalLinksHashEquallyAndTheLowBitsSpread() {
        // `hashValue` is the standard library's `_rawHashValue(seed: 0)` through the
        // conformance: equal only if the conformance reaches this type's own hash, the one
        // `Dictionary` and `Set` call with their seed. A toolchain that dropped the hook would
        // fail here instead of going back to SipHash unnoticed.
        for n: UInt64 in [0, 1, 42, 1 << 40, .max] {
            #expect(LinkID(n).hashValue == CounterHash.mix(n, seed: 0))
        }
        // 4,096 consecutive numbers into 1,024 buckets (a table's mask): no bucket holds more
        // than a handful, where an identity hash would be perfect and a poor mix would pile up.
        var buckets = [Int](repeating: 0, count: 1024)
        for n in 1...4096 { buckets[LinkID(UInt64(n))._rawHashValue(seed: 12345) & 1023] += 1 }
        #expect(buckets.max()! <= 16)
        #expect(buckets.filter { $0 == 0 }.count < 100)
        // Numbers 2^32 apart differ only in high bits; they must not all land in one bucket.
        var high = Set<Int>()
        for n in 1...256 { high.insert(LinkID(UInt64(n) << 32)._rawHashValue(seed: 0) & 1023) }
        #expect(high.count > 200)
    }
}
