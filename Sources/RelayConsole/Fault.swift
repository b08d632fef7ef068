import RelayCore
import RelayProtocol

/// What a fault is aimed at: every device of a pair, or one device.
public enum FaultTarget: Hashable, Sendable, CustomStringConvertible {
    case pair(PairID)
    case device(DeviceID)

    /// Parses `pair:ID` or `device:ID`.
    public init(parsing text: String) throws(FaultError) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else {
            throw FaultError("target must be pair:ID or device:ID, not '\(text)'")
        }
        switch parts[0] {
        case "pair": self = .pair(PairID(parts[1]))
        case "device": self = .device(DeviceID(parts[1]))
        default: throw FaultError("target must be pair:ID or device:ID, not '\(text)'")
        }
    }

    /// `pair:ID` or `device:ID`.
    public var description: String {
        switch self {
        case .pair(let p): return "pair:\(p.rawValue)"
        case .device(let d): return "device:\(d.rawValue)"
        }
    }

    /// Whether this target covers `device` of `pair`.
    public func matches(device: DeviceID, pair: PairID) -> Bool {
        switch self {
        case .pair(let p): return p == pair
        case .device(let d): return d == device
        }
    }
}

/// The kinds of fault, by their API name.
public enum FaultKind: String, Sendable, CaseIterable, Codable {
    /// Report the device not reachable while it stays connected.
    case unreachable
    /// Reachability off and on every `ms` milliseconds (starting off).
    case flap
    /// Hold every frame to the device for `ms` milliseconds.
    case delay
    /// Drop `message` deliveries to the device with probability `p` (durable modes never).
    case drop
    /// Swallow the device's next `reply`: the requester gets `reply_timeout`.
    case noReply = "no-reply"
    /// Set the pair's complication transfers left to `left`.
    case complicationBudget = "complication-budget"
    /// Close the device's connection now (fires once; durable items are redelivered).
    case disconnect
    /// Space writes to the device's connection at least `ms` milliseconds apart.
    case slowWrites = "slow-writes"
}

/// One fault: a kind, a target, its parameter, and when it was set.
public struct Fault: Sendable, Equatable {
    public var target: FaultTarget
    public var kind: FaultKind
    /// `flap`, `delay`, `slow-writes`.
    public var milliseconds: Int?
    /// `drop`: 0 < p ≤ 1.
    public var probability: Double?
    /// `complication-budget`.
    public var left: Int?
    public var setAt: Timestamp

    public init(
        _ kind: FaultKind, on target: FaultTarget, milliseconds: Int? = nil, probability: Double? = nil,
        left: Int? = nil, at setAt: Timestamp
    ) {
        self.kind = kind
        self.target = target
        self.milliseconds = milliseconds
        self.probability = probability
        self.left = left
        self.setAt = setAt
    }

    /// Checks the parameter the kind needs.
    func validate() throws(FaultError) {
        switch kind {
        case .flap, .delay, .slowWrites:
            guard let ms = milliseconds, (1...600_000).contains(ms) else {
                throw FaultError("\(kind.rawValue) needs ms between 1 and 600000")
            }
        case .drop:
            guard let p = probability, p > 0, p <= 1 else { throw FaultError("drop needs p with 0 < p <= 1") }
        case .complicationBudget:
            guard let left = left, left >= 0 else { throw FaultError("complication-budget needs left >= 0") }
            guard case .pair = target else { throw FaultError("complication-budget is per pair: target pair:ID") }
        case .unreachable, .noReply, .disconnect:
            break
        }
    }

    /// The parameter as text for logs and the console (`ms=500`, `p=0.5`, `left=0`, or empty).
    public var parameter: String {
        if let ms = milliseconds { return "ms=\(ms)" }
        if let p = probability { return "p=\(p)" }
        if let left { return "left=\(left)" }
        return ""
    }
}

/// A fault the console's API refused, with the reason (HTTP 400).
public struct FaultError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
