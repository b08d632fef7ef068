import Foundation
import WatchConnectivity

/// A connector as older iOS apps write it: a plain `NSObject` delegate (not `Sendable`) whose
/// handlers capture `self`, one of them kept in a property. It talks to the session only
/// through ``WatchSessionProviding``.
nonisolated final class LegacyConnector: NSObject, WCSessionDelegate {
    private let session: any WatchSessionProviding
    private let lock = NSLock()
    private var outcomes: [String] = []
    private let finished = DispatchSemaphore(value: 0)
    private lazy var errorHandler: (any Error) -> Void = { [unowned self] error in
        self.record("message: \(Self.describe(error))")
    }

    init(session: any WatchSessionProviding) {
        self.session = session
    }

    func session(
        _ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?
    ) {
        record("activated: \(activationState.rawValue)")
    }

    /// Sends a message and message data to a watch that is not running; waits for both answers.
    func pingAbsentWatch() -> [String] {
        print("reachable: \(session.isReachable)")
        session.sendMessage(["ping": 1], replyHandler: { reply in self.record("reply: \(reply)") }, errorHandler: errorHandler)
        session.sendMessageData(
            Data([1]), replyHandler: nil, errorHandler: { error in self.record("data: \(Self.describe(error))") })
        for _ in 0..<2 { _ = finished.wait(timeout: .now() + 10) }
        return lock.withLock { outcomes }
    }

    private func record(_ outcome: String) {
        lock.withLock { outcomes.append(outcome) }
        if !outcome.hasPrefix("activated") { finished.signal() }
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? WCError else { return "\(error)" }
        return "WCError \(error.code.rawValue), on main thread: \(Thread.isMainThread)"
    }
}
