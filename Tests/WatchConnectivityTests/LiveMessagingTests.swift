import Foundation
import Primitives
import RelayServer
import TestSupport
import Testing
import WatchConnectivity

/// Live messaging as apps use it, through a real relay: bursts from both sides, reply handlers
/// kept and called later (or twice, or never), the receiver leaving, the relay restarting.
/// Apple's contract (WCSession.h, `sendMessage(_:replyHandler:errorHandler:)`): messages are
/// delivered in the order sent; "If both a replyHandler and an errorHandler are specified,
/// then exactly one of them will be invoked"; a counterpart that is (or becomes) unreachable
/// gets the errorHandler called.
@Suite(.timeLimit(.minutes(3)))
struct LiveMessagingTests {
    /// One of four ways to send message `n` (the four `n % 4` cycle through them).
    static func send(_ n: Int, on session: WCSession, _ log: HandlerLog) {
        let data = Data("\(n)".utf8)
        switch n % 4 {
        case 0: session.sendMessage(["n": n], replyHandler: log.reply(n), errorHandler: log.error(n))
        case 1: session.sendMessage(["n": n], replyHandler: nil, errorHandler: log.error(n))
        case 2: session.sendMessageData(data, replyHandler: log.data(n), errorHandler: log.error(n))
        default: session.sendMessageData(data, replyHandler: nil, errorHandler: log.error(n))
        }
    }

    /// Messages `numbers`, each asking for a reply the receiver keeps (`"hold"`) until told.
    static func sendHeld(_ numbers: Range<Int>, on session: WCSession, _ log: HandlerLog) {
        for n in numbers {
            session.sendMessage(["n": n, "hold": true], replyHandler: log.reply(n), errorHandler: log.error(n))
        }
    }

    /// What the receiver records for message `n`, and what its sender's handlers get.
    static func expected(_ n: Int) -> (received: String, handlers: [String]) {
        switch n % 4 {
        case 0: return ("m\(n)?", ["reply \(n)"])
        case 1: return ("m\(n)", [])
        case 2: return ("d\(n)?", ["reply " + String("\(n)".reversed())])
        default: return ("d\(n)", [])
        }
    }

