import Foundation
import Primitives
import RelayServer
import TestSupport
import Testing
import WatchConnectivity

/// A second suite, written from Apple's documented WatchConnectivity behaviour alone
/// (/work/shared/notes/watchconnectivity-widgetkit.md, part A), against a real relay.
@Suite(.timeLimit(.minutes(3)))
struct AppleDocumentedBehaviourTests {
    // MARK: - Activation

    /// `isSupported()` false (an iPad): activation ends `.notActivated` with an error
    /// (`sessionNotSupported`, 7002), and the session stays `.notActivated`.
    @Test func anUnsupportedSessionCompletesActivationNotActivatedWithSessionNotSupported() async throws {
        let delegate = ProbeDelegate()
        let session = WCSession(environment: nil)
        session.delegate = delegate
        #expect(session.activationState == .notActivated)
        session.activate()
        try await eventually(10, "activationDidComplete") { delegate.activated }
        let activations = delegate.activations.withLock { $0 }
        #expect(activations.count == 1)
        #expect(activations.first?.state == .notActivated && activations.first?.error == 7002)
        #expect(session.activationState == .notActivated && !session.isReachable)
        await session.close()
    }

    /// Before `activate()` the session is `.notActivated` and not reachable; inside
    /// `activationDidCompleteWith` the properties already hold their values ("the session's
    /// properties contain correct values" once activated), and the state passed is the state read.
    @Test func insideActivationDidCompleteThePropertiesAreAlreadyCorrect() async throws {
        let phoneDelegate = ProbeDelegate()
        let h = try await WCHarness.start(activate: false)
        h.phone.delegate = phoneDelegate
        #expect(h.phone.activationState == .notActivated && !h.phone.isReachable)
        h.phone.activate()
        try await eventually(10, "activationDidComplete") { phoneDelegate.activated }
        let activation = try #require(phoneDelegate.activations.withLock { $0.first })
        #expect(activation.state == .activated && activation.error == nil)
        #expect(activation.stateRead == .activated && activation.pairedRead && !activation.onMain)
        await h.stop()
    }

    // MARK: - Reachability

    /// The counterpart leaving and coming back: `sessionReachabilityDidChange` each time, and
    /// `isReachable` as the delegate reads it there (Apple: "re-read isReachable when called").
    @Test func theCounterpartLeavingAndComingBackIsAnnouncedBothTimes() async throws {
        let phoneDelegate = ProbeDelegate()
        let h = try await WCHarness.start(phoneApp: phoneDelegate, activated: { phoneDelegate.activated })
        try await eventually(10, "reachable") { h.phone.isReachable }
        await h.watch.close()
        try await eventually(10, "not reachable") { !h.phone.isReachable }
        try await eventually(10, "announced false") { phoneDelegate.reachability.withLock { $0 }.last == false }
        let watch2 = WCSession(environment: WCHarness.environment(h.relay, "watch", h.directory.path("watch")))
        let watchDelegate2 = ProbeDelegate()
        watch2.delegate = watchDelegate2
        watch2.activate()
        try await eventually(10, "reachable again") { h.phone.isReachable && watch2.isReachable }
        try await eventually(10, "announced true") { phoneDelegate.reachability.withLock { $0 }.last == true }
        await watch2.close()
        await h.stop()
    }

