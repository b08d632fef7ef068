import Foundation
import GitExplorerPayloads
import Primitives
import RelayClient
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// RelaySession against the real relay over loopback.
@Suite(.timeLimit(.minutes(5)))
struct RelaySessionTests {
    @Test func pairingByCodeActivatesBothSides() async throws {
        let h = try await Harness.start()
        let (phonePaired, watchPaired) = (await h.phone.isPaired, await h.watch.isPaired)
        #expect(phonePaired && watchPaired)
        let (phonePeer, watchPeer) = (await h.phone.peerName, await h.watch.peerName)
        #expect(phonePeer == "Watch" && watchPeer == "Phone")
        await h.stop()
    }

    @Test func messageWithReplyRoundTrips() async throws {
        let h = try await Harness.start()
        let responder = Task {
            for await event in h.phone.events {
                if case .message(let d) = event, d.wantsReply {
                    try await h.phone.reply(to: d, with: Payload(kind: "pong", ["n": d.payload.members["n"] ?? nil]))
                    return
                }
            }
        }
        let answer = try await h.watch.sendMessage(Payload(kind: "ping", ["n": 7]))
        #expect(answer?.kind == "pong" && answer?.members["n"] == 7)
        try await responder.value
        await h.stop()
    }

    /// A second session on the watch's state directory (a second process, `pair` run again)
    /// replaces the first: the first hears `error(replaced)`, not `disconnected` (which promises
    /// a reconnection that never comes), and stays down.
    @Test func aSessionAnotherProcessReplacedSaysReplacedNotDisconnected() async throws {
        let h = try await Harness.start()
        let second = try RelaySession(configuration: h.watchConfig)
        try await second.activate()
        let event = try await h.next(h.watch) { event -> SessionEvent? in
            switch event {
            case .disconnected, .error: event
            default: nil
            }
        }
        #expect(event == .error(.replaced))
        #expect(RelaySessionError.replaced.code == "replaced")
        // Down for good: activating it again fails at once instead of connecting.
        await #expect(throws: RelaySessionError.notActivated) { try await h.watch.activate() }
        await second.close()
        await h.stop()
    }

