/// The table hash of a number the process hands out itself (a connection's or a link's): a
/// 64-bit mix of the number and the table's seed instead of SipHash.
///
/// For a type whose `_rawHashValue(seed:)` returns it, the standard library's customization
/// point for the hash a `Dictionary` or `Set` uses (`Int` hashes through it). Such numbers are
/// inserted into tables only as a counter hands them out (a peer may name one to look up, never
/// one to insert), so a table of them cannot be flooded with collisions. At
/// 64 B per message the relay looked up such ids five to six times, and SipHash's seed and
/// finalize were 3.6 % of its samples (perf --call-graph dwarf, 2026-12-03). Were the
/// customization point to go in a later toolchain, the synthesized SipHash would be used
/// again, still correct.
public enum CounterHash {
    /// murmur3's 64-bit finalizer of `value` and `seed`: every input bit reaches the low bits a
    /// table masks its buckets with.
    @inline(__always)
    public static func mix(_ value: UInt64, seed: Int) -> Int {
        var x = value ^ UInt64(UInt(bitPattern: seed))
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return Int(truncatingIfNeeded: x)
    }
}