    /// A lost link (here: the relay restarts) is a reachability change on both sides, and so
    /// is its return; each call reports a change (never the same value twice in a row).
    @Test func aLostLinkAndItsReturnAreReachabilityChangesOnBothSides() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate()
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        // (The side that activated second found the other reachable already: no call.)
        await h.relay.shutdown()
        try await eventually(10, "announced unreachable") {
            phoneDelegate.reachability.withLock { $0 }.last == false && watchDelegate.reachability.withLock { $0 }.last == false
        }
        #expect(!h.phone.isReachable && !h.watch.isReachable)
        let relay = try await h.relayAgain()
        try await eventually(20, "announced reachable again") {
            phoneDelegate.reachability.withLock { $0 }.last == true && watchDelegate.reachability.withLock { $0 }.last == true
        }
        #expect(h.phone.isReachable && h.watch.isReachable)
        for seen in [phoneDelegate.reachability.withLock { $0 }, watchDelegate.reachability.withLock { $0 }] {
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 != $1 }, "\(seen)")
        }
        await h.stop(relay: relay)
    }

    /// A message can only come from a counterpart that is reachable, so the receiver reads
    /// `isReachable` true while it handles it, and has heard `sessionReachabilityDidChange`
    /// before: an app that answers a watch's first message with a message of its own can.
    @Test func aReceiverIsReachableWhenTheFirstMessageOfANewCounterpartArrives() async throws {
        for _ in 1...5 {
            let phoneDelegate = ProbeDelegate()
            let watchDelegate = ProbeDelegate()
            let h = try await WCHarness.start(activate: false)
            h.phone.delegate = phoneDelegate
            h.watch.delegate = watchDelegate
            h.phone.activate()
            try await eventually(10, "phone activated") { phoneDelegate.activated }
            h.watch.activate()
            try await eventually(10, "watch reachable") { h.watch.isReachable }
            h.watch.sendMessage(["n": 1], replyHandler: nil)
            try await eventually(10, "the message") { !phoneDelegate.messages.withLock { $0 }.isEmpty }
            #expect(phoneDelegate.reachableDuringMessage.withLock { $0 } == [true])
            #expect(phoneDelegate.order.withLock { $0 }.filter { $0 != "activation" }.prefix(2) == ["reachability", "message"])
            await h.stop()
        }
    }

    /// The same when the watch app comes to the foreground and sends at once.
    @Test func aReceiverIsReachableWhenTheFirstMessageAfterTheWatchCameToTheForegroundArrives() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate()
        let h = try await WCHarness.start(watchForeground: false, activate: false)
        h.phone.delegate = phoneDelegate
        h.watch.delegate = watchDelegate
        h.phone.activate()
        h.watch.activate()
        try await eventually(10, "activated") {
            phoneDelegate.activated && watchDelegate.activated
        }
        for n in 1...5 {
            h.watch.setApplicationForeground(true)
            try await eventually(10, "watch reachable") { h.watch.isReachable }
            h.watch.sendMessage(["n": n], replyHandler: nil)
            try await eventually(10, "the message") { phoneDelegate.messages.withLock { $0.count } == n }
            h.watch.setApplicationForeground(false)
            try await eventually(10, "phone sees the watch go") { phoneDelegate.reachability.withLock { $0 }.last == false }
        }
        #expect(phoneDelegate.reachableDuringMessage.withLock { $0 } == Array(repeating: true, count: 5))
        await h.stop()
    }

    // MARK: - Live messages

    /// An empty dictionary is a valid message, and an empty reply a valid reply.
    @Test func anEmptyMessageAndAnEmptyReplyAreDelivered() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate(replyWith: { _ in [:] })
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let reply = LockedState<Int?>(nil)
        h.phone.sendMessage([:], replyHandler: { r in reply.withLock { $0 = r.count } }, errorHandler: { _ in reply.withLock { $0 = -1 } })
        try await eventually(10, "reply") { reply.withLock { $0 } != nil }
        #expect(reply.withLock { $0 } == 0)
        #expect(watchDelegate.messages.withLock { $0.map(\.dictionary.count) } == [0])
        // Empty message data too (the watch's delegate answers with the bytes reversed: none).
        let dataReply = LockedState<Int?>(nil)
        h.phone.sendMessageData(Data(), replyHandler: { d in dataReply.withLock { $0 = d.count } }, errorHandler: { _ in
            dataReply.withLock { $0 = -1 }
        })
        try await eventually(10, "data reply") { dataReply.withLock { $0 } != nil }
        #expect(dataReply.withLock { $0 } == 0)
        #expect(watchDelegate.messageData.withLock { $0 } == [0])
        await h.stop()
    }

    /// `sendMessageData` with a reply handler to a delegate that implements no message-data
    /// variant fails the sender (as a dictionary message does: `deliveryFailed`), exactly once.
    @Test func messageDataWithAReplyToADelegateWithoutTheDataReplyVariantFails() async throws {
        let minimal = MinimalDelegate()
        let h = try await WCHarness.start(phoneApp: minimal, activated: { minimal.activated.withLock { $0 } })
        try await eventually(10, "reachable") { h.watch.isReachable }
        let log = HandlerLog()
        h.watch.sendMessageData(Data([1]), replyHandler: log.data(1), errorHandler: log.error(1))
        try await eventually(10, "a handler") { log.count > 0 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(log[1] == ["error 7014"])
        await h.stop()
    }

    /// A delegate may send from inside a delegate call, and answer a message from inside the
    /// reply handler of its own message (the queue is serial but never blocked by a send).
    @Test func aDelegateSendsAndAnswersFromInsideItsCallbacks() async throws {
        let phoneDelegate = ProbeDelegate(replyWith: { message in ["pong": message["ping"] ?? 0] })
        let watchDelegate = ProbeDelegate()
        // The watch answers each message only once the phone answered its own question.
        watchDelegate.onMessageWithReply = { session, message, reply in
            session.sendMessage(["ping": message["n"] ?? -1], replyHandler: { answer in
                reply(["answer": answer["pong"] ?? -2])
            }, errorHandler: { _ in reply(["answer": "error"]) })
        }
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let answers = LockedState<[String]>([])
        for n in 1...5 {
            h.phone.sendMessage(["n": n], replyHandler: { r in answers.withLock { $0.append("\(r["answer"] ?? "none")") } },
                errorHandler: { e in answers.withLock { $0.append("error \(e)") } })
        }
        try await eventually(10, "5 answers") { answers.withLock { $0.count } == 5 }
        #expect(Set(answers.withLock { $0 }) == Set((1...5).map(String.init)))
        await h.stop()
    }

    /// A reply that is not a property list can't be returned: the sender's errorHandler runs
    /// (exactly one of its handlers), promptly, and the receiver's session goes on.
    @Test func aReplyThatIsNotAPropertyListFailsTheSenderOnce() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate(replyWith: { message in
            message["bad"] != nil ? ["url": URL(fileURLWithPath: "/")] : ["echo": message["n"] ?? 0]
        })
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let log = HandlerLog()
        h.phone.sendMessage(["bad": 1], replyHandler: log.reply(1), errorHandler: log.error(1))
        h.phone.sendMessage(["n": 2], replyHandler: log.reply(2), errorHandler: log.error(2))
        try await eventually(10, "both handlers") { log.count == 2 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(log[1].count == 1 && log[1].first?.hasPrefix("error") == true)
        #expect(log[2] == ["reply 2"])
        await h.stop()
    }

    /// Before `activate()`, every send fails with `sessionNotActivated` (7004): the throwing
    /// one at the call, the others through their error handler or `didFinish`.
    @Test func everySendBeforeActivationFailsWithSessionNotActivated() async throws {
        let phoneDelegate = ProbeDelegate()
        let h = try await WCHarness.start(activate: false)
        h.phone.delegate = phoneDelegate
        let log = HandlerLog()
        h.phone.sendMessageData(Data([1]), replyHandler: log.data(1), errorHandler: log.error(1))
        let transfer = h.phone.transferUserInfo(["n": 1])
        let complication = h.phone.transferCurrentComplicationUserInfo(["n": 2])
        try await eventually(10, "the handlers") { log.count == 1 && phoneDelegate.finished.withLock { $0.count } == 2 }
        #expect(log[1] == ["error 7004"])
        #expect(phoneDelegate.finished.withLock { $0.map(\.error) } == [7004, 7004])
        #expect(!transfer.isTransferring && !complication.isTransferring && h.phone.outstandingUserInfoTransfers.isEmpty)
        await h.stop()
    }

    /// "If you specify a reply handler block, your handler block is executed asynchronously on
    /// a background thread. The block is executed serially with respect to other incoming
    /// delegate messages": reply and error handlers never overlap a delegate call.
    @Test func replyHandlersRunSeriallyWithDelegateCalls() async throws {
        let phoneDelegate = ProbeDelegate(callDelay: 0.003)
        let watchDelegate = ProbeDelegate()
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let handlers = LockedState(0)
        for n in 1...20 {
            h.watch.transferUserInfo(["n": n])
            h.phone.sendMessage(["n": n], replyHandler: { _ in
                phoneDelegate.enter("reply")
                handlers.withLock { $0 += 1 }
            }, errorHandler: { _ in
                phoneDelegate.enter("error")
                handlers.withLock { $0 += 1 }
            })
        }
        try await eventually(20, "20 handlers and 20 userInfo") {
            handlers.withLock { $0 } == 20 && phoneDelegate.userInfos.withLock { $0.count } == 20
        }
        #expect(!phoneDelegate.overlapped.withLock { $0 })
        #expect(!phoneDelegate.onMainThread.withLock { $0 })
        await h.stop()
    }

    // MARK: - Property lists

    /// Property-list values go and come back as Apple's would: `Date` and `Data` equal, nested
    /// arrays and dictionaries whole, booleans readable as `Bool` (and `Int`), integers as `Int`.
    @Test func propertyListValuesRoundTripThroughAMessageAndItsReply() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate(replyWith: { $0 })
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let date = Date(timeIntervalSinceReferenceDate: 765_432_109.876_543)
        let sent: [String: Any] = [
            "bool": true, "false": false, "int": 42, "one": 1, "negative": -7, "double": 2.5, "string": "héllo \"q\" \\",
            "date": date, "data": Data([0, 1, 2, 255]), "emptyData": Data(),
            "array": [1, "two", [3.5, false], ["when": date]] as [Any],
            "dict": ["inner": ["deep": Data([9, 8])]], "emptyArray": [Any](), "emptyDict": [String: Any](),
            "int64": Int64.max, "float": Float(0.5),
        ]
        let echoed = LockedState<Box?>(nil)
        h.phone.sendMessage(sent, replyHandler: { r in echoed.withLock { $0 = Box(r) } }, errorHandler: { e in
            echoed.withLock { $0 = Box(["error": "\(e)"]) }
        })
        try await eventually(10, "the reply") { echoed.withLock { $0 } != nil }
        let received = try #require(watchDelegate.messages.withLock { $0.first }?.dictionary)
        let reply = try #require(echoed.withLock { $0 }?.dictionary)
        for r in [received, reply] {
            #expect(r["bool"] as? Bool == true && r["false"] as? Bool == false)
            #expect(r["bool"] as? Int == 1)
            #expect(r["int"] as? Int == 42 && r["one"] as? Int == 1 && r["negative"] as? Int == -7)
            #expect(r["double"] as? Double == 2.5 && r["int"] as? Double == 42)
            #expect(r["string"] as? String == "héllo \"q\" \\")
            #expect(r["date"] as? Date == date)
            #expect(r["data"] as? Data == Data([0, 1, 2, 255]) && r["emptyData"] as? Data == Data())
            let array = try #require(r["array"] as? [Any])
            #expect(array.count == 4 && array[0] as? Int == 1 && array[1] as? String == "two")
            #expect((array[2] as? [Any]).map { $0.count == 2 && $0[0] as? Double == 3.5 && $0[1] as? Bool == false } == true)
            #expect((array[3] as? [String: Any])?["when"] as? Date == date)
            #expect(((r["dict"] as? [String: Any])?["inner"] as? [String: Any])?["deep"] as? Data == Data([9, 8]))
            #expect((r["emptyArray"] as? [Any])?.isEmpty == true && (r["emptyDict"] as? [String: Any])?.isEmpty == true)
            #expect(r["int64"] as? Int64 == Int64.max && r["float"] as? Float == 0.5)
            #expect(r.count == sent.count)
        }
        await h.stop()
    }

    /// Strings are any Unicode text, control characters included, as keys and as values.
    @Test func unusualStringsAndKeysRoundTrip() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate(replyWith: { $0 })
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let strings = ["", "\u{0}", "a\u{0}b", "\u{1}\u{1F}\u{7F}", "\u{2028}\u{2029}", "\u{FEFF}x", "👩‍👩‍👧‍👦", "e\u{301}", "\\\"/", "\r\n\t"]
        var sent: [String: Any] = [:]
        for (i, string) in strings.enumerated() {
            sent["v\(i)"] = string
            sent[string.isEmpty ? "" : "k\(i)" + string] = i
        }
        try h.phone.updateApplicationContext(sent)
        h.phone.transferUserInfo(sent)
        let echoed = LockedState<Box?>(nil)
        h.phone.sendMessage(sent, replyHandler: { r in echoed.withLock { $0 = Box(r) } }, errorHandler: { e in
            echoed.withLock { $0 = Box(["error": "\(e)"]) }
        })
        try await eventually(10, "all three") {
            echoed.withLock { $0 } != nil && !watchDelegate.userInfos.withLock { $0 }.isEmpty && !h.watch.receivedApplicationContext.isEmpty
        }
        let arrived = [echoed.withLock { $0 }!.dictionary, watchDelegate.userInfos.withLock { $0[0] }.dictionary, h.watch.receivedApplicationContext]
        for r in arrived {
            #expect(r.count == sent.count)
            for (key, value) in sent {
                if let string = value as? String {
                    // Compared as scalars: Swift's == would take "é" for "e\u{301}".
                    #expect((r[key] as? String).map { Array($0.unicodeScalars) } == Array(string.unicodeScalars), "\(key)")
                } else {
                    #expect(r[key] as? Int == value as? Int, "\(key)")
                }
            }
        }
        await h.stop()
    }

    /// Numbers at the edges of their types come back as the same numbers.
    @Test func numbersAtTheEdgesOfTheirTypesRoundTrip() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate(replyWith: { $0 })
        let h = try await WCHarness.probes(phone: phoneDelegate, watch: watchDelegate)
        let integers: [String: Int64] = ["min": .min, "max": .max, "minPlus1": .min + 1, "zero": 0, "minus1": -1]
        let doubles: [String: Double] = [
            "negZero": -0.0, "tiny": .leastNonzeroMagnitude, "leastNormal": .leastNormalMagnitude, "huge": .greatestFiniteMagnitude,
            "1e20": 1e20, "-1e20": -1e20, "2^63": 9_223_372_036_854_775_808.0, "0.1": 0.1, "1e-7": 1e-7, "third": 1.0 / 3,
            "integral": 3.0, "-integral": -42.0, "2^53+2": 9_007_199_254_740_994.0,
        ]
        let dates: [String: Date] = [
            "distantPast": .distantPast, "distantFuture": .distantFuture, "epoch": Date(timeIntervalSince1970: 0),
            "reference": Date(timeIntervalSinceReferenceDate: 0), "fine": Date(timeIntervalSinceReferenceDate: 1e-9),
            "before": Date(timeIntervalSinceReferenceDate: -0.000_001),
        ]
        var sent: [String: Any] = [:]
        for (k, v) in integers { sent["i" + k] = v }
        for (k, v) in dates { sent["t" + k] = v }
        for (k, v) in doubles { sent["d" + k] = v }
        let echoed = LockedState<Box?>(nil)
        h.phone.sendMessage(sent, replyHandler: { r in echoed.withLock { $0 = Box(r) } }, errorHandler: { e in
            echoed.withLock { $0 = Box(["error": "\(e)"]) }
        })
        try await eventually(10, "the reply") { echoed.withLock { $0 } != nil }
        let r = echoed.withLock { $0 }!.dictionary
        #expect(r["error"] == nil, "\(r["error"] ?? "")")
        for (k, v) in integers { #expect((r["i" + k] as? NSNumber)?.int64Value == v, "\(k): \(r["i" + k] ?? "nil")") }
        for (k, v) in doubles {
            let d = (r["d" + k] as? NSNumber)?.doubleValue
            #expect(d == v && d?.sign == v.sign, "\(k): \(r["d" + k] ?? "nil")")
            #expect(r["d" + k] as? Double == v, "\(k) as? Double")
        }
        for (k, v) in dates { #expect(r["t" + k] as? Date == v, "\(k): \(r["t" + k] ?? "nil")") }
        await h.stop()
    }

    /// Foundation's property-list classes (`NSString`, `NSArray`, `NSDictionary`, `NSDate`,
    /// `NSData`, `NSNumber`) are property-list types: an iOS app that builds its dictionary
    /// from Objective-C-era code or `NSMutableDictionary` sends it as is.
    @Test func foundationPropertyListObjectsAreAccepted() async throws {
        let h = try await WCHarness.start()
        let nested = NSMutableDictionary()
        nested["a"] = NSNumber(value: 1)
        let sent: [String: Any] = [
            "nsString": NSString(string: "x"), "nsArray": NSArray(array: [NSNumber(value: 1), NSString(string: "b")]),
            "nsDict": nested, "nsDate": NSDate(timeIntervalSinceReferenceDate: 5),
            "nsData": NSData(data: Data([1, 2])), "nsBool": NSNumber(value: true),
        ]
        try h.phone.updateApplicationContext(sent)
        try await waitForCalls(h.watchDelegate, "context")
        let r = h.watch.receivedApplicationContext
        #expect(r["nsString"] as? String == "x")
        #expect((r["nsArray"] as? [Any])?.count == 2)
        #expect((r["nsDict"] as? [String: Any])?["a"] as? Int == 1)
        #expect(r["nsDate"] as? Date == Date(timeIntervalSinceReferenceDate: 5))
        #expect(r["nsData"] as? Data == Data([1, 2]))
        #expect(r["nsBool"] as? Bool == true)
        await h.stop()
    }

    /// Dictionary keys must be strings at every level, and `NSNull` is no property-list type:
    /// `payloadUnsupportedTypes` (7010), synchronously from `updateApplicationContext`.
    @Test func nestedNonStringKeysAndNullsAreUnsupportedTypes() async throws {
        let h = try await WCHarness.start()
        #expect(throws: WCError(.payloadUnsupportedTypes)) { try h.phone.updateApplicationContext(["d": [1: "x"]]) }
        #expect(throws: WCError(.payloadUnsupportedTypes)) { try h.phone.updateApplicationContext(["a": [1, NSNull()] as [Any]]) }
        #expect(throws: WCError(.payloadUnsupportedTypes)) { try h.phone.updateApplicationContext(["d": ["k": ["x": UUID()]]]) }
        #expect(h.phone.applicationContext.isEmpty)
        await h.stop()
    }

    /// A property list may nest deeply, and WatchConnectivity carries it whole. Here the relay's
    /// frames and the device's store nest at most 64 levels, so a dictionary either arrives
    /// intact, through every channel and a restart of its sender, or fails at once with
    /// `payloadUnsupportedTypes`: never a send that reports nothing, a queue that stops, a
    /// dictionary that arrives changed, or a session that can no longer activate.
    @Test(arguments: [61, 62, 70])
    func aDeeplyNestedDictionaryArrivesIntactOrFailsAtOnce(_ depth: Int) async throws {
        let nested = Self.nested(depth)
        let phoneDelegate = ProbeDelegate()
        let h = try await WCHarness.start(phoneApp: phoneDelegate, activated: { phoneDelegate.activated }, activatingWatch: false)
        var contextFailure: Int?
        do { try h.phone.updateApplicationContext(nested) } catch { contextFailure = (error as NSError).code }
        let transfer = h.phone.transferUserInfo(nested)
        try await Task.sleep(for: .seconds(1))  // the phone hands them to the relay
        let userInfoFailure = phoneDelegate.finished.withLock { $0.first?.error }
        #expect(contextFailure == nil || contextFailure == 7010)
        #expect(userInfoFailure == nil || userInfoFailure == 7010)
        #expect(userInfoFailure != nil || transfer.isTransferring)

        // The phone app restarts while the transfer is outstanding: it activates as before.
        await h.phone.close()
        let phone = WCSession(environment: WCHarness.environment(h.relay, "phone", h.directory.path("phone")))
        let restarted = ProbeDelegate()
        phone.delegate = restarted
        phone.activate()
        try await eventually(10, "activation after the restart") { restarted.activated }
        let activation = try #require(restarted.activations.withLock { $0.first })
        #expect(activation.state == .activated && activation.error == nil)

        let watchDelegate = ProbeDelegate(replyWith: { $0 })
        h.watch.delegate = watchDelegate
        h.watch.activate()
        try await eventually(10, "reachable") { phone.isReachable && h.watch.isReachable }
        let reply = LockedState<Box?>(nil)
        let messageFailure = LockedState<Int?>(nil)
        phone.sendMessage(nested, replyHandler: { r in reply.withLock { $0 = Box(r) } }) { e in
            messageFailure.withLock { $0 = (e as NSError).code }
        }
        try await eventually(10, "the reply or the error") { reply.withLock { $0 } != nil || messageFailure.withLock { $0 } != nil }
        if let failure = messageFailure.withLock({ $0 }) {
            #expect(failure == 7010)
        } else {
            #expect(Self.depth(of: reply.withLock { $0 }!.dictionary) == depth)
            #expect(Self.depth(of: watchDelegate.messages.withLock { $0.first }?.dictionary ?? [:]) == depth)
        }
        if contextFailure == nil {
            try await eventually(10, "the context") { Self.depth(of: h.watch.receivedApplicationContext) == depth }
        }
        // The queue goes on: a later userInfo arrives after the deep one (if that went).
        phone.transferUserInfo(["n": 1])
        try await eventually(10, "the next userInfo") { watchDelegate.userInfos.withLock { $0.contains { $0.dictionary["n"] as? Int == 1 } } }
        let received = watchDelegate.userInfos.withLock { $0.map { $0.dictionary["n"] != nil ? 0 : Self.depth(of: $0.dictionary) } }
        #expect(received == (userInfoFailure == nil ? [depth, 0] : [0]))
        await phone.close()
        await h.stop()
    }

    static func nested(_ depth: Int) -> [String: Any] {
        var value: [String: Any] = ["leaf": 1]
        for _ in 1..<depth { value = ["d": value] }
        return value
    }

    /// How many dictionaries `nested(_:)` put inside each other (1 for a flat one).
    static func depth(of dictionary: [String: Any]) -> Int {
        var n = 1
        var current = dictionary
        while let next = current["d"] as? [String: Any] {
            n += 1
            current = next
        }
        return current["leaf"] as? Int == 1 ? n : -n
    }

    // MARK: - Application context

    /// "This method replaces the previous dictionary that was set": contexts set while the
    /// counterpart is away arrive as one, the latest; both properties hold it.
    @Test func contextsSetWhileTheCounterpartIsAwayArriveAsTheLatestOnly() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        for n in 1...5 { try h.phone.updateApplicationContext(["n": n]) }
        #expect(h.phone.applicationContext["n"] as? Int == 5)
        // Let the phone hand them to the relay.
        try await Task.sleep(for: .seconds(1))
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "context")
        try await Task.sleep(for: .milliseconds(500))
        #expect(h.watchDelegate.details("context") == ["5"])
        #expect(h.watch.receivedApplicationContext["n"] as? Int == 5)
        #expect(h.watch.applicationContext.isEmpty && h.phone.receivedApplicationContext.isEmpty)
        await h.stop()
    }

    /// `applicationContext` (last sent) and `receivedApplicationContext` (last received) are
    /// the device's: both still hold after either app restarts.
    @Test func bothContextPropertiesSurviveARestartOfEitherApp() async throws {
        let h = try await WCHarness.start()
        try h.phone.updateApplicationContext(["n": 7])
        try h.watch.updateApplicationContext(["n": 8])
        try await waitForCalls(h.watchDelegate, "context")
        try await waitForCalls(h.phoneDelegate, "context")
        await h.watch.close()
        await h.phone.close()
        let phone = WCSession(environment: WCHarness.environment(h.relay, "phone", h.directory.path("phone")))
        let watch = WCSession(environment: WCHarness.environment(h.relay, "watch", h.directory.path("watch")))
        let (phoneDelegate, watchDelegate) = (RecordingDelegate(), RecordingDelegate())
        phone.delegate = phoneDelegate
        watch.delegate = watchDelegate
        try await h.activate(phone, phoneDelegate)
        try await h.activate(watch, watchDelegate)
        #expect(phone.applicationContext["n"] as? Int == 7 && phone.receivedApplicationContext["n"] as? Int == 8)
        #expect(watch.applicationContext["n"] as? Int == 8 && watch.receivedApplicationContext["n"] as? Int == 7)
        await phone.close()
        await watch.close()
        await h.relay.shutdown()
    }

    // MARK: - User info

    /// A transfer is outstanding and `isTransferring` until the counterpart received it; then
    /// `didFinish(error: nil)` gets the same object, no longer outstanding, and `cancel()` has
    /// "no effect" on a transfer already transferred.
    @Test func aUserInfoTransfersLifecycleFromQueuedToFinished() async throws {
        let phoneDelegate = ProbeDelegate()
        let h = try await WCHarness.start(phoneApp: phoneDelegate, activated: { phoneDelegate.activated }, activatingWatch: false)
        let transfer = h.phone.transferUserInfo(["n": 1])
        #expect(transfer.isTransferring && h.phone.outstandingUserInfoTransfers == [transfer])
        #expect(transfer.userInfo["n"] as? Int == 1 && !transfer.isCurrentComplicationInfo)
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await eventually(10, "didFinish") { phoneDelegate.finished.withLock { $0.count } == 1 }
        let finished = try #require(phoneDelegate.finished.withLock { $0.first })
        #expect(finished.transfer === transfer && finished.error == nil)
        #expect(!finished.transferringDuringCall && !finished.outstandingDuringCall)
        #expect(!transfer.isTransferring && h.phone.outstandingUserInfoTransfers.isEmpty)
        transfer.cancel()
        try await Task.sleep(for: .milliseconds(300))
        #expect(phoneDelegate.finished.withLock { $0.count } == 1)
        #expect(h.watchDelegate.details("userInfo") == ["1"])
        await h.stop()
    }

    /// The first delegate call is `activationDidCompleteWith`, even when data waits ("If
    /// context data is already waiting to be delivered, this method is called shortly after you
    /// activate"); once everything is delivered, `hasContentPending` is false.
    @Test func activationComesFirstThenWhatWaitedThenNothingIsPending() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        h.phone.transferUserInfo(["n": 1])
        try h.phone.updateApplicationContext(["n": 2])
        try await Task.sleep(for: .milliseconds(500))
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(h.watchDelegate, "context")
        #expect(h.watchDelegate.names().first == "activation")
        try await eventually(10, "nothing pending") { !h.watch.hasContentPending }
        await h.stop()
    }

    /// "If there is no app context, it should be updated with an empty dictionary": an empty
    /// context is delivered and empties `receivedApplicationContext`.
    @Test func anEmptyContextIsDeliveredAndClearsTheReceivedOne() async throws {
        let h = try await WCHarness.start()
        try h.phone.updateApplicationContext(["n": 1])
        try await waitForCalls(h.watchDelegate, "context")
        try h.phone.updateApplicationContext([:])
        try await waitForCalls(h.watchDelegate, "context", count: 2)
        #expect(h.watchDelegate.details("context") == ["1", ""])
        #expect(h.watch.receivedApplicationContext.isEmpty && h.phone.applicationContext.isEmpty)
        await h.stop()
    }

    /// Messages sent before the sender leaves are each delivered or failed (never silently
    /// lost), and the receiver hears of them before it hears that the sender went away.
    @Test func messagesSentBeforeTheSenderLeavesComeBeforeTheReachabilityChange() async throws {
        let h = try await WCHarness.start()
        try await eventually(10, "reachable") { h.phone.isReachable && h.watch.isReachable }
        let failed = LockedState(0)
        for n in 1...5 { h.watch.sendMessage(["n": n], replyHandler: nil) { _ in failed.withLock { $0 += 1 } } }
        h.watch.setApplicationForeground(false)
        try await eventually(10, "phone sees the watch go") { !h.phone.isReachable }
        try await waitForCalls(h.phoneDelegate, "reachability")
        try await Task.sleep(for: .milliseconds(300))
        let names = h.phoneDelegate.names()
        let delivered = h.phoneDelegate.details("message")
        #expect(delivered.count + failed.withLock { $0 } == 5)
        #expect(delivered == (1...delivered.count).map(String.init))
        if let last = names.lastIndex(of: "message") {
            #expect(last < names.lastIndex(of: "reachability")!)
        }
        await h.stop()
    }

    /// Background transfers go to and from a watch app in the background (not reachable).
    @Test func userInfoAndContextReachAWatchAppInTheBackgroundAndComeFromIt() async throws {
        let h = try await WCHarness.start(watchForeground: false)
        #expect(!h.phone.isReachable && !h.watch.isReachable)
        h.phone.transferUserInfo(["n": 1])
        try h.phone.updateApplicationContext(["n": 2])
        h.watch.transferUserInfo(["n": 3])
        try h.watch.updateApplicationContext(["n": 4])
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(h.watchDelegate, "context")
        try await waitForCalls(h.phoneDelegate, "userInfo")
        try await waitForCalls(h.phoneDelegate, "context")
        #expect(h.watchDelegate.details("userInfo") == ["1"] && h.phoneDelegate.details("userInfo") == ["3"])
        try await waitForCalls(h.phoneDelegate, "didFinish")
        try await waitForCalls(h.watchDelegate, "didFinish")
        #expect(!h.phone.isReachable)
        await h.stop()
    }

    /// A counterpart that is paired but has never run is not reachable: `notReachable` (7007).
    @Test func aMessageToACounterpartThatNeverRanFailsWithNotReachable() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        #expect(!h.phone.isReachable)
        let log = HandlerLog()
        h.phone.sendMessage(["n": 1], replyHandler: log.reply(1), errorHandler: log.error(1))
        h.phone.sendMessageData(Data([1]), replyHandler: log.data(2), errorHandler: log.error(2))
        try await eventually(10, "two handlers") { log.count == 2 }
        #expect(log[1] == ["error 7007"] && log[2] == ["error 7007"])
        await h.stop()
    }

    /// A closed session is not activated, and so not reachable either: `isReachable` is true
    /// only while the counterpart "is available for live messaging" (Apple's `isReachable`),
    /// which a session that sends nothing can't be. An app that checks `isReachable` before
    /// `sendMessage` must not be told yes, then `sessionNotActivated`.
    @Test func aClosedSessionIsNeitherActivatedNorReachable() async throws {
        let h = try await WCHarness.start()
        try await eventually(10, "reachable") { h.watch.isReachable && h.phone.isReachable }
        await h.watch.close()
        #expect(h.watch.activationState == .notActivated)
        #expect(!h.watch.isReachable)
        await h.phone.close()
        #expect(!h.phone.isReachable)
        await h.stop()
    }

    /// The delegate is weak: once the app's delegate is gone, sends fail with
    /// `sessionMissingDelegate` ("A delegate must exist before the session will allow sends").
    @Test func aDelegateThatWentAwayMakesSendsFailWithSessionMissingDelegate() async throws {
        let h = try await WCHarness.start(activate: false)
        do {
            let transient = ProbeDelegate()
            h.phone.delegate = transient
            h.phone.activate()
            try await eventually(10, "activation") { transient.activated }
        }
        try await eventually(10, "the delegate is gone") { h.phone.delegate == nil }
        #expect(throws: WCError(.sessionMissingDelegate)) { try h.phone.updateApplicationContext(["n": 1]) }
        let log = HandlerLog()
        h.phone.sendMessage(["n": 1], replyHandler: nil, errorHandler: log.error(1))
        try await eventually(10, "the error") { log.count == 1 }
        #expect(log[1] == ["error 7003"])
        await h.stop()
    }

    /// `remainingComplicationUserInfoTransfers` is "the number of remaining times that you can
    /// call" it: each call within the budget spends one at once.
    @Test func eachComplicationTransferSpendsOneOfTheBudgetAtTheCall() async throws {
        let h = try await WCHarness.start()
        let before = h.phone.remainingComplicationUserInfoTransfers
        #expect(before > 0)
        h.phone.transferCurrentComplicationUserInfo(["n": 1])
        #expect(h.phone.remainingComplicationUserInfoTransfers == before - 1)
        h.phone.transferCurrentComplicationUserInfo(["n": 2])
        #expect(h.phone.remainingComplicationUserInfoTransfers == before - 2)
        try await waitForCalls(h.watchDelegate, "userInfo", count: 2)
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 2)
        #expect(h.phone.remainingComplicationUserInfoTransfers == before - 2)
        await h.stop()
    }

    /// The budget a complication transfer spent at the call stays spent when the app is
    /// launched again before the relay accepted the transfer (it waits on the device): the
    /// relay's count, which does not show it yet, is not the whole answer.
    @Test func aRelaunchDoesNotGiveBackTheBudgetOfATransferStillQueuedOnTheDevice() async throws {
        let h = try await WCHarness.start()
        let before = h.phone.remainingComplicationUserInfoTransfers
        await h.relay.shutdown()
        try await eventually(10, "the phone sees the relay gone") { !h.phone.isReachable }
        h.phone.transferCurrentComplicationUserInfo(["n": 1])
        #expect(h.phone.remainingComplicationUserInfoTransfers == before - 1)
        await h.phone.close()
        // The app again, the relay still away: activation completes after the request timeout.
        var environment = WCHarness.environment(h.relay, "phone", h.directory.path("phone"))
        environment?.requestTimeoutSeconds = 1
        let again = WCSession(environment: environment)
        let delegate = RecordingDelegate()
        again.delegate = delegate
        try await h.activate(again, delegate)
        #expect(again.outstandingUserInfoTransfers.count == 1)
        #expect(again.remainingComplicationUserInfoTransfers == before - 1)
        // The relay back: it counts the transfer once, and the count stays.
        let relay = try await h.relayAgain()
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(delegate, "didFinish")
        #expect(again.remainingComplicationUserInfoTransfers == before - 1)
        await again.close()
        await h.stop(relay: relay)
    }

    /// The common pattern: send as soon as `activationDidCompleteWith` says `.activated`,
    /// from inside that call (the session is usable there).
    @Test func sendingFromInsideActivationDidCompleteWorks() async throws {
        let replies = LockedState<[String]>([])
        let phoneDelegate = RecordingDelegate(onActivation: { session in
            session.transferUserInfo(["n": 1])
            try? session.updateApplicationContext(["n": 2])
            session.sendMessage(["n": 3], replyHandler: { r in replies.withLock { $0.append("\(r["echo"] ?? "")") } },
                errorHandler: { e in replies.withLock { $0.append("error \((e as NSError).code)") } })
        })
        let h = try await WCHarness.start(activate: false, phoneDelegate: phoneDelegate)
        try await h.activate(h.watch, h.watchDelegate)
        try await h.activate(h.phone, phoneDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(h.watchDelegate, "context")
        try await eventually(10, "a handler") { !replies.withLock { $0 }.isEmpty }
        // Reachable or not at that moment, exactly one handler ran, and a reply means delivery.
        let answer = replies.withLock { $0 }
        #expect(answer == ["3"] || answer == ["error 7007"])
        if answer == ["3"] { #expect(h.watchDelegate.details("messageWithReply") == ["3"]) }
        try await waitForCalls(phoneDelegate, "didFinish")
        await h.stop()
    }

    /// The other common pattern: send from `sessionReachabilityDidChange` once `isReachable`
    /// is true.
    @Test func sendingFromInsideSessionReachabilityDidChangeWorks() async throws {
        let phoneDelegate = ProbeDelegate()
        let watchDelegate = ProbeDelegate()
        let replies = LockedState<[String]>([])
        phoneDelegate.onReachable = { session in
            session.sendMessage(["n": 5], replyHandler: { r in replies.withLock { $0.append("\(r["echo"] ?? "")") } },
                errorHandler: { e in replies.withLock { $0.append("error \((e as NSError).code)") } })
        }
        let h = try await WCHarness.start(activate: false)
        h.phone.delegate = phoneDelegate
        h.watch.delegate = watchDelegate
        h.phone.activate()
        try await eventually(10, "phone activated") { phoneDelegate.activated }
        h.watch.activate()
        try await eventually(10, "the reply") { !replies.withLock { $0 }.isEmpty }
        #expect(replies.withLock { $0 } == ["5"])
        await h.stop()
    }

    /// A delegate set in place of another gets what comes after, `didFinish` of transfers
    /// sent before included.
    @Test func aReplacedDelegateGetsWhatComesAfter() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let transfer = h.phone.transferUserInfo(["n": 1])
        let second = ProbeDelegate()
        h.phone.delegate = second
        try await h.activate(h.watch, h.watchDelegate)
        try await eventually(10, "didFinish on the new delegate") { second.finished.withLock { $0.count } == 1 }
        #expect(second.finished.withLock { $0.first?.transfer } === transfer)
        #expect(h.phoneDelegate.details("didFinish").isEmpty)
        h.watch.transferUserInfo(["n": 2])
        try await eventually(10, "userInfo on the new delegate") { second.userInfos.withLock { $0.count } == 1 }
        #expect(h.phoneDelegate.details("userInfo").isEmpty)
        await h.stop()
    }

    /// `cancel()` "before it completes": a transfer already handed on (the counterpart away)
    /// is cancelled all the same, leaves the outstanding ones at once, and never arrives;
    /// the ones around it do, in order.
    @Test func cancellingATransferThatWasAlreadyHandedOnStopsIt() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let transfers = (1...3).map { h.phone.transferUserInfo(["n": $0]) }
        try await Task.sleep(for: .seconds(1))  // the phone hands them to the relay
        transfers[1].cancel()
        #expect(!transfers[1].isTransferring && h.phone.outstandingUserInfoTransfers == [transfers[0], transfers[2]])
        try await Task.sleep(for: .milliseconds(500))
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo", count: 2)
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 2)
        try await Task.sleep(for: .milliseconds(300))
        #expect(h.watchDelegate.details("userInfo") == ["1", "3"])
        #expect(h.phoneDelegate.details("didFinish") == ["1", "3"])
        await h.stop()
    }

    /// Unlike the context, userInfo is a queue: the same dictionary sent twice arrives twice,
    /// each transfer its own object with its own `didFinish`.
    @Test func theSameUserInfoSentTwiceArrivesTwice() async throws {
        let h = try await WCHarness.start()
        let first = h.phone.transferUserInfo(["n": 1])
        let second = h.phone.transferUserInfo(["n": 1])
        #expect(first != second && h.phone.outstandingUserInfoTransfers.count <= 2)
        try await waitForCalls(h.watchDelegate, "userInfo", count: 2)
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 2)
        try await Task.sleep(for: .milliseconds(200))
        #expect(h.watchDelegate.details("userInfo") == ["1", "1"])
        #expect(h.phoneDelegate.details("didFinish") == ["1", "1"])
        await h.stop()
    }

    // MARK: - Complications

    /// With the complication not on the face, `remainingComplicationUserInfoTransfers` "defaults
    /// to 0", and `transferCurrentComplicationUserInfo` then goes as `transferUserInfo`.
    @Test func withoutAnEnabledComplicationTheBudgetIsZeroAndTransfersGoAsUserInfo() async throws {
        let h = try await WCHarness.start(activate: false)
        var variables = [
            "WATCHRELAY_URL": h.relay.url, "WATCHRELAY_ROLE": "phone", "WATCHRELAY_STATE": h.directory.path("phone"),
            "WATCHRELAY_REQUEST_TIMEOUT_S": String(10 * timeoutScale),
        ]
        variables["WATCHRELAY_COMPLICATION"] = "0"
        let phone = WCSession(environment: WCSessionEnvironment(variables))
        let phoneDelegate = RecordingDelegate()
        phone.delegate = phoneDelegate
        try await h.activate(phone, phoneDelegate)
        try await h.activate(h.watch, h.watchDelegate)
        #expect(phone.isPaired && !phone.isComplicationEnabled && phone.remainingComplicationUserInfoTransfers == 0)
        let transfer = phone.transferCurrentComplicationUserInfo(["n": 1])
        #expect(!transfer.isCurrentComplicationInfo)
        try await waitForCalls(h.watchDelegate, "userInfo")
        try await waitForCalls(phoneDelegate, "didFinish")
        #expect(phoneDelegate.details("didFinish") == ["1"])
        #expect(phone.remainingComplicationUserInfoTransfers == 0)
        await phone.close()
        await h.stop()
    }

    /// "There can only be one current complication user info in the outstandingUserInfoTransfers
    /// queue … the previously current user info will be untagged … [it] will however stay in
    /// the queue of outstanding transfers": both are outstanding, only the newer is current,
    /// and both arrive.
    @Test func aNewerCurrentComplicationInfoUntagsTheOlderWhichStaysQueued() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        let older = h.phone.transferCurrentComplicationUserInfo(["n": 1])
        #expect(older.isCurrentComplicationInfo)
        let newer = h.phone.transferCurrentComplicationUserInfo(["n": 2])
        #expect(!older.isCurrentComplicationInfo && newer.isCurrentComplicationInfo)
        #expect(h.phone.outstandingUserInfoTransfers == [older, newer])
        #expect(older.isTransferring && newer.isTransferring)
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo", count: 2)
        #expect(Set(h.watchDelegate.details("userInfo")) == ["1", "2"])
        try await waitForCalls(h.phoneDelegate, "didFinish", count: 2)
        #expect(h.phone.outstandingUserInfoTransfers.isEmpty)
        await h.stop()
    }

    /// Complication info is "urgent": `transferCurrentComplicationUserInfo` puts it at the
    /// front of the queue (WWDC15 session 713, as summarised in the notes, A.3.5), so a watch
    /// that comes back gets it before the plain userInfo queued earlier.
    @Test func currentComplicationInfoOvertakesQueuedUserInfo() async throws {
        let h = try await WCHarness.start(activate: false)
        try await h.activate(h.phone, h.phoneDelegate)
        for n in 1...3 { h.phone.transferUserInfo(["n": n]) }
        let complication = h.phone.transferCurrentComplicationUserInfo(["n": 99])
        #expect(complication.isCurrentComplicationInfo)
        // The relay holds all four before the watch comes (a second's sleep was not always enough).
        try await eventually(10, "the relay to hold the four transfers") { await h.relay.stats.queued == 4 }
        try await h.activate(h.watch, h.watchDelegate)
        try await waitForCalls(h.watchDelegate, "userInfo", count: 4)
        #expect(h.watchDelegate.details("userInfo").first == "99")
        await h.stop()
    }
}

