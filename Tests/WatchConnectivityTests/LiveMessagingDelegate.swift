import Foundation
import Primitives
import RelayServer
import TestSupport
import WatchConnectivity

/// A delegate for live messaging: records every message and message data it receives, in
/// order, and answers as each message asks (`"hold"`: keep the reply handler for later;
/// `"twice"`: reply twice; `"block"`: wait in the delegate call until ``unblock()``).
///
/// `@unchecked Sendable` only because `NSObject` is not `Sendable`: every stored property is a
/// `let` of a `Sendable` type.
final class LiveMessagingDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    /// What arrived, in order: `m<n>` (a message), `m<n>?` (one with a reply handler), `d<n>`,
    /// `d<n>?` (message data).
    let received = LockedState<[String]>([])
    /// `isReachable` as each `sessionReachabilityDidChange` read it.
    let reachability = LockedState<[Bool]>([])
    let activated = LockedState(false)
    /// Reply handlers kept for later, by message number.
    let held = LockedState<[(n: Int, reply: Reply)]>([])
    private let blocked = DispatchSemaphore(value: 0)

    /// A kept reply handler (Apple's type is not `Sendable`; whoever takes it out of ``held``
    /// calls it).
    struct Reply: @unchecked Sendable {
        let call: ([String: Any]) -> Void
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        activated.withLock { $0 = true }
    }

    func sessionReachabilityDidChange(_ session: WCSession) {
        let reachable = session.isReachable
        reachability.withLock { $0.append(reachable) }
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        received.withLock { $0.append("m\(message["n"] ?? "?")") }
        if message["block"] as? Bool == true { blocked.wait() }
    }

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        let n = message["n"] as? Int ?? -1
        received.withLock { $0.append("m\(n)?") }
        if message["hold"] as? Bool == true {
            held.withLock { $0.append((n, Reply(call: replyHandler))) }
        } else if message["twice"] as? Bool == true {
            replyHandler(["echo": n, "call": 1])
            replyHandler(["echo": n, "call": 2])
        } else {
            replyHandler(["echo": n])
        }
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        received.withLock { $0.append("d" + String(decoding: messageData, as: UTF8.self)) }
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        received.withLock { $0.append("d" + String(decoding: messageData, as: UTF8.self) + "?") }
        replyHandler(Data(messageData.reversed()))
    }

    /// Lets a delegate call waiting on a `"block"` message return.
    func unblock() { blocked.signal() }

    /// Takes the kept reply handlers out, in the order their messages came.
    func takeHeld() -> [(n: Int, reply: Reply)] {
        held.withLock { h in
            defer { h = [] }
            return h
        }
    }

    /// Answers every kept message now, each with `["echo": n]`.
    func releaseHeld() {
        for (n, reply) in takeHeld() { reply.call(["echo": n]) }
    }
}

/// What the handlers of sent messages saw, per message number: `reply <echo>` or `error <code>`.
struct HandlerLog: Sendable {
    let calls = LockedState<[Int: [String]]>([:])

    func reply(_ n: Int) -> ([String: Any]) -> Void {
        { answer in calls.withLock { $0[n, default: []].append("reply \(answer["echo"] ?? "none")") } }
    }

    func data(_ n: Int) -> (Data) -> Void {
        { answer in calls.withLock { $0[n, default: []].append("reply " + String(decoding: answer, as: UTF8.self)) } }
    }

    func error(_ n: Int) -> (any Error) -> Void {
        { error in calls.withLock { $0[n, default: []].append("error \((error as? WCError)?.code.rawValue ?? 0)") } }
    }

    /// How many handler calls came, in all.
    var count: Int { calls.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    subscript(n: Int) -> [String] { calls.withLock { $0[n] ?? [] } }

    var all: [Int: [String]] { calls.withLock { $0 } }
}

extension WCHarness {
    /// A harness whose sessions use `phone` and `watch` as their delegates, activated and
    /// reachable both ways (the callers keep the delegates: a session holds its delegate weakly).
    static func live(
        phone: LiveMessagingDelegate, watch: LiveMessagingDelegate,
        configure: (inout RelayServerConfiguration) -> Void = { _ in }
    ) async throws -> WCHarness {
        let h = try await WCHarness.start(activate: false, configure: configure)
        h.phone.delegate = phone
        h.watch.delegate = watch
        h.phone.activate()
        h.watch.activate()
        try await eventually(10, "activation") { phone.activated.withLock { $0 } && watch.activated.withLock { $0 } }
        try await eventually(10, "reachable both ways") { h.phone.isReachable && h.watch.isReachable }
        return h
    }
}
