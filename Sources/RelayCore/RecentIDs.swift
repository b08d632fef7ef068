import RelayProtocol

/// The last `capacity` ids seen, with O(1) membership (message ids, for `cancel` and retries).
///
/// Every message passes here twice (is it a retry? then remember it), so this is built for
/// that: each id's hash is computed once per call with a cheap seeded FNV-1a over its bytes and
/// kept beside it, the ids lie in a ring (the oldest is overwritten in place), and past
/// ``linearLimit`` ids an open-addressing index of ring positions finds them; forgetting the
/// oldest clears its index slot by the kept hash (backward-shift deletion), without hashing it
/// again. A `Set<String>` hashed each id three times per message (contains, insert, remove of
/// the oldest): 4.7 % of the relay per 64 B message (perf, 2026-12-03).
///
/// Most pairs send a few messages now and then: up to ``linearLimit`` ids are found by scanning
/// the kept hashes, and the index exists only past that (for memory: every direction of every
/// pair has one of these).
struct RecentIDs: Sendable {
    /// The ring: `ids[i]` and `hashes[i]` together; once full, `oldest` is the next to go.
    private var ids: [String] = []
    private var hashes: [UInt32] = []
    private var oldest = 0
    /// Ring position + 1 of the id in each slot, 0 for an empty slot; power-of-two count, at
    /// least twice the capacity (so a probe ends at an empty slot soon). Nil below the limit.
    private var index: [Int32]?
    let capacity: Int
    /// How many ids are scanned before the index is built for them.
    static let linearLimit = 32
    /// Seeds the hash per process, so ids chosen to collide on one relay do not on another.
    private static let seed = UInt32.random(in: .min ... .max)

    init(capacity: Int) {
        precondition(capacity > 0 && capacity < Int(Int32.max) / 2, "RecentIDs capacity \(capacity)")
        self.capacity = capacity
    }

    func contains(_ id: String) -> Bool {
        position(of: id, hash: Self.hash(id)) != nil
    }

    /// Records `id` (a repeat is not recorded twice), forgetting the oldest past the capacity.
    mutating func insert(_ id: String) {
        let h = Self.hash(id)
        guard position(of: id, hash: h) == nil else { return }
        let at: Int
        if ids.count < capacity {
            at = ids.count
            ids.append(id)
            hashes.append(h)
            if index == nil, ids.count > Self.linearLimit {
                buildIndex()  // with `at` in it
                return
            }
        } else {
            at = oldest
            oldest = (oldest + 1) % capacity
            unindex(at)
            ids[at] = id
            hashes[at] = h
        }
        if index != nil { indexPosition(at) }
    }

    /// How many slots of the index are taken (nil below the limit): one per id held, which
    /// the tests check.
    var indexedCount: Int? { index.map { $0.reduce(0) { $0 + ($1 == 0 ? 0 : 1) } } }

    /// Where `id` lies in the ring, or nil.
    private func position(of id: String, hash h: UInt32) -> Int? {
        guard let index else {
            for i in hashes.indices where hashes[i] == h && sameID(ids[i], id) { return i }
            return nil
        }
        let mask = index.count - 1
        var slot = Int(h) & mask
        while index[slot] != 0 {
            let i = Int(index[slot]) - 1
            if hashes[i] == h && sameID(ids[i], id) { return i }
            slot = (slot + 1) & mask
        }
        return nil
    }

    private mutating func buildIndex() {
        var size = 64
        while size < capacity * 2 { size *= 2 }
        index = [Int32](repeating: 0, count: size)
        for i in ids.indices { indexPosition(i) }
    }

    /// Puts ring position `at` in the first empty slot from its hash's.
    private mutating func indexPosition(_ at: Int) {
        let mask = index!.count - 1
        var slot = Int(hashes[at]) & mask
        while index![slot] != 0 { slot = (slot + 1) & mask }
        index![slot] = Int32(at + 1)
    }

    /// Removes ring position `at` from the index (if built), moving later entries of its probe
    /// run back so that every remaining id is still found from its hash's slot.
    private mutating func unindex(_ at: Int) {
        guard index != nil else { return }
        let mask = index!.count - 1
        var hole = Int(hashes[at]) & mask
        while Int(index![hole]) != at + 1 { hole = (hole + 1) & mask }
        var next = hole
        while true {
            next = (next + 1) & mask
            let entry = index![next]
            if entry == 0 { break }
            let home = Int(hashes[Int(entry) - 1]) & mask
            // The entry stays if its home lies cyclically in (hole, next]: moving it before its
            // home would hide it from its probe.
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if stays { continue }
            index![hole] = entry
            hole = next
        }
        index![hole] = 0
    }

    /// FNV-1a over the id's UTF-8 bytes, from the process's seed.
    private static func hash(_ id: String) -> UInt32 {
        var h: UInt32 = 2_166_136_261 ^ seed
        let bytes = id.utf8.span
        for i in bytes.indices {
            h = (h ^ UInt32(bytes[i])) &* 16_777_619
        }
        return h
    }
}
