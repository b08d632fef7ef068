import Primitives
import TestSupport
import Testing

/// The heap under the relay's reply deadlines and the transport's keepalive.
@Suite struct MinHeapTests {
    @Test func removesInAscendingOrderWhateverTheInsertionOrder() {
        var generator = SeededGenerator(seed: 11)
        for size in [0, 1, 2, 3, 10, 257, 2_000] {
            let values = (0..<size).map { _ in Int.random(in: -50...50, using: &generator) }
            var heap = MinHeap<Int>()
            for v in values { heap.insert(v) }
            #expect(heap.count == size)
            var out: [Int] = []
            while !heap.isEmpty { out.append(heap.removeFirst()) }
            #expect(out == values.sorted(), "size \(size)")
        }
    }

    @Test func interleavedInsertsAndRemovalsKeepTheLeastOnTop() {
        var generator = SeededGenerator(seed: 5)
        var heap = MinHeap<Int>()
        var reference: [Int] = []
        for _ in 0..<5_000 {
            if reference.isEmpty || Bool.random(using: &generator) {
                let v = Int.random(in: 0..<1_000, using: &generator)
                heap.insert(v)
                reference.append(v)
            } else {
                let least = reference.min()!
                reference.remove(at: reference.firstIndex(of: least)!)
                #expect(heap.removeFirst() == least)
            }
            #expect(heap.first == reference.min())
        }
    }

    @Test func retainKeepsTheChosenElementsInHeapOrder() {
        var heap = MinHeap<Int>()
        for v in (0..<1_000).reversed() { heap.insert(v) }
        heap.retain { $0 % 3 == 0 }
        var out: [Int] = []
        while let top = heap.first {
            out.append(top)
            heap.removeFirst()
        }
        #expect(out == Array(stride(from: 0, to: 1_000, by: 3)))
        heap.insert(7)
        heap.removeAll()
        #expect(heap.isEmpty && heap.first == nil)
    }
}
