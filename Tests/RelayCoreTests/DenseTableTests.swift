import TestSupport
import Testing

@testable import RelayCore

@Suite struct DenseTableTests {
    /// Any sequence of sets, changes in place and removals leaves the table equal to a
    /// `Dictionary` that went through the same steps.
    @Test(arguments: [1, 7, 42])
    func itAgreesWithADictionaryThroughRandomChanges(seed: UInt64) {
        var table = DenseTable<Int, [Int]>()
        var reference: [Int: [Int]] = [:]
        var random = SeededGenerator(seed: seed)
        for step in 0..<5_000 {
            let key = Int(random.next() % 64)
            switch random.next() % 4 {
            case 0:
                table[key] = [step]
                reference[key] = [step]
            case 1:
                table[key]?.append(step)
                reference[key]?.append(step)
            case 2:
                if step % 2 == 0 {
                    _ = table.update(key) { $0.append(-step) }
                } else if let position = table.position(of: key) {
                    // Found once, changed twice where it lies (no entry added or removed between).
                    table.update(at: position) { $0.append(-step) }
                    _ = table.update(at: position) { $0.removeLast() }
                    table.update(at: position) { $0.append(-step) }
                }
                reference[key]?.append(-step)
            default:
                table[key] = nil
                reference[key] = nil
            }
            #expect(table.count == reference.count)
        }
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == reference)
        for key in 0..<64 {
            #expect(table[key] == reference[key])
            #expect(table.read(key, { $0.count }) == reference[key]?.count)
            #expect(table.contains(key) == (reference[key] != nil))
        }
        #expect(table.values.map(\.count).sorted() == reference.values.map(\.count).sorted())
    }

    @Test func removingMovesTheLastEntryIntoTheGapAndKeepsEveryKeyFindable() {
        var table: DenseTable<String, Int> = ["a": 1, "b": 2, "c": 3, "d": 4]
        table["b"] = nil
        #expect(table.count == 3)
        #expect(table["b"] == nil && !table.contains("b"))
        #expect(table["a"] == 1 && table["c"] == 3 && table["d"] == 4)
        table["d"] = nil
        table["a"] = nil
        #expect(table.map(\.key) == ["c"])
        table["c"] = nil
        #expect(table.isEmpty)
        table["e"] = 5
        #expect(table.map(\.key) == ["e"] && table["e"] == 5)
    }

    /// A hint is only a first guess: right, it is the answer; stale (the entry moved when
    /// another was removed), out of range or never set, the key is looked up as without one.
    @Test func aPositionHintIsUsedOnlyWhileItStillHoldsTheKey() {
        var table: DenseTable<String, Int> = ["a": 1, "b": 2, "c": 3, "d": 4]
        let d = table.position(of: "d")!
        #expect(table.position(of: "d", hint: d) == d)
        table["a"] = nil  // an entry moves into a's place
        let moved = table.position(of: "d")!
        for hint in [d, moved, -1, 0, 1, 2, 3, 99, Int.max] {
            #expect(table.position(of: "d", hint: hint) == moved, "hint \(hint)")
            #expect(table.position(of: "a", hint: hint) == nil, "hint \(hint)")
        }
        table.update(at: table.position(of: "d", hint: moved)!) { $0 += 10 }
        #expect(table["d"] == 14)
    }

    @Test func anUpdateOrReadOfAMissingKeyRunsNothingAndAddsNothing() {
        var table = DenseTable<Int, Int>()
        var ran = false
        #expect(table.update(3) { _ in ran = true } == nil)
        #expect(!ran && table.isEmpty)
        #expect(table.read(3) { _ in ran = true } == nil)
        #expect(!ran)
        table[3]? += 1  // optional chaining on a missing key adds nothing either
        #expect(table.isEmpty)
    }

    /// A copy is a value: changing one leaves the other as it was.
    @Test func copiesAreIndependent() {
        var table: DenseTable<Int, [Int]> = [1: [1]]
        let copy = table
        table[1]?.append(2)
        table[2] = [2]
        #expect(copy[1] == [1] && copy.count == 1)
        #expect(table[1] == [1, 2] && table.count == 2)
    }
}
