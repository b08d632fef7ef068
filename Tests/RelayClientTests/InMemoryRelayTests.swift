import GitExplorerPayloads
import InMemoryRelay
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// Session cores wired straight to the relay core: the whole protocol, no sockets, no sleeping.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryRelayTests {
    /// A phone and a watch, activated and paired.
    static func pair(_ relay: InMemoryRelay) async throws -> (phone: SessionClient, watch: SessionClient) {
        let phone = await relay.session(role: .phone, deviceName: "iPhone")
        let watch = await relay.session(role: .watch, deviceName: "Watch")
        try await phone.activate()
        try await watch.activate()
        let code = try await phone.beginPairing()
        try await watch.pair(code.code)
        return (phone, watch)
    }

    /// The first event of `events` that `match` picks.
    static func next<T: Sendable>(
        _ events: AsyncStream<SessionEvent>, _ match: @escaping @Sendable (SessionEvent) -> T?
    ) async throws -> T {
        try await withTimeout(10, "a session event") {
            for await event in events { if let t = match(event) { return t } }
            throw TestFailure("the event stream ended")
        }
    }

    @Test func pairingThenAContextReachesTheWatchAndIsAcked() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await Self.pair(relay)
        let (phonePaired, watchPaired) = (await phone.status().isPaired, await watch.status().isPaired)
        #expect(phonePaired && watchPaired)
        try await phone.updateApplicationContext(FavoritesSnapshot(revision: 1, users: []).payload)
        let d = try await Self.next(watch.events) { if case .applicationContext(let d) = $0 { d } else { nil } }
        await watch.acknowledge(d)
        #expect(await watch.status().lastSeq == d.seq)
        #expect(await watch.status().handledEverythingReceived)
        await phone.close()
        await watch.close()
    }

    @Test func aMessageWithReplyRoundTrips() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await Self.pair(relay)
        let events = phone.events
        let responder = Task {
            for await event in events {
                if case .message(let d) = event, d.wantsReply {
                    try await phone.reply(d, Payload(kind: "pong"))
                    return
                }
            }
        }
        #expect(try await watch.sendMessage(Payload(kind: "ping"), true)?.kind == "pong")
        try await responder.value
        await phone.close()
        await watch.close()
    }

    @Test func aReplyThatNeverComesTimesOutWhenTimeMoves() async throws {
        let relay = InMemoryRelay()
        let (_, watch) = try await Self.pair(relay)
        let asked = Task { try await watch.sendMessage(Payload(kind: "ping"), true) }
        // Nobody answers; 25 s later (relay reply timeout 10 s) the message has failed.
        try await eventually { await relay.pendingReplyCount() == 1 }
        await relay.advance(by: .seconds(25))
        await #expect(throws: RelaySessionError.self) { try await asked.value }
    }

    @Test func aFailedSaveOnTheWatchIsNotAckedAndTheItemComesAgainAfterTheReconnect() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await Self.pair(relay)
        let t = try await phone.transferUserInfo(LoginCommand.favoritesDelete("octocat").payload)
        let first = try await Self.next(watch.events) { if case .userInfo(let d) = $0 { d } else { nil } }
        await relay.setFailingWrites("Watch", true)
        await watch.acknowledge(first)
        let error = try await Self.next(watch.events) { if case .error(let e) = $0 { e } else { nil } }
        #expect(error == .persistFailed("injected write failure"))
        #expect(await watch.status().lastSeq == 0)
        await relay.setFailingWrites("Watch", false)
        await relay.advance(by: .seconds(2))  // the back-off
        let again = try await Self.next(watch.events) { if case .userInfo(let d) = $0 { d } else { nil } }
        #expect(again.id == t.id)
        await watch.acknowledge(again)
        let done = try await Self.next(phone.events) { if case .userInfoTransferFinished(let id) = $0 { id } else { nil } }
        #expect(done == t.id)
    }

    @Test func aRestartedDeviceResumesPairedFromItsStore() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await Self.pair(relay)
        await watch.close()
        try await phone.updateApplicationContext(FavoritesSnapshot(revision: 2, users: []).payload)
        let again = await relay.session(role: .watch, deviceName: "Watch")
        try await again.activate()
        #expect(await again.status().isPaired)
        let d = try await Self.next(again.events) { if case .applicationContext(let d) = $0 { d } else { nil } }
        #expect(try FavoritesSnapshot(json: d.payload.json).revision == 2)
    }

    @Test func anOfflineWatchGetsWhatWaitedWhenItComesBack() async throws {
        let relay = InMemoryRelay()
        let (phone, watch) = try await Self.pair(relay)
        await relay.setOnline("Watch", false)
        let sent = try await phone.transferUserInfo(Payload(kind: "x"))
        await relay.setOnline("Watch", true)
        await relay.advance(by: .seconds(2))
        let d = try await Self.next(watch.events) { if case .userInfo(let d) = $0 { d } else { nil } }
        #expect(d.id == sent.id)
    }
}
