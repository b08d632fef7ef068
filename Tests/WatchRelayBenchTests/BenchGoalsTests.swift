import Testing

@testable import WatchRelayBench

/// `make bench` judges the relay's targets from the medians: met, missed, or not measured.
struct BenchGoalsTests {
    private func row(
        _ scenario: String, _ target: BenchTarget, _ label: String, rate: Double? = nil, cpu: Double? = nil,
        p99: Double? = nil, rss: Double? = nil, perConnection: Double? = nil, count: Int? = nil
    ) -> BenchResult {
        var row = BenchResult(scenario: scenario, target: target.rawValue, label: label)
        row.messagesPerSecond = rate
        row.relayCPUSecondsPer1k = cpu
        row.p99Milliseconds = p99
        row.relayRSSMiB = rss
        row.rssPerConnectionKiB = perConnection
        row.count = count
        row.relayCPUPercent = 40
        return row
    }

    private func goal(_ goals: [BenchReport.Goal], _ prefix: String) throws -> BenchReport.Goal {
        try #require(goals.first { $0.goal.hasPrefix(prefix) }, "no goal starting '\(prefix)'")
    }

    /// This machine's medians of 2026-12-06 (12:33 UTC), curve and 9,950 pairs added.
    private var measured: [BenchResult] {
        [
            row("throughput", .watchrelay, "64 B", rate: 485_815, cpu: 0.0020),
            row("throughput", .lwsC, "64 B", rate: 146_580, cpu: 0.0068),
            row("throughput", .python, "64 B", rate: 88_604, cpu: 0.0112),
            row("throughput", .watchrelay, "65536 B", rate: 3392, cpu: 0.0634),
            row("throughput", .lwsC, "65536 B", rate: 3540, cpu: 0.0406),
            row("throughput", .python, "65536 B", rate: 3527, cpu: 0.0867),
            row("latency", .watchrelay, "10000/s", rate: 9999, p99: 0.184),
            row("manyPairs", .watchrelay, "1000 pairs × 1/s", rate: 1000, p99: 0.191, rss: 21.4),
            row("manyPairs", .watchrelay, "9950 pairs × 1/s", rate: 9950, p99: 1.9, rss: 85.7),
            row("connections", .watchrelay, "10000 idle", perConnection: 2.7, count: 10_000),
            row("durable", .watchrelay, "sync full", rate: 61_563),
            row("curve", .watchrelay, "1 pairs, 5000/s in all", cpu: 0.0223),
            row("curve", .watchrelay, "1000 pairs, 5000/s in all", cpu: 0.0300),
            row("curve", .watchrelay, "5000 pairs, 5000/s in all", cpu: 0.0350),
            row("curve", .python, "1000 pairs, 5000/s in all", cpu: 0.0900),
            row("curve", .python, "5000 pairs, 5000/s in all", cpu: 0.1000),
        ]
    }

    @Test func eachTargetIsMetOrMissedFromTheMedians() throws {
        let goals = BenchGoals.evaluate(measured)
        #expect(try goal(goals, "relay CPU per 64 B").met == true)
        let large = try goal(goals, "relay CPU per 65536 B")
        #expect(large.met == false && large.measured == "1.56×")
        let python = try goal(goals, "throughput ≥ 1.00× python")
        #expect(python.met == false, "65536 B is 0.96× python's")
        #expect(python.measured == "64 B: 5.48×, 65536 B: 0.96×")
        #expect(try goal(goals, "throughput ≥ 0.95× lws-c").met == true)
        #expect(try goal(goals, "p99 ≤ 1 ms").met == true)
        let curve = try goal(goals, "relay CPU per message at 1,000")
        #expect(curve.met == false, "5,000 pairs is 1.57× one pair's")
        #expect(curve.measured.contains("5000 pairs: 1.57× of 1 pair's, 0.35× python-websockets'; at 5000/s in all"))
        let tenThousand = try goal(goals, "10,000 pairs")
        #expect(tenThousand.met == nil, "9,950 pairs is reported, not judged")
        #expect(tenThousand.measured.hasPrefix("9950 pairs: p99 1.900 ms"))
        #expect(tenThousand.measured.contains("--pairs stops at 9950"), "not a hint to an option that is refused")
        #expect(try goal(goals, "1,000 pairs ≤ 24 MiB").met == true)
        #expect(try goal(goals, "10,000 idle connections").met == true)
        #expect(try goal(goals, "durable userInfo").met == true)
    }