// MARK: - Helpers

/// A `[String: Any]` carried between threads (it is only read after it was stored).
struct Box: @unchecked Sendable {
    let dictionary: [String: Any]
    init(_ dictionary: [String: Any]) { self.dictionary = dictionary }
}

/// A delegate for these tests: records what it got, where, and whether two calls (or a call
/// and a handler, through ``enter(_:)``) ever overlapped.
final class ProbeDelegate: NSObject, WCSessionDelegate, @unchecked Sendable {
    struct Activation: Sendable {
        var state: WCSessionActivationState
        var error: Int?
        var stateRead: WCSessionActivationState
        var pairedRead: Bool
        var onMain: Bool
    }
    struct Finished: @unchecked Sendable {
        let transfer: WCSessionUserInfoTransfer
        let error: Int?
        let transferringDuringCall: Bool
        let outstandingDuringCall: Bool
    }

    let activations = LockedState<[Activation]>([])
    /// Whether `activationDidCompleteWith` came.
    var activated: Bool { !activations.withLock { $0 }.isEmpty }
    let reachability = LockedState<[Bool]>([])
    let messages = LockedState<[Box]>([])
    /// The size of each message data with a reply handler.
    let messageData = LockedState<[Int]>([])
    let userInfos = LockedState<[Box]>([])
    let finished = LockedState<[Finished]>([])
    /// The delegate calls and handlers, by name, in the order they ran.
    let order = LockedState<[String]>([])
    /// `isReachable` as each `didReceiveMessage` (without reply) read it.
    let reachableDuringMessage = LockedState<[Bool]>([])
    let inside = LockedState(0)
    let overlapped = LockedState(false)
    let onMainThread = LockedState(false)
    let callDelay: Double
    let replyWith: (@Sendable ([String: Any]) -> [String: Any])?
    /// Replaces the answer of `didReceiveMessage:replyHandler:` when set (set before activation).
    /// Runs inside `sessionReachabilityDidChange` when `isReachable` is true (set before activation).
    nonisolated(unsafe) var onReachable: ((WCSession) -> Void)?
    nonisolated(unsafe) var onMessageWithReply: ((WCSession, [String: Any], @escaping ([String: Any]) -> Void) -> Void)?

