import RelayCore
import RelayProtocol

/// The faults a developer set on the relay, as a value: what to do to which device's traffic.
///
/// The console's API edits it; the relay's engine asks it, per frame and per tick, whether a
/// device is reachable, how long to hold a frame, whether to drop a message or swallow a reply.
/// Durable items are never its business: it drops only `message` deliveries and replies, and a
/// held frame whose connection goes is redelivered from the store, as without faults.
public struct FaultPlan: Sendable, Equatable {
    /// Faults in force, by target and kind (setting one again replaces it).
    public private(set) var faults: [Fault] = []
    /// `disconnect` faults not yet carried out: each waits until its target has a device
    /// connected, fires once and leaves.
    public private(set) var queuedDisconnects: [Fault] = []
    /// The targets of ``queuedDisconnects``.
    public var pendingDisconnects: [FaultTarget] { queuedDisconnects.map(\.target) }
    /// What the console lists as in force: ``faults``, then the disconnects still waiting.
    public var faultsInForce: [Fault] { faults + queuedDisconnects }
    /// How often each kind fired (drops, swallowed replies, disconnects, held frames).
    public private(set) var fired: [FaultKind: Int] = [:]
    /// Bumped by every change, so the engine applies reachability and budgets only on change.
    public private(set) var version = 0
    /// The ``version`` at which each pair's `complication-budget` fault was set: setting the same
    /// `left` again is a new budget (the pair may have spent some of the last one).
    private var budgetVersions: [PairID: Int] = [:]
    private var random: SplitMix

    /// An empty plan; `seed` drives the drop probability (tests pass a fixed one).
    public init(seed: UInt64 = UInt64.random(in: 1...UInt64.max)) {
        random = SplitMix(state: seed)
    }

    // MARK: - Editing

    /// The most faults in force at once: the engine walks them for every frame it sends, and a
    /// client with the token could otherwise set them on as many made-up targets as it liked.
    public static let maxFaults = 1_000

    /// Sets `fault` (replacing one of the same kind on the same target); `disconnect` is queued
    /// to fire once (one per target). Refuses a new one while ``maxFaults`` are in force (and a
    /// new disconnect while as many wait).
    public mutating func set(_ fault: Fault) throws(FaultError) {
        try fault.validate()
        if fault.kind == .disconnect {
            guard !queuedDisconnects.contains(where: { $0.target == fault.target }) else { return }
            guard queuedDisconnects.count < Self.maxFaults else {
                throw FaultError("\(Self.maxFaults) disconnects wait for their devices, the most the relay keeps: clear some first")
            }
            version += 1
            queuedDisconnects.append(fault)
            return
        }
        let replaces = faults.contains { $0.target == fault.target && $0.kind == fault.kind }
        guard replaces || faults.count < Self.maxFaults else {
            throw FaultError("\(Self.maxFaults) faults are in force, the most the relay keeps: clear some first")
        }
        version += 1
        faults.removeAll { $0.target == fault.target && $0.kind == fault.kind }
        faults.append(fault)
        if fault.kind == .complicationBudget, case .pair(let pair) = fault.target { budgetVersions[pair] = version }
    }

    /// Removes every fault on `target` (all of them when `nil`); returns what was removed.
    @discardableResult
    public mutating func clear(_ target: FaultTarget? = nil) -> [Fault] {
        let removed = faults.filter { target == nil || $0.target == target }
        faults.removeAll { target == nil || $0.target == target }
        let waiting = queuedDisconnects.filter { target == nil || $0.target == target }
        queuedDisconnects.removeAll { target == nil || $0.target == target }
        budgetVersions = budgetVersions.filter { target != nil && target != .pair($0.key) }
        version += 1
        return removed + waiting
    }

    /// Counts one firing of `kind` (for the console and `/metrics`).
    public mutating func count(_ kind: FaultKind, _ n: Int = 1) {
        fired[kind, default: 0] += n
    }

    // MARK: - Questions the engine asks

    /// The faults that apply to `device` of `pair`.
    func faults(for device: DeviceID, in pair: PairID) -> [Fault] {
        faults.filter { $0.target.matches(device: device, pair: pair) }
    }

    /// Whether `device` must look unreachable at `now`: forced, or in the "off" half of a flap
    /// (a flap starts off, at the time it was set, and toggles every `milliseconds`).
    public func isUnreachable(_ device: DeviceID, in pair: PairID, now: Timestamp) -> Bool {
        faults(for: device, in: pair).contains { fault in
            switch fault.kind {
            case .unreachable: return true
            case .flap:
                let period = Int64(max(1, fault.milliseconds ?? 1))
                let elapsed = max(0, now.millisecondsSinceEpoch - fault.setAt.millisecondsSinceEpoch)
                return (elapsed / period) % 2 == 0
            default: return false
            }
        }
    }

