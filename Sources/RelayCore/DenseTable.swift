/// A dictionary whose values lie side by side in one array, found through a small index.
///
/// `Dictionary` keeps its values inline in an array as long as its bucket count (up to twice the
/// entries), at the buckets the keys hash to: with a large value type every page of that array is
/// written, used or not. A relay's ``PairState`` was 912 bytes, so `[PairID: PairState]` with
/// 1,000 pairs kept 1.9 MB resident; here the values take what they use (0.9 MB then, 0.7 MB now
/// that it is 688, measured 2026-12-03) and the index holds only an `Int` per bucket. The same
/// goes for the relay's connections.
///
/// Value semantics as `Dictionary`'s; the order of iteration is unspecified (it changes when an
/// entry is removed: the last entry moves into its place). Changing a value through the
/// subscript or ``update(_:_:)`` changes it where it lies, without copying it out and back.
struct DenseTable<Key: Hashable, Value> {
    /// Where each key's entry is in `keys` and `slots`.
    private var positions: [Key: Int] = [:]
    private var keys: [Key] = []
    /// Every slot holds a value, except while the subscript lends one out (it may be set to nil).
    private var slots: [Value?] = []

    init() {}

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    func contains(_ key: Key) -> Bool {
        positions[key] != nil
    }

    /// The value of `key`; setting nil removes the entry.
    subscript(key: Key) -> Value? {
        get {
            guard let position = positions[key] else { return nil }
            return slots[position]
        }
        _modify {
            if let position = positions[key] {
                // In a defer, so that the table stays whole even if the access ends by a throw.
                defer { if slots[position] == nil { remove(at: position) } }
                yield &slots[position]
            } else {
                var added: Value?
                defer { if let added { append(key, added) } }
                yield &added
            }
        }
    }

    /// `body` on the value of `key`, borrowed where it lies; nil (and `body` not run) when
    /// there is none. Mutating only to reach the value in place (an inout access, as
    /// ``update(_:_:)``): `table[key]?.field` and a non-mutating read through the array both
    /// copied the whole value out first (a relay `Link`, its strings and arrays retained and
    /// released, for a check of a connection's phase: perf 2026-12-03).
    @inline(__always)
    mutating func read<T>(_ key: Key, _ body: (borrowing Value) -> T) -> T? {
        update(key) { body($0) }
    }

    /// `body` on the value of `key` where it lies; nil (and `body` not run) when there is none.
    @inline(__always)
    mutating func update<T>(_ key: Key, _ body: (inout Value) -> T) -> T? {
        guard let position = positions[key] else { return nil }
        // Every slot outside the subscript's modify holds a value.
        return body(&slots[position]!)
    }

    /// Where the value of `key` lies, for ``update(at:_:)``: valid until an entry is added or
    /// removed. (One hash of the key for several accesses: a pair's id is a string.)
    func position(of key: Key) -> Int? {
        positions[key]
    }

    /// ``position(of:)``, trying `hint` (a position this key had) first: a comparison of keys
    /// instead of a hash when no entry has moved since.
    @inline(__always)
    func position(of key: Key, hint: Int) -> Int? {
        if hint >= 0, hint < keys.count, keys[hint] == key { return hint }
        return positions[key]
    }

    /// `body` on the value at `position` (from ``position(of:)``, with no entry added or
    /// removed since), where it lies.
    @inline(__always)
    mutating func update<T>(at position: Int, _ body: (inout Value) -> T) -> T {
        body(&slots[position]!)
    }

    /// `body` on every value where it lies, in the table's order: a read of every entry that
    /// copies none (``values`` copies each out; a pair's state holds its queues).
    @inline(__always)
    mutating func updateEach(_ body: (inout Value) -> Void) {
        for position in slots.indices { body(&slots[position]!) }
    }

    /// Every value, in the table's order.
    var values: some Sequence<Value> {
        slots.lazy.compactMap { $0 }
    }

    private mutating func append(_ key: Key, _ value: Value) {
        positions[key] = keys.count
        keys.append(key)
        slots.append(value)
    }

    /// Removes the entry at `position` by moving the last entry into its place.
    private mutating func remove(at position: Int) {
        let key = keys[position]
        let last = keys.count - 1
        if position != last {
            keys.swapAt(position, last)
            slots.swapAt(position, last)
            positions[keys[position]] = position
        }
        keys.removeLast()
        slots.removeLast()
        positions[key] = nil
    }
}

extension DenseTable: Sequence {
    /// The entries as `(key, value)`, in the table's order.
    func makeIterator() -> AnyIterator<(key: Key, value: Value)> {
        var position = 0
        let keys = self.keys
        let slots = self.slots
        return AnyIterator {
            while position < keys.count {
                defer { position += 1 }
                if let value = slots[position] { return (keys[position], value) }
            }
            return nil
        }
    }

    var underestimatedCount: Int { keys.count }
}

extension DenseTable: Sendable where Key: Sendable, Value: Sendable {}

extension DenseTable: ExpressibleByDictionaryLiteral {
    init(dictionaryLiteral elements: (Key, Value)...) {
        for (key, value) in elements {
            precondition(!contains(key), "duplicate key \(key) in a DenseTable literal")
            self[key] = value
        }
    }
}