    @Test func aBackgroundWatchIsNotReachable() async throws {
        let h = try await Harness.start()
        await h.watch.setForeground(false)
        try await eventually { await !h.phone.isReachable }
        await #expect(throws: RelaySessionError.notReachable) {
            _ = try await h.phone.sendMessage(Payload(kind: "ping"))
        }
        await h.stop()
    }

    @Test func applicationContextArrivesAndIsRememberedAfterAcknowledge() async throws {
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(FavoritesSnapshot(revision: 1, users: []).payload)
        let d = try await h.next(h.watch) { if case .applicationContext(let d) = $0 { d } else { nil } }
        #expect(d.payload.kind == "favorites.snapshot")
        await h.watch.acknowledge(d)
        #expect(await h.watch.receivedApplicationContext == d.payload)
        #expect(await h.phone.applicationContext == d.payload)
        await h.stop()
    }

    @Test func transferUserInfoReturnsOnAcceptAndFinishesOnAck() async throws {
        let h = try await Harness.start()
        let t = try await h.watch.transferUserInfo(LoginCommand.favoritesDelete("octocat").payload)
        #expect(await h.watch.outstandingUserInfoTransfers.map(\.id) == [t.id])
        let d = try await h.next(h.phone) { if case .userInfo(let d) = $0 { d } else { nil } }
        #expect(d.id == t.id)
        await h.phone.acknowledge(d)
        let finished = try await h.next(h.watch) { if case .userInfoTransferFinished(let id) = $0 { id } else { nil } }
        #expect(finished == t.id)
        #expect(await h.watch.outstandingUserInfoTransfers.isEmpty)
        await h.stop()
    }

    @Test func complicationTransfersCountDown() async throws {
        let h = try await Harness.start()
        let t = try await h.phone.transferCurrentComplicationUserInfo(Payload(kind: "complication"))
        #expect(t.isCurrentComplicationInfo && !t.fellBackToUserInfo)
        #expect(await h.phone.remainingComplicationUserInfoTransfers == 49)
        await #expect(throws: RelaySessionError.self) {
            try await h.watch.transferCurrentComplicationUserInfo(Payload(kind: "complication"))
        }
        await h.stop()
    }

    @Test func aFailedSaveIsNeverAckedTheItemComesAgainAndTheAppHearsIt() async throws {
        let failing = LockedState(false)
        let h = try await Harness.start { config in
            try RelaySession(
                configuration: config, store: FailingSessionStore(directory: config.stateDirectory, failing: failing))
        }
        let t = try await h.phone.transferUserInfo(LoginCommand.favoritesDelete("octocat").payload)
        failing.withLock { $0 = true }
        let events = h.watch.events
        let first = try await withTimeout(10, "the first delivery") { () async throws -> Delivery in
            for await event in events { if case .userInfo(let d) = event { return d } }
            throw TestFailure("the event stream ended")
        }
        #expect(first.id == t.id)
        await h.watch.acknowledge(first)
        // The save of lastSeq failed: the app hears it, nothing is acked, and after the
        // session's reconnect the relay delivers the same item again.
        let (error, again) = try await withTimeout(10, "the error and the redelivery") {
            () async throws -> (RelaySessionError, Delivery) in
            var error: RelaySessionError?
            for await event in events {
                if case .error(let e) = event { error = e }
                if case .userInfo(let d) = event, let error { return (error, d) }
            }
            throw TestFailure("the event stream ended")
        }
        #expect(error == .persistFailed("injected write failure"))
        #expect(again.id == t.id && again.seq == first.seq)
        #expect(await h.phone.outstandingUserInfoTransfers.map(\.id) == [t.id])
        failing.withLock { $0 = false }
        await h.watch.acknowledge(again)
        let finished = try await h.next(h.phone) { if case .userInfoTransferFinished(let id) = $0 { id } else { nil } }
        #expect(finished == t.id)
        #expect(await h.watch.lastSeq == again.seq)
        await h.stop()
    }

    @Test func oversizePayloadsAreRefusedBeforeSending() async throws {
        let h = try await Harness.start()
        let big = Payload(kind: "big", ["s": .string(String(repeating: "x", count: 70_000))])
        await #expect(throws: RelaySessionError.payloadTooLarge(size: big.encodedSize, limit: 65536)) {
            try await h.watch.transferUserInfo(big)
        }
        await h.stop()
    }

    @Test func aPayloadTooDeepForAFrameFailsAtTheCallAndOneAtTheLimitIsDelivered() async throws {
        let h = try await Harness.start()
        // 64 levels with the payload's own: the frame would nest 65, which the relay refuses
        // as bad_json without naming the request (so the call would wait for its timeout).
        let tooDeep = Payload.nested(depth: 64)
        await #expect(throws: RelaySessionError.payloadTooDeep(depth: 64, limit: 63)) {
            try await h.phone.transferUserInfo(tooDeep)
        }
        // 63 levels: the frame nests exactly 64, which the relay accepts and delivers as sent.
        let atLimit = Payload.nested(depth: 63)
        try await h.phone.transferUserInfo(atLimit)
        let delivered = try await h.next(h.watch) { if case .userInfo(let d) = $0 { d } else { nil } }
        #expect(delivered.payload == atLimit)
        #expect(delivered.payload.nestingDepth == 63)
        await h.stop()
    }

    @Test func aContextAtTheDepthLimitStillComesInTheWelcomeOfAReconnectingWatch() async throws {
        // A welcome carries the context as a deliver object: the payload two levels down, so
        // a 63-level context makes a 65-level welcome. Read with a client frame's 64 levels, it
        // failed every later activation of the watch (the review found it).
        let h = try await Harness.start()
        let atLimit = Payload.nested(depth: Payload.maxNestingDepth)
        try await h.phone.updateApplicationContext(atLimit)
        _ = try await h.next(h.watch) { if case .applicationContext(let d) = $0 { d } else { nil } }
        await h.watch.close()
        let again = try RelaySession(configuration: h.watchConfig)
        try await again.activate()
        // Not acked, so it also comes again as a deliver (§5.2).
        let redelivered = try await h.next(again) { if case .applicationContext(let d) = $0 { d } else { nil } }
        #expect(redelivered.payload == atLimit)
        await again.close()
        await h.stop()
    }

    @Test func anOutstandingTransferAtTheDepthLimitSurvivesARestartOfTheSender() async throws {
        // The session's row of outstanding transfers puts each payload two levels down; read
        // with 64 levels, a 63-level userInfo left outstanding made the phone's state directory
        // unable to start a session.
        let h = try await Harness.start()
        await h.watch.close()
        let atLimit = Payload.nested(depth: Payload.maxNestingDepth)
        _ = try await h.phone.transferUserInfo(atLimit)
        await h.phone.close()
        let phoneConfig = RelaySessionConfiguration(
            url: h.relay.url, role: .phone, deviceName: "Phone", stateDirectory: h.directory.path("phone"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let phone = try RelaySession(configuration: phoneConfig)
        #expect(await phone.outstandingUserInfoTransfers.map(\.payload) == [atLimit])
        await phone.close()
        await h.relay.shutdown()
    }

    @Test func aRestartedAppComesBackPairedFromItsStateDirectory() async throws {
        let h = try await Harness.start()
        await h.watch.close()
        let again = try RelaySession(configuration: h.watchConfig)
        try await again.activate()
        #expect(await again.isPaired)
        try await eventually { await again.isReachable }
        await again.close()
        await h.stop()
    }

    @Test func theSessionReconnectsAfterARelayRestartAndDeliversWhatWaited() async throws {
        let h = try await Harness.start()
        let port = h.relay.port
        await h.relay.shutdown()
        // While the relay is down, a transfer waits (honestly) for the relay to accept it.
        let sent = Task { try await h.watch.transferUserInfo(LoginCommand.favoritesDelete("mattt").payload) }
        try await Task.sleep(for: .milliseconds(200))
        var c = RelayServerConfiguration()
        c.port = port
        c.databasePath = h.directory.path("relay.db")
        let relay2 = try await RelayServer.start(c, log: .silent)
        let t = try await sent.value
        let d = try await h.next(h.phone) { if case .userInfo(let d) = $0 { d } else { nil } }
        #expect(d.id == t.id)
        await h.phone.close()
        await h.watch.close()
        await relay2.shutdown()
    }
}

// MARK: - Helpers

/// The real SQLite session store, failing every write while `failing` is on.
final class FailingSessionStore: SessionPersistence {
    let inner: SQLiteSessionStore
    let failing: LockedState<Bool>

    init(directory: String, failing: LockedState<Bool>) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        inner = try SQLiteSessionStore(directory: directory)
        self.failing = failing
    }

    func load() throws -> SessionSnapshot { try inner.load() }

    func save(_ records: [SessionRecord]) throws {
        if failing.withLock({ $0 }) { throw TestFailure("injected write failure") }
        try inner.save(records)
    }
}