    /// When the next `flap` fault turns over after `now` (nil without flaps): the engine's
    /// timer is armed for it, so reachability follows the flaps without a ticking timer.
    public func nextFlip(after now: Timestamp) -> Timestamp? {
        let flips = faults.filter { $0.kind == .flap }.map { fault -> Int64 in
            let period = Int64(max(1, fault.milliseconds ?? 1))
            let elapsed = max(0, now.millisecondsSinceEpoch - fault.setAt.millisecondsSinceEpoch)
            return fault.setAt.millisecondsSinceEpoch + (elapsed / period + 1) * period
        }
        return flips.min().map { Timestamp(millisecondsSinceEpoch: $0) }
    }

    /// How long frames to `device` are held before they go (0: not delayed).
    public func deliveryDelay(to device: DeviceID, in pair: PairID) -> Int {
        faults(for: device, in: pair).filter { $0.kind == .delay }.map { $0.milliseconds ?? 0 }.max() ?? 0
    }

    /// The least time between two writes to `device`'s connection (0: as fast as it reads).
    public func writeSpacing(to device: DeviceID, in pair: PairID) -> Int {
        faults(for: device, in: pair).filter { $0.kind == .slowWrites }.map { $0.milliseconds ?? 0 }.max() ?? 0
    }

    /// Whether to drop a non-durable message delivery to `device` (draws the dice once).
    public mutating func dropsMessage(to device: DeviceID, in pair: PairID) -> Bool {
        let p = faults(for: device, in: pair).filter { $0.kind == .drop }.map { $0.probability ?? 0 }.max() ?? 0
        guard p > 0 else { return false }
        let roll = Double(random.next() >> 11) / Double(1 << 53)
        return roll < p
    }

    /// Whether a `noReply` fault waits for a reply from `device` (asked before the reply is
    /// read: only then does the engine decode it).
    public func holdsReply(from device: DeviceID, in pair: PairID) -> Bool {
        faults.contains { $0.kind == .noReply && $0.target.matches(device: device, pair: pair) }
    }

    /// Whether to swallow this reply from `device`; a `noReply` fault fires once, then leaves.
    public mutating func swallowsReply(from device: DeviceID, in pair: PairID) -> Bool {
        guard let index = faults.firstIndex(where: { $0.kind == .noReply && $0.target.matches(device: device, pair: pair) })
        else { return false }
        faults.remove(at: index)
        version += 1
        return true
    }

    /// The complication budget a fault sets for `pair` (nil: the real one).
    public func complicationBudget(of pair: PairID) -> Int? {
        faults.last { $0.kind == .complicationBudget && $0.target == .pair(pair) }?.left
    }

    /// Pairs with a budget fault, and its value.
    public var complicationBudgets: [PairID: Int] {
        var out: [PairID: Int] = [:]
        for f in faults where f.kind == .complicationBudget {
            if case .pair(let p) = f.target, let left = f.left { out[p] = left }
        }
        return out
    }

    /// A pair's budget fault as the engine applies it: `left`, and the ``version`` it was set at.
    public struct ComplicationBudget: Sendable, Equatable {
        public var left: Int
        public var setAtVersion: Int
    }

    /// Pairs with a budget fault, each with the version it was set at: the engine sets the
    /// pair's budget again whenever this changes, even to the same `left`.
    public var complicationBudgetSettings: [PairID: ComplicationBudget] {
        complicationBudgets.reduce(into: [:]) { out, budget in
            out[budget.key] = ComplicationBudget(left: budget.value, setAtVersion: budgetVersions[budget.key] ?? 0)
        }
    }

    /// Hands over every queued disconnect (each fires once).
    public mutating func takeDisconnects() -> [FaultTarget] {
        takeDisconnects { _ in true }
    }

    /// Hands over the queued disconnects whose target `connected` says has a device connected
    /// now (each fires once); the others wait for theirs.
    public mutating func takeDisconnects(where connected: (FaultTarget) -> Bool) -> [FaultTarget] {
        var due: [FaultTarget] = []
        queuedDisconnects.removeAll { fault in
            guard connected(fault.target) else { return false }
            due.append(fault.target)
            return true
        }
        if !due.isEmpty { version += 1 }
        return due
    }
}

/// A small seeded generator (SplitMix64): the plan's dice, reproducible in tests.
struct SplitMix: Sendable, Equatable {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
