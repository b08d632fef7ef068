import Foundation
import Testing
import WatchRelayTesting

// Written as an app's own test would be: it imports only `WatchRelayTesting` (which re-exports
// WatchConnectivity) and drives a connector of the kind iOS apps write.

/// Slow machines (ThreadSanitizer, a loaded CI) get longer waits, as the package's own tests do.
private let scale = Double(ProcessInfo.processInfo.environment["WATCHRELAY_TIMEOUT_SCALE"] ?? "") ?? 1
private let wait = 20 * scale

/// An app's WatchConnectivity connector: one per side, the session handed in (the usual seam).
/// Its delegate methods run on the session's queue; what they saw is read under a lock.
final class Connector: NSObject, WCSessionDelegate, @unchecked Sendable {
    let session: WCSession
    private let lock = NSLock()
    private var messages: [[String: Any]] = []
    private var userInfos: [[String: Any]] = []
    private var contexts: [[String: Any]] = []
    private var replies: [[String: Any]] = []
    private var errors: [Int] = []

    init(_ session: WCSession) {
        self.session = session
        super.init()
        session.delegate = self
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var receivedMessages: Int { locked { messages.count } }
    var receivedUserInfo: [Int] { locked { userInfos.compactMap { $0["n"] as? Int } } }
    var receivedContexts: [Int] { locked { contexts.compactMap { $0["v"] as? Int } } }
    var receivedReplies: [String] { locked { replies.compactMap { $0["answer"] as? String } } }
    var sendErrors: [Int] { locked { errors } }

    func ask(_ question: String) {
        session.sendMessage(["question": question]) { reply in
            self.locked { self.replies.append(reply) }
        } errorHandler: { error in
            self.locked { self.errors.append((error as NSError).code) }
        }
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {}

    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        locked { messages.append(message) }
        replyHandler(["answer": "re: \(message["question"] as? String ?? "?")"])
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        locked { userInfos.append(userInfo) }
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        locked { contexts.append(applicationContext) }
    }
}

@Suite struct WatchRelayTestLinkTests {
    @Test func aMessageCrossesTheLinkAndItsReplyComesBack() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = Connector(link.makeSession(.phone))
        let watch = Connector(link.makeSession(.watch))
        try await link.activate(phone.session)
        try await link.activate(watch.session)
        #expect(phone.session.isPaired && phone.session.isWatchAppInstalled)
        try await link.waitUntil("the watch reachable for the phone", within: wait) { phone.session.isReachable }

        phone.ask("favorites?")
        try await link.waitUntil("the reply", within: wait) { !phone.receivedReplies.isEmpty }
        #expect(phone.receivedReplies == ["re: favorites?"])
        #expect(watch.receivedMessages == 1)
        #expect(phone.sendErrors.isEmpty)

        await phone.session.close()
        await watch.session.close()
        await link.stop()
    }

    @Test func userInfoSentBeforeTheWatchAppRunsArrivesAtItsLaunch() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = Connector(link.makeSession(.phone))
        try await link.activate(phone.session)
        phone.session.transferUserInfo(["n": 1])
        phone.session.transferUserInfo(["n": 2])

        let watch = Connector(link.makeSession(.watch))
        try await link.activate(watch.session)
        try await link.waitUntil("both transfers at the watch", within: wait) { watch.receivedUserInfo.count == 2 }
        #expect(watch.receivedUserInfo == [1, 2])
        try await link.waitUntil("the phone's transfers finished", within: wait) {
            phone.session.outstandingUserInfoTransfers.isEmpty
        }

