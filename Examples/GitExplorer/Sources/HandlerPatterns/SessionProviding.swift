import Foundation
import WatchConnectivity

/// The seam iOS apps put over `WCSession` to test against a fake: Apple's signatures, copied
/// as they are (`nonisolated` because this target's default isolation is the main actor).
/// `WCSession` conforms with no code of its own.
nonisolated protocol WatchSessionProviding: AnyObject {
    var isReachable: Bool { get }
    func sendMessage(
        _ message: [String: Any], replyHandler: (([String: Any]) -> Void)?, errorHandler: ((any Error) -> Void)?)
    func sendMessageData(_ data: Data, replyHandler: ((Data) -> Void)?, errorHandler: ((any Error) -> Void)?)
}

extension WCSession: WatchSessionProviding {}
