/// A binary min-heap: the least element on top, insert and remove-first in O(log n).
///
/// The relay's pending replies and a server's keepalive keep deadlines here (one entry per
/// request, per connection). `@inlinable`: both use it on their hot paths, specialized there.
@frozen
public struct MinHeap<Element: Comparable> {
    @usableFromInline var storage: [Element] = []

    @inlinable public init() {}

    /// The least element, if any.
    @inlinable public var first: Element? { storage.first }
    @inlinable public var count: Int { storage.count }
    @inlinable public var isEmpty: Bool { storage.isEmpty }

    @inlinable public mutating func insert(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the least element; the heap must not be empty.
    @inlinable @discardableResult
    public mutating func removeFirst() -> Element {
        precondition(!storage.isEmpty, "removeFirst on an empty MinHeap")
        let first = storage[0]
        let last = storage.removeLast()
        if !storage.isEmpty {
            storage[0] = last
            siftDown(from: 0)
        }
        return first
    }

    @inlinable public mutating func removeAll(keepingCapacity: Bool = false) {
        storage.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Keeps only the elements that satisfy `isIncluded`, ordered again bottom-up (O(n)).
    @inlinable public mutating func retain(where isIncluded: (Element) throws -> Bool) rethrows {
        storage = try storage.filter(isIncluded)
        var index = storage.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    @inlinable mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var least = parent
            if left < storage.count, storage[left] < storage[least] { least = left }
            if right < storage.count, storage[right] < storage[least] { least = right }
            guard least != parent else { return }
            storage.swapAt(parent, least)
            parent = least
        }
    }
}

extension MinHeap: Sendable where Element: Sendable {}