    @Test func aRunWithoutTheRowsMeasuresNothing() throws {
        let goals = BenchGoals.evaluate([])
        #expect(goals.count == 10)
        #expect(goals.allSatisfy { $0.met == nil && $0.measured.hasPrefix("not measured") })
        // Failed rows count as absent.
        let failed = BenchResult.placeholder(scenario: "durable", target: "watchrelay", label: "sync full", status: "failed: x")
        #expect(try goal(BenchGoals.evaluate([failed]), "durable userInfo").met == nil)
        // `--quick` opens 1,000 connections: reported, not judged.
        let quick = try goal(
            BenchGoals.evaluate([row("connections", .watchrelay, "1000 idle", perConnection: 3.1, count: 1000)]), "10,000 idle")
        #expect(quick.met == nil && quick.measured == "3.10 KiB (1000 idle), not the point: --connections 10000")
    }

    @Test func aCurveWithoutPythonIsNotJudgedUnlessOursAlreadyMissed() throws {
        let ours = measured.filter { !($0.scenario == "curve" && $0.target == BenchTarget.python.rawValue) }
        #expect(try goal(BenchGoals.evaluate(ours), "relay CPU per message at 1,000").met == false, "1.57× misses anyway")
        let flat = ours.map { row in
            var row = row
            if row.scenario == "curve" { row.relayCPUSecondsPer1k = 0.0223 }
            return row
        }
        let curve = try goal(BenchGoals.evaluate(flat), "relay CPU per message at 1,000")
        #expect(curve.met == nil && curve.measured.contains("python-websockets not measured"))
    }

    /// "At every size": a size the peer has no row for (it failed there) is not measured, and
    /// the target is not met on the sizes that were.
    @Test func aSizeThePeerFailedAtIsNotMeasuredNotMet() throws {
        var rows = measured.filter { !($0.target == BenchTarget.lwsC.rawValue && $0.label == "65536 B") }
        rows.append(.placeholder(scenario: "throughput", target: "lws-c", label: "65536 B", status: "failed: timeout"))
        let lwsC = try goal(BenchGoals.evaluate(rows), "throughput ≥ 0.95× lws-c")
        #expect(lwsC.met == nil && lwsC.measured == "64 B: 3.31×, 65536 B: not measured")
        // A measured size that misses decides it anyway.
        let python = try goal(BenchGoals.evaluate(rows.filter { $0.target != BenchTarget.python.rawValue || $0.label == "65536 B" }), "throughput ≥ 1.00× python")
        #expect(python.met == false && python.measured == "64 B: not measured, 65536 B: 0.96×")
    }

    /// Saturation is the median rate's, not the first run's note.
    @Test func theLatencyPointIsSaturatedByItsMedianRate() throws {
        var row = row("latency", .watchrelay, "10000/s", rate: 9999, p99: 0.2)
        row.note = "1 pair, saturated: delivered only 9100/s"  // the first run's
        #expect(try goal(BenchGoals.evaluate([row]), "p99 ≤ 1 ms").met == true)
        row.messagesPerSecond = 9100
        let slow = try goal(BenchGoals.evaluate([row]), "p99 ≤ 1 ms")
        #expect(slow.met == false && slow.measured.hasSuffix("(saturated)"))
    }

    @Test func tenThousandPairsIsJudgedOnlyAtThatPoint() throws {
        let rows = [row("manyPairs", .watchrelay, "10000 pairs × 1/s", rate: 9990, p99: 4.2)]
        #expect(try goal(BenchGoals.evaluate(rows), "10,000 pairs").met == true)
        let slow = [row("manyPairs", .watchrelay, "10000 pairs × 1/s", rate: 9990, p99: 12)]
        #expect(try goal(BenchGoals.evaluate(slow), "10,000 pairs").met == false)
        let behind = [row("manyPairs", .watchrelay, "10000 pairs × 1/s", rate: 7000, p99: 4)]
        #expect(try goal(BenchGoals.evaluate(behind), "10,000 pairs").met == false, "not sustained")
    }
}
