import Primitives
import Synchronization

/// Identifies one WebSocket connection of a ``WebSocketServer`` or ``WebSocketClientContext``.
///
/// IDs come from one process-wide counter that starts at 1, so an ID is never reused within a
/// process and events from different servers or client contexts never collide. The transport
/// stores only this integer in lws per-session data, never a Swift object; 0 means "no
/// connection" because lws zero-fills that memory.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The integer value, unique within the process and never 0 for a live connection.
    public let rawValue: UInt64

    /// Creates an ID from its raw value (live IDs come from the transport; this is for tests and logs).
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// A short form for logs, e.g. `#42`.
    public var description: String { "#\(rawValue)" }

    /// Orders IDs by allocation: a smaller ID was handed out earlier.
    public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// A `Dictionary`'s or `Set`'s hash without SipHash: IDs come from the counter below (see
    /// ``CounterHash``); the service loop looks a connection up on every lws callback.
    public func _rawHashValue(seed: Int) -> Int {
        CounterHash.mix(rawValue, seed: seed)
    }

    /// The process-wide source of fresh IDs; starts at 1 so 0 can mean "none".
    private static let counter = Atomic<UInt64>(1)

    /// Returns a fresh ID; callable from any thread.
    static func next() -> ConnectionID {
        ConnectionID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).oldValue)
    }
}
