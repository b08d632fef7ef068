/// Wire names that a later protocol version may extend are open structs with static
/// members (as swift-nio's `WebSocketOpcode`), not closed enums.

/// A frame's `type` name.
public struct FrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let hello = FrameType(rawValue: "hello")
    public static let welcome = FrameType(rawValue: "welcome")
    public static let pairBegin = FrameType(rawValue: "pair.begin")
    public static let pairCode = FrameType(rawValue: "pair.code")
    public static let pairJoin = FrameType(rawValue: "pair.join")
    public static let paired = FrameType(rawValue: "paired")
    public static let unpair = FrameType(rawValue: "unpair")
    public static let unpaired = FrameType(rawValue: "unpaired")
    public static let state = FrameType(rawValue: "state")
    public static let peer = FrameType(rawValue: "peer")
    public static let send = FrameType(rawValue: "send")
    public static let accepted = FrameType(rawValue: "accepted")
    public static let deliver = FrameType(rawValue: "deliver")
    public static let reply = FrameType(rawValue: "reply")
    public static let ack = FrameType(rawValue: "ack")
    public static let transferred = FrameType(rawValue: "transferred")
    public static let cancel = FrameType(rawValue: "cancel")
    public static let cancelled = FrameType(rawValue: "cancelled")
    public static let outstanding = FrameType(rawValue: "outstanding")
    public static let error = FrameType(rawValue: "error")
}

/// Which side of the pair a device is.
public struct Role: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let phone = Role(rawValue: "phone")
    public static let watch = Role(rawValue: "watch")

    /// The roles protocol v1 knows.
    public static let all: [Role] = [.phone, .watch]

    /// The other side of the pair.
    public var peer: Role { self == .phone ? .watch : .phone }
}

/// One of WatchConnectivity's four delivery modes.
public struct DeliveryMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// `sendMessage`: live, needs the peer reachable, optional reply; not stored.
    public static let message = DeliveryMode(rawValue: "message")
    /// `updateApplicationContext`: latest wins, stored.
    public static let context = DeliveryMode(rawValue: "context")
    /// `transferUserInfo`: durable FIFO.
    public static let userInfo = DeliveryMode(rawValue: "userInfo")
    /// `transferCurrentComplicationUserInfo`: phone → watch, jumps the queue, budgeted.
    public static let complication = DeliveryMode(rawValue: "complication")

    /// The modes protocol v1 knows.
    public static let all: [DeliveryMode] = [.message, .context, .userInfo, .complication]

    /// Whether items of this mode are stored and acked.
    public var isDurable: Bool { self != .message }
}

/// WebSocket close codes the relay uses.
public struct CloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }

    public static let normal = CloseCode(rawValue: 1000)
    /// The relay is shutting down.
    public static let goingAway = CloseCode(rawValue: 1001)
    /// Policy violation (no hello, bad token, too many errors, slow consumer).
    public static let policy = CloseCode(rawValue: 1008)
    /// The relay's store failed to commit what the connection was waiting for (PROTOCOL.md §2.3):
    /// nothing was acknowledged; reconnect and send again.
    public static let storageFailed = CloseCode(rawValue: 1011)
    /// Replaced by a newer connection of the same device.
    public static let replaced = CloseCode(rawValue: 4001)
    /// The pair was dissolved.
    public static let unpaired = CloseCode(rawValue: 4002)
}
