import Foundation
import Testing

@testable import WatchRelayBench

/// What the benchmark reads of a process's CPU time: the kernel's nanosecond clock, agreeing
/// with the tick counts of `/proc/<pid>/stat` it replaced.
struct BenchSystemTests {
    @Test func aProcessCPUClockAgreesWithItsTickCountsToATick() throws {
        // Some CPU first, so that both figures are well above zero.
        var x: UInt64 = 1
        for i in 0..<20_000_000 { x = x &* 6_364_136_223_846_793_005 &+ UInt64(i) }
        #expect(x != 0)
        let pid = getpid()
        let ticksBefore = try #require(BenchSystem.tickSeconds(pid: pid))
        let precise = try #require(BenchSystem.cpuSeconds(pid: pid))
        let ticksAfter = try #require(BenchSystem.tickSeconds(pid: pid))
        #expect(ticksBefore > 0)
        // stat truncates user and system time to whole ticks each: at most two ticks below.
        let tick = 1 / BenchSystem.ticksPerSecond
        #expect(precise >= ticksBefore - 0.001)
        #expect(precise <= ticksAfter + 2 * tick + 0.001)
    }

    @Test func aProcessThatIsGoneHasNoCPUTime() {
        // Above any pid_max Linux allows (2^22), so no process has it.
        #expect(BenchSystem.cpuSeconds(pid: Int32.max) == nil)
        #expect(BenchSystem.tickSeconds(pid: Int32.max) == nil)
    }
}
