import Foundation
import RelayProtocol

/// Wall-clock time for the relay, injectable for tests.
public struct RelayClock: Sendable {
    /// The current instant.
    public var now: @Sendable () -> Timestamp

    public init(now: @escaping @Sendable () -> Timestamp) {
        self.now = now
    }

    /// The system clock.
    public static let system = RelayClock { timestamp(Int64(Date().timeIntervalSince1970 * 1000)) }

    static func timestamp(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSinceEpoch: ms) }
}