    @Test func aBurstFromBothSidesReachesEveryHandlerOnceAndArrivesInOrder() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let count = 400
        let fromPhone = HandlerLog()
        let fromWatch = HandlerLog()
        let phone = h.phone
        let watch = h.watch
        // Both apps send at once, each from a thread of its own.
        let phoneSender = Thread { for n in 0..<count { Self.send(n, on: phone, fromPhone) } }
        let watchSender = Thread { for n in 0..<count { Self.send(n, on: watch, fromWatch) } }
        phoneSender.start()
        watchSender.start()
        try await eventually(30, "every message received") {
            watchDelegate.received.withLock { $0.count } == count && phoneDelegate.received.withLock { $0.count } == count
        }
        try await eventually(30, "every reply") { fromPhone.count == count / 2 && fromWatch.count == count / 2 }
        // The order sent, per direction, message data and messages together.
        let order = (0..<count).map { Self.expected($0).received }
        #expect(watchDelegate.received.withLock { $0 } == order)
        #expect(phoneDelegate.received.withLock { $0 } == order)
        // One more round trip each way, so a second call of any handler would have come by now.
        try await roundTrip(h, phoneDelegate, watchDelegate)
        for n in 0..<count {
            #expect(fromPhone[n] == Self.expected(n).handlers, "phone's message \(n)")
            #expect(fromWatch[n] == Self.expected(n).handlers, "watch's message \(n)")
        }
        #expect(phoneDelegate.reachability.withLock { $0 }.allSatisfy { $0 })
        await h.stop()
    }

    /// A reply handler kept by the receiver and called later, from a thread or a task of the
    /// app's, in another order than the messages came: each reaches its own message's handler.
    @Test func aReplyHandlerKeptAndCalledLaterFromAnotherThreadReachesItsSender() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        Self.sendHeld(0..<10, on: h.phone, log)
        try await eventually { watchDelegate.held.withLock { $0.count } == 10 }
        #expect(log.count == 0)
        let held = watchDelegate.takeHeld()
        let fromThread = Array(held.prefix(5).reversed())
        let fromTask = Array(held.suffix(5))
        Thread { for (n, reply) in fromThread { reply.call(["echo": n]) } }.start()
        Task.detached { for (n, reply) in fromTask { reply.call(["echo": n]) } }
        try await eventually { log.count == 10 }
        try await roundTrip(h, phoneDelegate, watchDelegate)
        for n in 0..<10 { #expect(log[n] == ["reply \(n)"]) }
        await h.stop()
    }

    /// A reply handler called twice: the sender gets the first reply, once. The second call
    /// is ignored and costs the receiver nothing: its connection stays up (the relay answered
    /// each second reply with an `unknown_id` error and closed the receiver's connection after
    /// 100 of them, failing every reply it still owed with `notReachable`).
    @Test func aReplyHandlerCalledTwiceDeliversTheFirstReplyOnly() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        // A request the watch answers last: it must still get its reply.
        h.phone.sendMessage(["n": -1, "hold": true], replyHandler: log.reply(-1), errorHandler: log.error(-1))
        try await eventually { watchDelegate.held.withLock { $0.count } == 1 }
        let count = 150
        for n in 0..<count {
            h.phone.sendMessage(["n": n, "twice": true], replyHandler: log.reply(n), errorHandler: log.error(n))
        }
        try await eventually(30, "the first replies") { log.count == count }
        try await roundTrip(h, phoneDelegate, watchDelegate)
        for n in 0..<count { #expect(log[n] == ["reply \(n)"]) }
        watchDelegate.releaseHeld()
        try await eventually { log[-1] != [] }
        #expect(log[-1] == ["reply -1"])
        #expect(phoneDelegate.reachability.withLock { $0 }.allSatisfy { $0 }, "the watch stayed reachable")
        await h.stop()
    }

    /// A reply handler never called: the sender's errorHandler gets `messageReplyTimedOut`
    /// once the relay's reply timeout passed, once. Replies that come after that are dropped,
    /// and many of them cost the receiver nothing either (no closed connection).
    @Test func aReplyNeverSentTimesOutOnceAndLateRepliesAreDropped() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let timeout = Duration.milliseconds(Int(400 * timeoutScale))
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate) {
            $0.relay.limits.replyTimeoutMs = Int(timeout / .milliseconds(1))
        }
        let log = HandlerLog()
        let count = 150
        Self.sendHeld(0..<count, on: h.phone, log)
        try await eventually(30, "every message at the watch") { watchDelegate.held.withLock { $0.count } == count }
        let allArrived = ContinuousClock.now
        try await eventually(30, "every timeout") { log.count == count }
        for n in 0..<count { #expect(log[n] == ["error 7012"]) }
        // The watch answers too late, also by its own count from each message's arrival (a
        // reply within the moment between the relay's deadline and that one still goes out:
        // the relay refuses it, an error against the watch's connection).
        try await Task.sleep(until: allArrived + timeout)
        watchDelegate.releaseHeld()
        try await roundTrip(h, phoneDelegate, watchDelegate)
        for n in 0..<count { #expect(log[n] == ["error 7012"]) }
        #expect(phoneDelegate.reachability.withLock { $0 }.allSatisfy { $0 }, "the watch stayed reachable")
        #expect(watchDelegate.reachability.withLock { $0 }.allSatisfy { $0 }, "the phone stayed reachable")
        await h.stop()
    }

    /// The receiver's session closes while it owes replies: each of its sender's messages gets
    /// `notReachable`, once; replies the receiver's app calls after that go nowhere.
    @Test func aReceiverThatLeavesWithRepliesOwedFailsEachOnceWithNotReachable() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        Self.sendHeld(0..<5, on: h.phone, log)
        try await eventually { watchDelegate.held.withLock { $0.count } == 5 }
        await h.watch.close()
        try await eventually { log.count == 5 }
        watchDelegate.releaseHeld()
        try await eventually { !h.phone.isReachable }
        let after = HandlerLog()
        h.phone.sendMessage(["n": 9], replyHandler: after.reply(9), errorHandler: after.error(9))
        try await eventually { after.count == 1 }
        #expect(after[9] == ["error 7007"])
        for n in 0..<5 { #expect(log[n] == ["error 7007"]) }
        await h.stop()
    }

    /// The phone's app is busy in a delegate call (so `isReachable` still reads true) when the
    /// watch app goes to the background, and sends a burst: each message fails with
    /// `notReachable`, and that costs the phone nothing. (Each went to the relay, which refused
    /// it; past 100 refusals it closed the phone's connection, and the reply the phone still
    /// owed the watch failed with `notReachable` although the phone app never went away.)
    @Test func aBurstToACounterpartThatJustLeftFailsEachMessageAndCostsTheSenderNothing() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let owed = HandlerLog()
        h.watch.sendMessage(["n": 0, "hold": true], replyHandler: owed.reply(0), errorHandler: owed.error(0))
        try await eventually { phoneDelegate.held.withLock { $0.count } == 1 }
        h.watch.sendMessage(["n": 1, "block": true], replyHandler: nil)
        try await eventually { phoneDelegate.received.withLock { $0.last } == "m1" }
        h.watch.setApplicationForeground(false)
        // Lets the relay hear of it and tell the phone's connection (the phone's delegate queue,
        // where `isReachable` would change, is blocked).
        try await Task.sleep(for: .milliseconds(Int(300 * timeoutScale)))
        #expect(h.phone.isReachable)
        let log = HandlerLog()
        let count = 150
        for n in 0..<count { h.phone.sendMessage(["n": n], replyHandler: nil, errorHandler: log.error(n)) }
        // The handlers run on the delegate queue, after the call in progress.
        phoneDelegate.unblock()
        try await eventually(20, "every message's error") { log.count == count }
        for n in 0..<count { #expect(log[n] == ["error 7007"]) }
        try await eventually { !h.phone.isReachable }
        phoneDelegate.releaseHeld()
        try await eventually { owed.count == 1 }
        #expect(owed[0] == ["reply 0"])
        #expect(watchDelegate.received.withLock { $0 }.isEmpty)
        await h.stop()
    }

    /// The receiver's app goes to the background while it owes replies: every message still
    /// gets exactly one answer, and those it never answers an error. (Which error Apple does
    /// not document for a message already delivered; here the relay's reply timeout, 7012, as
    /// the background app may still answer: its process keeps running.)
    @Test func aReceiverGoingToTheBackgroundWithRepliesOwedAnswersEachOnce() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate) {
            $0.relay.limits.replyTimeoutMs = Int(400 * timeoutScale)
        }
        let log = HandlerLog()
        Self.sendHeld(0..<4, on: h.phone, log)
        try await eventually { watchDelegate.held.withLock { $0.count } == 4 }
        h.watch.setApplicationForeground(false)
        try await eventually { !h.phone.isReachable }
        let held = watchDelegate.takeHeld()
        held[0].reply.call(["echo": 0])
        try await eventually(20, "an answer for every message") { log.count == 4 }
        #expect(log[0].count == 1)
        for n in 1..<4 { #expect(log[n].count == 1 && log[n].first?.hasPrefix("error 70") == true, "\(n): \(log[n])") }
        for (n, reply) in held.dropFirst() { reply.call(["echo": n]) }
        h.watch.setApplicationForeground(true)
        try await eventually { h.phone.isReachable }
        try await roundTrip(h, phoneDelegate, watchDelegate)
        #expect(log.count == 4)
        await h.stop()
    }

    /// A message sent while the counterpart is not reachable fails with `notReachable` and
    /// never arrives; once the counterpart is back, the next one does.
    @Test func aMessageSentWhileNotReachableFailsAndTheNextOneAfterItCameBackArrives() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        h.watch.setApplicationForeground(false)
        try await eventually { !h.phone.isReachable }
        let log = HandlerLog()
        Self.send(0, on: h.phone, log)
        Self.send(1, on: h.phone, log)
        Self.send(2, on: h.phone, log)
        try await eventually { log.count == 3 }
        for n in 0..<3 { #expect(log[n] == ["error 7007"]) }
        h.watch.setApplicationForeground(true)
        try await eventually { h.phone.isReachable }
        Self.send(4, on: h.phone, log)
        Self.send(6, on: h.phone, log)
        try await eventually { log.count == 5 }
        #expect(log[4] == ["reply 4"] && log[6] == ["reply 6"])
        #expect(watchDelegate.received.withLock { $0 } == ["m4?", "d6?"])
        await h.stop()
    }

    /// Every combination of the two handlers, to a reachable and to an unreachable
    /// counterpart: the receiver's variant follows the reply handler; an errorHandler is
    /// called only for a failure; nil handlers are simply not called.
    @Test func everyCombinationOfNilHandlers() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        h.phone.sendMessage(["n": 0], replyHandler: nil, errorHandler: nil)
        h.phone.sendMessage(["n": 1], replyHandler: log.reply(1), errorHandler: nil)
        h.phone.sendMessage(["n": 2], replyHandler: nil, errorHandler: log.error(2))
        h.phone.sendMessage(["n": 3], replyHandler: log.reply(3))
        h.phone.sendMessageData(Data("4".utf8), replyHandler: nil, errorHandler: nil)
        h.phone.sendMessageData(Data("5".utf8), replyHandler: log.data(5))
        try await eventually { watchDelegate.received.withLock { $0.count } == 6 && log.count == 3 }
        #expect(watchDelegate.received.withLock { $0 } == ["m0", "m1?", "m2", "m3?", "d4", "d5?"])
        try await roundTrip(h, phoneDelegate, watchDelegate)
        #expect(log.all == [1: ["reply 1"], 3: ["reply 3"], 5: ["reply 5"]])

        h.watch.setApplicationForeground(false)
        try await eventually { !h.phone.isReachable }
        let failures = HandlerLog()
        h.phone.sendMessage(["n": 10], replyHandler: nil, errorHandler: nil)
        h.phone.sendMessage(["n": 11], replyHandler: failures.reply(11), errorHandler: nil)
        h.phone.sendMessage(["n": 12], replyHandler: nil, errorHandler: failures.error(12))
        h.phone.sendMessageData(Data("13".utf8), replyHandler: failures.data(13), errorHandler: failures.error(13))
        try await eventually { failures.count == 2 }
        #expect(failures.all == [12: ["error 7007"], 13: ["error 7007"]])
        await h.stop()
    }

    /// The sender's own session closes with messages still queued and replies pending: each
    /// message's errorHandler is called once all the same (none is left without an answer).
    @Test func closingTheSenderAnswersEveryMessageItStillHeld() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        let count = 300
        Self.sendHeld(0..<count, on: h.phone, log)
        await h.phone.close()
        try await eventually(20, "an answer for every message") { log.count >= count }
        for n in 0..<count { #expect(log[n].count == 1 && log[n].first?.hasPrefix("error") == true, "message \(n): \(log[n])") }
        await h.stop()
    }

    /// Messages the app sends from another thread while its session closes: each one's
    /// errorHandler is called once (none is dropped unanswered).
    @Test func messagesSentWhileTheSessionClosesAreEachAnswered() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        let sent = LockedState(0)
        let stop = LockedState(false)
        let phone = h.phone
        let sender = Thread {
            var n = 0
            while !stop.withLock({ $0 }) || n < 50 {
                Self.sendHeld(n..<n + 1, on: phone, log)
                n += 1
                sent.withLock { $0 = n }
                if n % 16 == 0 { Thread.sleep(forTimeInterval: 0.001) }
            }
        }
        sender.start()
        try await eventually { sent.withLock { $0 } >= 50 }
        await h.phone.close()
        stop.withLock { $0 = true }
        let total = sent.withLock { $0 }
        try await eventually(20, "an answer for every message") { log.count >= sent.withLock { $0 } }
        let count = sent.withLock { $0 }
        #expect(count >= total)
        for n in 0..<count { #expect(log[n].count == 1, "message \(n): \(log[n])") }
        await h.stop()
    }

    /// The relay restarts while messages wait for replies: each gets `notReachable`, once;
    /// the replies the receiver's app sends after the restart go nowhere, and once both are
    /// back messages flow again.
    @Test func aRelayRestartFailsThePendingRepliesOnceAndMessagingResumes() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        Self.sendHeld(0..<5, on: h.phone, log)
        try await eventually { watchDelegate.held.withLock { $0.count } == 5 }
        await h.relay.shutdown()
        try await eventually { log.count == 5 }
        for n in 0..<5 { #expect(log[n] == ["error 7007"]) }
        // (The errors can come before the sessions' delegate queues heard the link is down.)
        try await eventually { !h.phone.isReachable && !h.watch.isReachable }
        let relay = try await h.relayAgain()
        try await eventually(20, "reachable again") { h.phone.isReachable && h.watch.isReachable }
        watchDelegate.releaseHeld()
        let after = HandlerLog()
        Self.send(8, on: h.phone, after)
        Self.send(10, on: h.watch, after)
        try await eventually { after.count == 2 }
        #expect(after.all == [8: ["reply 8"], 10: ["reply 01"]])
        try await roundTrip(h, phoneDelegate, watchDelegate)
        for n in 0..<5 { #expect(log[n] == ["error 7007"]) }
        await h.stop(relay: relay)
    }

    /// A message the app sends after the connection to the counterpart dropped (its delegate
    /// queue busy, so `isReachable` still reads true) fails with `notReachable`; it is not
    /// delivered late once the link is back. Apple: "If you call this method and the
    /// counterpart is unreachable (or becomes unreachable before the message is delivered),
    /// the errorHandler block is executed".
    @Test func aMessageSentWhileTheLinkIsDownFailsAndIsNotDeliveredWhenItIsBack() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        h.watch.sendMessage(["n": 1, "block": true], replyHandler: nil)
        try await eventually { phoneDelegate.received.withLock { $0.last } == "m1" }
        await h.relay.shutdown()
        // Lets the phone's connection notice (the delegate queue, where `isReachable` would
        // change, is blocked). Had it not yet, the messages go out on the dying connection and
        // fail the same way.
        try await Task.sleep(for: .milliseconds(Int(1000 * timeoutScale)))
        #expect(h.phone.isReachable)
        let log = HandlerLog()
        Self.send(4, on: h.phone, log)
        Self.send(5, on: h.phone, log)
        let relay = try await h.relayAgain()
        try await eventually(20, "the watch reconnected") { h.watch.isReachable }
        phoneDelegate.unblock()
        try await eventually(20, "message 4's answer") { log[4] != [] }
        try await eventually(20, "reachable again") { h.phone.isReachable }
        try await roundTrip(h, phoneDelegate, watchDelegate)
        #expect(log.all == [4: ["error 7007"], 5: ["error 7007"]])
        #expect(!watchDelegate.received.withLock { $0 }.contains { $0.hasPrefix("m4") || $0.hasPrefix("m5") })
        await h.stop(relay: relay)
    }

    /// A message waiting for its reply holds back none sent after it: they are delivered at
    /// once and answered whenever their replies come (the send loop waited for each reply).
    @Test func aMessageWaitingForItsReplyDoesNotHoldBackTheNext() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        Self.sendHeld(1..<2, on: h.phone, log)
        h.phone.sendMessage(["n": 2], replyHandler: log.reply(2), errorHandler: log.error(2))
        h.phone.sendMessage(["n": 3], replyHandler: nil)
        try await eventually { watchDelegate.received.withLock { $0 } == ["m1?", "m2?", "m3"] }
        try await eventually { log[2] == ["reply 2"] }
        #expect(log[1].isEmpty)
        watchDelegate.releaseHeld()
        try await eventually { log[1] == ["reply 1"] }
        await h.stop()
    }

    /// Past the relay's quota of messages waiting for a reply (PROTOCOL.md §9.1) the next
    /// message's error handler gets `insufficientSpace`; the ones before it still get their replies.
    @Test func aMessagePastThePendingReplyQuotaFailsWithInsufficientSpace() async throws {
        let phoneDelegate = LiveMessagingDelegate()
        let watchDelegate = LiveMessagingDelegate()
        let h = try await WCHarness.live(phone: phoneDelegate, watch: watchDelegate) { $0.relay.maxPendingRepliesPerPair = 2 }
        let log = HandlerLog()
        Self.sendHeld(0..<3, on: h.phone, log)
        try await eventually { log[2] == ["error 7015"] }
        try await eventually { watchDelegate.held.withLock { $0.count } == 2 }
        #expect(log[0].isEmpty && log[1].isEmpty)
        watchDelegate.releaseHeld()
        try await eventually { log[0] == ["reply 0"] && log[1] == ["reply 1"] }
        #expect(log.count == 3)
        await h.stop()
    }

    /// One message each way after everything before it: the phone's answered by the watch (its
    /// reply goes after every reply the watch's app made before), then the watch's, which the
    /// phone's delegate hears after whatever the relay told the phone before.
    func roundTrip(_ h: WCHarness, _ phoneDelegate: LiveMessagingDelegate, _ watchDelegate: LiveMessagingDelegate) async throws {
        let log = HandlerLog()
        h.phone.sendMessage(["n": 1_000_000], replyHandler: log.reply(0), errorHandler: log.error(0))
        try await eventually(20, "the round trip's reply") { log.count == 1 }
        #expect(log[0] == ["reply 1000000"])
        h.watch.sendMessage(["n": 1_000_001], replyHandler: nil, errorHandler: log.error(1))
        try await eventually(20, "the round trip's message") { phoneDelegate.received.withLock { $0.last } == "m1000001" }
    }
}
