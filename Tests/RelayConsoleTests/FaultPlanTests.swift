import RelayConsole
import RelayCore
import RelayProtocol
import Testing

/// The fault plan as a value: what it says about each device, and what it refuses.
@Suite struct FaultPlanTests {
    let pair = PairID("pr-1")
    let phone = DeviceID("d-phone")
    let watch = DeviceID("d-watch")
    func at(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSinceEpoch: ms) }

    @Test func unreachableOnAPairCoversBothDevicesAndClearsInOneCall() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.unreachable, on: .pair(pair), at: at(0)))
        #expect(plan.isUnreachable(phone, in: pair, now: at(5)))
        #expect(plan.isUnreachable(watch, in: pair, now: at(5)))
        #expect(!plan.isUnreachable(watch, in: PairID("other"), now: at(5)))
        let removed = plan.clear(.pair(pair))
        #expect(removed.count == 1 && plan.faults.isEmpty)
        #expect(!plan.isUnreachable(watch, in: pair, now: at(5)))
    }

    @Test func flapStartsOffAndTogglesEveryPeriod() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.flap, on: .device(watch), milliseconds: 100, at: at(1000)))
        #expect(plan.isUnreachable(watch, in: pair, now: at(1000)))
        #expect(plan.isUnreachable(watch, in: pair, now: at(1099)))
        #expect(!plan.isUnreachable(watch, in: pair, now: at(1100)))
        #expect(plan.isUnreachable(watch, in: pair, now: at(1200)))
        #expect(!plan.isUnreachable(phone, in: pair, now: at(1000)))
    }

    /// A client with the token could set a fault on as many made-up targets as it liked: the
    /// plan grew without bound, and every frame the relay sent walked all of it. At most 1,000
    /// are in force; replacing one, or clearing some, still works at the most.
    @Test func atMostAThousandFaultsAreInForce() throws {
        var plan = FaultPlan(seed: 1)
        for n in 0..<1_000 { try plan.set(Fault(.unreachable, on: .device(DeviceID("d-\(n)")), at: at(0))) }
        #expect(throws: FaultError.self) { try plan.set(Fault(.unreachable, on: .device(DeviceID("d-more")), at: at(0))) }
        #expect(plan.faults.count == 1_000)
        try plan.set(Fault(.unreachable, on: .device(DeviceID("d-0")), at: at(1)))
        try plan.set(Fault(.disconnect, on: .device(DeviceID("d-more")), at: at(1)))
        plan.clear(.device(DeviceID("d-1")))
        try plan.set(Fault(.unreachable, on: .device(DeviceID("d-more")), at: at(2)))
        #expect(plan.faults.count == 1_000)
    }

    @Test func settingTheSameKindAgainReplacesIt() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.delay, on: .device(watch), milliseconds: 100, at: at(0)))
        try plan.set(Fault(.delay, on: .device(watch), milliseconds: 300, at: at(1)))
        #expect(plan.faults.count == 1)
        #expect(plan.deliveryDelay(to: watch, in: pair) == 300)
        #expect(plan.deliveryDelay(to: phone, in: pair) == 0)
    }

    @Test func dropProbabilityOneDropsEveryMessageAndZeroIsRefused() throws {
        var plan = FaultPlan(seed: 7)
        try plan.set(Fault(.drop, on: .device(watch), probability: 1, at: at(0)))
        #expect((0..<50).allSatisfy { _ in plan.dropsMessage(to: watch, in: pair) })
        let phoneDropped = plan.dropsMessage(to: phone, in: pair)
        #expect(!phoneDropped)
        #expect(throws: FaultError.self) { try plan.set(Fault(.drop, on: .device(watch), probability: 0, at: at(0))) }
        #expect(throws: FaultError.self) { try plan.set(Fault(.drop, on: .device(watch), probability: 1.5, at: at(0))) }
    }

    @Test func dropHalfDropsSomeAndKeepsSomeFromTheSameSeed() throws {
        var a = FaultPlan(seed: 42)
        var b = FaultPlan(seed: 42)
        try a.set(Fault(.drop, on: .pair(pair), probability: 0.5, at: at(0)))
        try b.set(Fault(.drop, on: .pair(pair), probability: 0.5, at: at(0)))
        let rollsA = (0..<200).map { _ in a.dropsMessage(to: watch, in: pair) }
        let rollsB = (0..<200).map { _ in b.dropsMessage(to: watch, in: pair) }
        #expect(rollsA == rollsB)
        #expect(rollsA.contains(true) && rollsA.contains(false))
    }

    @Test func noReplyFiresOnceThenLeaves() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.noReply, on: .device(phone), at: at(0)))
        let fromWatch = plan.swallowsReply(from: watch, in: pair)
        let first = plan.swallowsReply(from: phone, in: pair)
        let second = plan.swallowsReply(from: phone, in: pair)
        #expect(!fromWatch && first && !second)
        #expect(plan.faults.isEmpty)
    }

    @Test func disconnectIsQueuedOnceAndNotAmongTheFaultsFramesGoThrough() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.disconnect, on: .device(watch), at: at(0)))
        #expect(plan.faults.isEmpty)
        let first = plan.takeDisconnects()
        let second = plan.takeDisconnects()
        #expect(first == [.device(watch)] && second.isEmpty)
    }

    @Test func complicationBudgetIsPerPairOnly() throws {
        var plan = FaultPlan(seed: 1)
        #expect(throws: FaultError.self) { try plan.set(Fault(.complicationBudget, on: .device(watch), left: 0, at: at(0))) }
        try plan.set(Fault(.complicationBudget, on: .pair(pair), left: 2, at: at(0)))
        #expect(plan.complicationBudget(of: pair) == 2)
        #expect(plan.complicationBudgets == [pair: 2])
    }

    @Test(arguments: [FaultKind.flap, .delay, .slowWrites])
    func timedFaultsNeedAPositiveMilliseconds(kind: FaultKind) throws {
        var plan = FaultPlan(seed: 1)
        #expect(throws: FaultError.self) { try plan.set(Fault(kind, on: .device(watch), at: at(0))) }
        #expect(throws: FaultError.self) { try plan.set(Fault(kind, on: .device(watch), milliseconds: 0, at: at(0))) }
        try plan.set(Fault(kind, on: .device(watch), milliseconds: 50, at: at(0)))
        #expect(plan.faults.count == 1)
    }

    @Test func clearWithoutTargetRemovesEverything() throws {
        var plan = FaultPlan(seed: 1)
        try plan.set(Fault(.unreachable, on: .device(watch), at: at(0)))
        try plan.set(Fault(.slowWrites, on: .device(phone), milliseconds: 10, at: at(0)))
        try plan.set(Fault(.disconnect, on: .device(phone), at: at(0)))
        #expect(plan.clear().count == 3)  // the disconnect waiting for its device too
        #expect(plan.faults.isEmpty && plan.pendingDisconnects.isEmpty)
    }

    @Test(arguments: ["pair:pr-1", "device:d-watch"])
    func targetsParseAndPrintBack(text: String) throws {
        #expect(try FaultTarget(parsing: text).description == text)
    }

    @Test(arguments: ["pr-1", "pair:", "phone:x", ""])
    func badTargetsAreRefused(text: String) {
        #expect(throws: FaultError.self) { try FaultTarget(parsing: text) }
    }
}
