/// An array that pops from the front in O(1): a head index into its storage, compacted when
/// the consumed prefix is at least half of it (so popping n items costs O(n) in total).
///
/// The queues of a pair hold thousands of items while a device is away; `Array.removeFirst`
/// would make draining them quadratic.
struct FIFOArray<Element>: RandomAccessCollection {
    private var storage: [Element] = []
    private var head = 0

    init() {}

    init(_ elements: some Sequence<Element>) {
        storage = Array(elements)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { storage.count - head }

    subscript(position: Int) -> Element {
        get { storage[head + position] }
        set { storage[head + position] = newValue }
    }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the first element; the collection must not be empty.
    @discardableResult
    mutating func removeFirst() -> Element {
        precondition(head < storage.count, "removeFirst on an empty FIFOArray")
        let element = storage[head]
        head += 1
        compactIfNeeded()
        return element
    }

    /// Removes the first `n` elements.
    mutating func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "removeFirst(\(n)) on a FIFOArray of \(count)")
        head += n
        compactIfNeeded()
    }

    /// Removes and returns the element at `position` (O(n): for the rare removal by id).
    @discardableResult
    mutating func remove(at position: Int) -> Element {
        storage.remove(at: head + position)
    }

    private mutating func compactIfNeeded() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1024)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

extension FIFOArray: Sendable where Element: Sendable {}

/// The last `capacity` ids seen, with O(1) membership (message ids, for `cancel` and retries).
///
/// Most pairs send a few messages now and then: up to ``linearLimit`` ids are found by scanning
/// them, and the set that makes membership O(1) exists only past that (it is most of this
/// type's memory: about 300 bytes for ten ids, per direction of every pair).
struct RecentIDs: Sendable {
    private var order: FIFOArray<String> = FIFOArray()
    private var members: Set<String>?
    let capacity: Int
    /// How many ids are scanned before a set is built for them.
    static let linearLimit = 32

    init(capacity: Int) {
        self.capacity = capacity
    }

    func contains(_ id: String) -> Bool {
        if let members { return members.contains(id) }
        return order.contains(id)
    }

    /// Records `id` (a repeat is not recorded twice), forgetting the oldest past the capacity.
    mutating func insert(_ id: String) {
        if members != nil {
            guard members!.insert(id).inserted else { return }
        } else {
            guard !order.contains(id) else { return }
            if order.count >= Self.linearLimit {
                members = Set(order)
                members!.insert(id)
            }
        }
        order.append(id)
        while order.count > capacity {
            let oldest = order.removeFirst()
            members?.remove(oldest)
        }
    }
}