        await phone.session.close()
        await watch.session.close()
        await link.stop()
    }

    @Test func theContextOutlivesARelayRestartAndAWatchRelaunch() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = Connector(link.makeSession(.phone))
        var watch = Connector(link.makeSession(.watch))
        try await link.activate(phone.session)
        try await link.activate(watch.session)
        try phone.session.updateApplicationContext(["v": 1])
        try await link.waitUntil("the first context", within: wait) { watch.receivedContexts == [1] }

        // The relay goes away: the phone sees the watch unreachable; its next context waits.
        await link.stopRelay()
        #expect(!link.isRelayRunning)
        try await link.waitUntil("the watch unreachable", within: wait) { !phone.session.isReachable }
        try phone.session.updateApplicationContext(["v": 2])
        await watch.session.close()  // the watch app quits meanwhile

        try await link.startRelay()
        watch = Connector(link.makeSession(.watch))  // and is launched again
        try await link.activate(watch.session)
        try await link.waitUntil("the context sent while the relay was down", within: wait) {
            watch.receivedContexts == [2]
        }
        #expect(watch.session.receivedApplicationContext["v"] as? Int == 2)

        await phone.session.close()
        await watch.session.close()
        await link.stop()
    }

    @Test func anAppProcessFindsTheLinkInItsEnvironment() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let watch = link.environment(.watch, foreground: false)
        #expect(watch["WATCHRELAY_URL"] == link.url)
        #expect(watch["WATCHRELAY_ROLE"] == "watch")
        #expect(watch["WATCHRELAY_STATE"] == link.watchState)
        #expect(watch["WATCHRELAY_FOREGROUND"] == "0")
        #expect(link.environment(.phone, complicationEnabled: false)["WATCHRELAY_COMPLICATION"] == "0")
        #expect(link.environment(.phone)["WATCHRELAY_STATE"] == link.phoneState)
        // What the app process's WCSession.default would read: a paired, supported session.
        let session = link.makeSession(.phone, complicationEnabled: false)
        let connector = Connector(session)
        try await link.activate(session)
        #expect(session.isPaired && !session.isComplicationEnabled)
        #expect(FileManager.default.fileExists(atPath: link.directory))

        await connector.session.close()
        await link.stop()
        #expect(!FileManager.default.fileExists(atPath: link.directory))
        #expect(!link.isRelayRunning)
    }

    /// `activate` returns after the delegate's `activationDidCompleteWith`, not only once
    /// `activationState` says `.activated` (set before that call): what a connector does there
    /// (here, slowly) is done when the test goes on.
    @Test func activateReturnsAfterTheDelegateHeardTheActivation() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let slow = SlowActivationDelegate()
        let session = link.makeSession(.phone)
        session.delegate = slow
        try await link.activate(session)
        #expect(slow.heard == [.activated])
        await session.close()
        await link.stop()
    }

    /// `stop()` closes the sessions the link made: one a test left open (it forgot, or a
    /// `try` threw before its `close()`) does not go on reaching for a relay that is gone, in
    /// a directory that is gone.
    @Test func stopClosesTheSessionsTheLinkMade() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phone = Connector(link.makeSession(.phone))
        let watch = Connector(link.makeSession(.watch))
        try await link.activate(phone.session)
        try await link.activate(watch.session)
        await link.stop()
        #expect(phone.session.activationState == .notActivated)
        #expect(watch.session.activationState == .notActivated)
        #expect(!FileManager.default.fileExists(atPath: link.directory))
    }

    @Test func aWaitThatRunsOutSaysWhatItAwaited() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        await #expect(throws: WatchRelayTestLinkError.self) {
            try await link.waitUntil("nothing", within: 0.05) { false }
        }
        do {
            try await link.waitUntil("a reply that never comes", within: 0.05) { false }
        } catch {
            #expect("\(error)" == "timed out: a reply that never comes: not within 0.05 s")
        }
        await link.stop()
    }
}

/// A connector that takes its time over `activationDidCompleteWith` (it sets things up there).
final class SlowActivationDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var states: [WCSessionActivationState] = []
    var heard: [WCSessionActivationState] {
        lock.lock()
        defer { lock.unlock() }
        return states
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        Thread.sleep(forTimeInterval: 0.3)  // on the session's queue, as an app's slow set-up is
        lock.lock()
        states.append(activationState)
        lock.unlock()
    }

    func sessionDidBecomeInactive(_ session: WCSession) {}
    func sessionDidDeactivate(_ session: WCSession) {}
}

@Suite struct WatchRelayTestLinkBudgetTests {
    /// A link with a budget of two: the third complication transfer goes as plain userInfo, in
    /// order, and the budget stays spent across a relay restart.
    @Test func aSmallComplicationBudgetIsSpentThenTransfersGoAsUserInfo() async throws {
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait, complicationsPerDay: 2)
        let phone = Connector(link.makeSession(.phone))
        let watch = Connector(link.makeSession(.watch))
        try await link.activate(phone.session)
        try await link.activate(watch.session)
        #expect(phone.session.isComplicationEnabled)
        try await link.waitUntil("the relay's budget at the phone", within: wait) {
            phone.session.remainingComplicationUserInfoTransfers == 2
        }
        for n in 1...3 { phone.session.transferCurrentComplicationUserInfo(["n": n]) }
        try await link.waitUntil("the three transfers at the watch", within: wait) { watch.receivedUserInfo.count == 3 }
        #expect(watch.receivedUserInfo == [1, 2, 3])
        #expect(phone.session.remainingComplicationUserInfoTransfers == 0)

        try await link.restartRelay()
        try await link.waitUntil("the phone back on the relay", within: wait) { phone.session.isReachable }
        #expect(phone.session.remainingComplicationUserInfoTransfers == 0)
        await phone.session.close()
        await watch.session.close()
        await link.stop()
    }
}
