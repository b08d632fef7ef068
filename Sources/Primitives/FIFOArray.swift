/// An array that pops from the front in O(1): a head index into its storage, compacted when
/// the consumed prefix is at least half of it (so popping n items costs O(n) in total).
///
/// The queues of a pair hold thousands of items while a device is away, and a client session
/// thousands of messages waiting for answers; `Array.removeFirst` would make draining them
/// quadratic. `@inlinable`: the relay's queues use it on their hot path, specialized there.
@frozen
public struct FIFOArray<Element>: RandomAccessCollection {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public init(_ elements: some Sequence<Element>) {
        storage = Array(elements)
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { storage.count - head }

    @inlinable public subscript(position: Int) -> Element {
        get { storage[head + position] }
        set { storage[head + position] = newValue }
    }

    @inlinable public mutating func append(_ element: Element) {
        storage.append(element)
    }

    @inlinable public mutating func append(contentsOf elements: some Sequence<Element>) {
        storage.append(contentsOf: elements)
    }

    /// The first `n` elements as an array (one copy of the storage's slice).
    @inlinable public func prefixArray(_ n: Int) -> [Element] {
        Array(storage[head..<(head + Swift.min(n, count))])
    }

    /// Removes and returns the first element; the collection must not be empty.
    @inlinable @discardableResult
    public mutating func removeFirst() -> Element {
        precondition(head < storage.count, "removeFirst on an empty FIFOArray")
        let element = storage[head]
        head += 1
        compactIfNeeded()
        return element
    }

    /// Removes the first `n` elements.
    @inlinable public mutating func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "removeFirst(\(n)) on a FIFOArray of \(count)")
        head += n
        compactIfNeeded()
    }

    /// Removes and returns the element at `position` (O(n): for the rare removal by id).
    @inlinable @discardableResult
    public mutating func remove(at position: Int) -> Element {
        storage.remove(at: head + position)
    }

    @inlinable mutating func compactIfNeeded() {
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
