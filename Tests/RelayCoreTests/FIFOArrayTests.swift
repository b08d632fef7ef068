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
}