struct Harness {
    let relay: RelayServer
    let phone: RelaySession
    let watch: RelaySession
    let directory: TemporaryDirectory
    let watchConfig: RelaySessionConfiguration

    static func start(
        makeWatch: (RelaySessionConfiguration) throws -> RelaySession = { try RelaySession(configuration: $0) }
    ) async throws -> Harness {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        // Request (and welcome) timeouts scale like the tests' own waits: under ThreadSanitizer
        // on two loaded cores a relay's welcome can take longer than the product's 10 s.
        let phoneConfig = RelaySessionConfiguration(
            url: relay.url, role: .phone, deviceName: "Phone", stateDirectory: directory.path("phone"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let watchConfig = RelaySessionConfiguration(
            url: relay.url, role: .watch, deviceName: "Watch", stateDirectory: directory.path("watch"),
            requestTimeoutSeconds: 10 * timeoutScale)
        let phone = try RelaySession(configuration: phoneConfig)
        let watch = try makeWatch(watchConfig)
        try await phone.activate()
        try await watch.activate()
        let code = try await phone.beginPairing()
        try await watch.pair(code: code.code)
        try await eventually {
            let (paired, reachable) = (await phone.isPaired, await phone.isReachable)
            return paired && reachable
        }
        return Harness(relay: relay, phone: phone, watch: watch, directory: directory, watchConfig: watchConfig)
    }

    /// The first event of `session` that `match` picks.
    func next<T: Sendable>(_ session: RelaySession, _ match: @escaping @Sendable (SessionEvent) -> T?) async throws -> T {
        try await withTimeout(5, "an event of the session") {
            for await event in session.events {
                if let t = match(event) { return t }
            }
            throw TestFailure("the event stream ended")
        }
    }

    func stop() async {
        await phone.close()
        await watch.close()
        await relay.shutdown()
    }
}
