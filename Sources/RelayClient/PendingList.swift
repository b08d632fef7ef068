import Primitives

extension SessionCore {
    /// The requests waiting for their answer, in the order asked: a queue answered mostly from
    /// its front. Taking the front was an `Array.remove(at: 0)`, which moved every request
    /// behind it: WatchConnectivity hands the session a burst of messages without waiting for
    /// answers, and 10,000 of them took 6 s of the session's time to be accepted (debug build).
    /// Deadlines grow from front to back (each is stamped with the time it was asked or sent,
    /// and requests are sent in order), so the front holds the earliest.
    struct PendingList: Sequence, ExpressibleByArrayLiteral {
        private var items: FIFOArray<Pending>

        init(_ items: [Pending] = []) {
            assert(zip(items, items.dropFirst()).allSatisfy { $0.deadline <= $1.deadline }, "deadlines out of order")
            self.items = FIFOArray(items)
        }
        init(arrayLiteral elements: Pending...) { self.init(elements) }

        var isEmpty: Bool { items.isEmpty }
        /// The oldest request (with the earliest deadline).
        var first: Pending? { items.first }

        func makeIterator() -> FIFOArray<Pending>.Iterator { items.makeIterator() }

        mutating func append(_ p: Pending) {
            assert(items.last.map { $0.deadline <= p.deadline } ?? true, "a request due before the one ahead of it")
            items.append(p)
        }

        /// Takes out the first request that matches: at the front (the usual case, answers come
        /// in order) without moving the others.
        mutating func take(firstWhere matches: (Pending) -> Bool) -> Pending? {
            guard let i = items.firstIndex(where: matches) else { return nil }
            return i == items.startIndex ? items.removeFirst() : items.remove(at: i)
        }

        mutating func removeAll(where matches: (Pending) -> Bool) {
            items = FIFOArray(items.filter { !matches($0) })
        }
    }
}
