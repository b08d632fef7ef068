import Primitives
import TestSupport
import Testing

@testable import RelayCore

@Suite struct FIFOArrayTests {
    @Test func popsInOrderAcrossCompactions() {
        var fifo = FIFOArray<Int>()
        var expected: [Int] = []
        var next = 0
        // Interleave pushes and pops so the head crosses the compaction threshold many times.
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 3) {
                fifo.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5 + 1) where !expected.isEmpty {
                #expect(fifo.removeFirst() == expected.removeFirst())
            }
            #expect(Array(fifo) == expected)
            #expect(fifo.first == expected.first)
        }
        fifo.removeFirst(fifo.count)
        #expect(fifo.isEmpty)
    }

    @Test func indexesRemovesAndAssignsRelativeToTheHead() {
        var fifo = FIFOArray(0..<200)
        fifo.removeFirst(100)
        #expect(fifo[0] == 100)
        #expect(fifo.firstIndex(of: 150) == 50)
        #expect(fifo.remove(at: 50) == 150)
        fifo[0] = -1
        #expect(Array(fifo.prefix(3)) == [-1, 101, 102])
        #expect(fifo.count == 99)
    }

    @Test func appendsManyAndCopiesAPrefixFromTheHead() {
        var fifo = FIFOArray<UInt8>()
        fifo.append(contentsOf: 0..<100)
        fifo.removeFirst(10)
        #expect(fifo.prefixArray(3) == [10, 11, 12])
        #expect(fifo.prefixArray(1000).count == 90)
        fifo.append(contentsOf: [200, 201])
        fifo.removeFirst(90)
        #expect(fifo.prefixArray(5) == [200, 201])
    }

    @Test func recentIDsKeepTheLastCapacityIDs() {
        var recent = RecentIDs(capacity: 3)
        for id in ["a", "b", "c", "b", "d"] { recent.insert(id) }
        #expect(!recent.contains("a"))
        #expect(["b", "c", "d"].allSatisfy(recent.contains))
        recent.insert("e")
        #expect(!recent.contains("b"))
        #expect(recent.contains("e"))
    }

    /// Past ``RecentIDs/linearLimit`` ids a set answers instead of a scan: the same answers,
    /// whether the capacity is below, at or above that limit.
    @Test(arguments: [5, RecentIDs.linearLimit, RecentIDs.linearLimit + 1, 256])
    func recentIDsAnswerTheSameScannedOrHashed(capacity: Int) {
        var recent = RecentIDs(capacity: capacity)
        var window: [String] = []
        for n in 0..<600 {
            let id = "m-\(n % 400)"  // from n = 400 on, every id is a repeat of one seen long ago
            recent.insert(id)
            if !window.contains(id) {
                window.append(id)
                if window.count > capacity { window.removeFirst() }
            }
            for probe in [id, "m-\((n + 1) % 400)", "m-\(n / 2)", "never"] {
                #expect(recent.contains(probe) == window.contains(probe), "capacity \(capacity), after \(n): \(probe)")
            }
        }
    }

    /// Random ids from a small pool (so many repeats, and many ids whose index slots collide
    /// with others'), through many evictions: after every insert the set answers as a plain
    /// list of the last `capacity` distinct ids would.
    @Test(arguments: [1, 3, RecentIDs.linearLimit + 1, 100, 256])
    func recentIDsAgreeWithAListThroughRandomInsertsAndEvictions(capacity: Int) {
        var recent = RecentIDs(capacity: capacity)
        var window: [String] = []
        var random = SeededGenerator(seed: UInt64(capacity))
        let pool = (0..<(capacity * 3 + 5)).map { "id-\($0)-\(String(repeating: "x", count: $0 % 7))" }
        for _ in 0..<6_000 {
            let id = pool[Int(random.next() % UInt64(pool.count))]
            recent.insert(id)
            if !window.contains(id) {
                window.append(id)
                if window.count > capacity { window.removeFirst() }
            }
            // Every id held has exactly one index slot once the index exists (an id indexed
            // twice when the index was built still answered right: found by review).
            if let indexed = recent.indexedCount { #expect(indexed == min(window.count, capacity)) }
            let probe = pool[Int(random.next() % UInt64(pool.count))]
            #expect(recent.contains(probe) == window.contains(probe), "capacity \(capacity): \(probe)")
        }
        for id in pool { #expect(recent.contains(id) == window.contains(id), "capacity \(capacity): \(id)") }
        #expect(!recent.contains("") && !recent.contains("é"))
    }
}