    init(callDelay: Double = 0, replyWith: (@Sendable ([String: Any]) -> [String: Any])? = nil) {
        self.callDelay = callDelay
        self.replyWith = replyWith
    }

    /// Marks a delegate call or handler as running (for `callDelay`), noting any overlap.
    func enter(_ name: String) {
        order.withLock { $0.append(name) }
        if Thread.isMainThread { onMainThread.withLock { $0 = true } }
        let n = inside.withLock { n in
            n += 1
            return n
        }
        if n > 1 { overlapped.withLock { $0 = true } }
        if callDelay > 0 { Thread.sleep(forTimeInterval: callDelay) }
        inside.withLock { $0 -= 1 }
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        enter("activation")
        let code = error.map { ($0 as NSError).code }
        activations.withLock {
            $0.append(Activation(state: activationState, error: code, stateRead: session.activationState,
                pairedRead: session.isPaired, onMain: Thread.isMainThread))
        }
    }
    func sessionReachabilityDidChange(_ session: WCSession) {
        enter("reachability")
        let reachable = session.isReachable
        reachability.withLock { $0.append(reachable) }
        if reachable { onReachable?(session) }
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        enter("message")
        let reachable = session.isReachable
        reachableDuringMessage.withLock { $0.append(reachable) }
        messages.withLock { $0.append(Box(message)) }
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        enter("messageWithReply")
        messages.withLock { $0.append(Box(message)) }
        if let onMessageWithReply {
            onMessageWithReply(session, message, replyHandler)
        } else {
            replyHandler(replyWith?(message) ?? ["echo": message["n"] ?? "none"])
        }
    }
    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        enter("messageData")
        let count = messageData.count
        self.messageData.withLock { $0.append(count) }
        replyHandler(Data(messageData.reversed()))
    }
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {
        enter("userInfo")
        userInfos.withLock { $0.append(Box(userInfo)) }
    }
    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        enter("didFinish")
        let outstanding = session.outstandingUserInfoTransfers.contains(userInfoTransfer)
        finished.withLock {
            $0.append(Finished(transfer: userInfoTransfer, error: error.map { ($0 as NSError).code },
                transferringDuringCall: userInfoTransfer.isTransferring, outstandingDuringCall: outstanding))
        }
    }
    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        enter("context")
    }
}

extension WCHarness {
    /// A harness with ``ProbeDelegate``s, activated and reachable both ways (the callers keep
    /// the delegates: a session holds its delegate weakly).
    static func probes(phone: ProbeDelegate, watch: ProbeDelegate) async throws -> WCHarness {
        let h = try await WCHarness.start(activate: false)
        h.phone.delegate = phone
        h.watch.delegate = watch
        h.phone.activate()
        h.watch.activate()
        try await eventually(10, "activation") {
            phone.activated && watch.activated
        }
        try await eventually(10, "reachable both ways") { h.phone.isReachable && h.watch.isReachable }
        return h
    }
}
