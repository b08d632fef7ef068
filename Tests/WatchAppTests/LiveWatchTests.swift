import Foundation
import GitExplorerPayloads
import RelayClient
import RelayProtocol
import RelayServer
import SQLite
import TestClock
import TestSupport
import Testing

@testable import WatchApp
import WidgetKit

/// The headless watch with the real relay over loopback, a phone session, and a manual
/// widget clock (no sleeping on widget time).
@Suite(.timeLimit(.minutes(5)))
struct LiveWatchTests {
    @Test func aStoredSnapshotReloadsEveryWidgetWithTheNewFavorites() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        h.clock.advance(by: .seconds(1))
        let reloads = try await h.reloads(4)
        #expect(Set(reloads.map(\.widgetID)) == ["face.circular", "face.corner", "face.inline", "stack.rectangular"])
        #expect(reloads.allSatisfy { $0.reasons.contains(.snapshotReceived) })
        let rect = try #require(reloads.first { $0.widgetID == "stack.rectangular" })
        #expect(rect.entries.compactMap(\.user?.login) == ["octocat", "torvalds", "gaearon", "octocat"])
        // The latency is the real transit, then the manual clock's second: not the gap between
        // the manual clock (months back) and the relay's wall clock (it was about -190 days).
        let latencies = reloads.map { $0.latencyMilliseconds ?? -1 }
        #expect(latencies.allSatisfy { (1000..<61_000).contains($0) }, "\(latencies)")
        await h.stop()
    }

    /// A snapshot the watch cannot store (another writer holds `watch.db` past the busy
    /// timeout) is handed back: it comes again and is stored once it can be.
    @Test func aSnapshotTheWatchCouldNotStoreComesAgainAndIsStored() async throws {
        let h = try await LiveHarness.start()
        let blocker = try SQLiteDatabase(path: h.directory.path("watch") + "/watch.db")
        try blocker.execute("BEGIN EXCLUSIVE")
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        // After the store's 5 s busy timeout.
        let said = try await h.events.collect(1, within: 30) {
            if case .error(let e) = $0, e.message.hasPrefix("could not store the favorites snapshot") { e } else { nil }
        }
        #expect(said.first?.source == "store" && said.first?.code == "store_failed", "\(said)")
        try blocker.execute("COMMIT")
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        await h.stop()
    }

    /// A context that is not a valid snapshot is reported and acknowledged: kept unacknowledged,
    /// it held back the ack of everything after it (the phone never heard a later transfer end).
    @Test func anInvalidSnapshotIsReportedAndDoesNotHoldLaterAcksBack() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Payload(kind: FavoritesSnapshot.kind.rawValue, ["revision": "one"]))
        try await h.expect {
            if case .error(let e) = $0 { e.message.hasPrefix("not a valid favorites snapshot") && e.code == "invalid_payload" } else { false }
        }
        let transfer = try await h.phone.transferUserInfo(Payload(kind: "ping"))
        try await withTimeout(10, "the transfer's end") {
            for await event in h.phone.events {
                if case .userInfoTransferFinished(transfer.id) = event { return }
            }
        }
        await h.stop()
    }

    @Test func rapidChangesAreCoalescedIntoOneReloadPerWidget() async throws {
        let h = try await LiveHarness.start()
        for r in 1...3 {
            try await h.phone.updateApplicationContext(Fx.snapshot(Int64(r), Array(Fx.three.prefix(r))).payload)
        }
        try await h.expect { if case .snapshotStored(3, _, _) = $0 { true } else { false } }
        h.clock.advance(by: .seconds(1))
        let reloads = try await h.reloads(4)
        #expect(reloads.count == 4)
        let circular = try #require(reloads.first { $0.widgetID == "face.circular" })
        #expect(circular.entries.first?.favoritesCount == 3)
        try await h.expectNoReload(within: .milliseconds(300))
        await h.stop()
    }

    @Test func aSpentBudgetLeavesTheWidgetStaleUntilTheWindowRolls() async throws {
        // In the background: a foreground watch app reloads for free.
        let h = try await LiveHarness.start(rules: WidgetRules(smartStackBudget: 1, watchFaceBudget: 1), foreground: false)
        // The harness's first reload was free; this one spends the single budget slot.
        try await h.phone.updateApplicationContext(Fx.snapshot(1, [Fx.octocat]).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        h.clock.advance(by: .seconds(1))
        _ = try await h.reloads(4)
        // No budget left: the next change leaves every widget stale, showing the old entries.
        try await h.phone.updateApplicationContext(Fx.snapshot(2, Fx.three).payload)
        try await h.expect { if case .snapshotStored(2, _, _) = $0 { true } else { false } }
        h.clock.advance(by: .seconds(1))
        let stale = try await h.staleReports(4)
        #expect(stale.count == 4)
        #expect(await h.watch.current.widgets.widget("face.circular")?.isStale == true)
        #expect(await h.watch.current.widgets.widget("face.circular")?.displayedEntry?.favoritesCount == 1)
        h.clock.advance(by: .seconds(86_400))
        let recovered = try await h.reloads(4)
        #expect(recovered.first { $0.widgetID == "face.circular" }?.entries.first?.favoritesCount == 3)
        await h.stop()
    }

    /// A delete made while the relay is down past the request timeout fails to the caller but
    /// stays pending on the watch (the row stays struck through). It must reach the phone when
    /// the watch connects again, as a transferUserInfo would, not only at the next app start.
    @Test func aDeleteTheRelayNeverAcceptedGoesOnceTheWatchReconnects() async throws {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path)
        let port = relay.port
        let phone = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: directory.path("phone")))
        try await phone.activate()
        let session = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay.url, role: .watch, deviceName: "Apple Watch",
                stateDirectory: HeadlessWatch.sessionDirectory(of: directory.path("watch")),
                backoff: [0.05, 0.1], requestTimeoutSeconds: 2 * timeoutScale))
        let watch = try HeadlessWatch(
            relayURL: relay.url, stateDirectory: directory.path("watch"), clock: .manual(ManualClock(Fx.t0)),
            session: .live(session))
        let events = EventBuffer(watch.events)
        try await watch.start()
        try await watch.pair(code: try await phone.beginPairing().code)
        try await eventually { await phone.isPaired }  // the phone learns of it by its own frame
        try await phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        _ = try await events.collect(1) { if case .snapshotStored(1, _, _) = $0 { true } else { nil } }

        await phone.close()
        await relay.shutdown()
        await #expect(throws: (any Error).self) { try await watch.delete("torvalds") }
        #expect(await watch.current.favorites.isPendingDelete("torvalds"))

        var c = RelayServerConfiguration()
        c.port = port
        c.databasePath = directory.path("relay.db")
        let relay2 = try await RelayServer.start(c, log: .silent)
        // A relay restart, a reconnect and the resend's `accepted`: scaled, as under ThreadSanitizer.
        _ = try await events.collect(1, within: 5 * timeoutScale) { if case .deleteAccepted("torvalds") = $0 { true } else { nil } }
        let phone2 = try RelaySession(
            configuration: RelaySessionConfiguration(
                url: relay2.url, role: .phone, deviceName: "iPhone", stateDirectory: directory.path("phone")))
        try await phone2.activate()
        let d = try await withTimeout(10 * timeoutScale, "the delete by userInfo") {
            for await e in phone2.events { if case .userInfo(let d) = e { return d } }
            throw TestFailure("no userInfo")
        }
        #expect(try LoginCommand(json: d.payload.json) == .favoritesDelete("torvalds"))
        await phone2.acknowledge(d)
        await watch.stop()
        await phone2.close()
        await relay2.shutdown()
    }

    @Test func aDeletedSelectedUserFallsBackToTheFirstFavorite() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        try await h.watch.select("torvalds")
        h.clock.advance(by: .seconds(1))
        _ = try await h.reloads(4)
        try await h.phone.updateApplicationContext(Fx.snapshot(2, [Fx.octocat, Fx.gaearon]).payload)
        try await h.expect { if case .snapshotStored(2, _, _) = $0 { true } else { false } }
        h.clock.advance(by: .seconds(1))
        let rect = try #require(try await h.reloads(4).first { $0.widgetID == "stack.rectangular" })
        #expect(rect.entries.first?.user?.login == "octocat")
        #expect(rect.entries.first?.selectionFellBack == true)
        await h.stop()
    }

    @Test func theRepoListReachesLoadedFailedAndOfflineStates() async throws {
        let h = try await LiveHarness.start()
        let answering = Task {
            for await event in h.phone.events {
                guard case .message(let d) = event, let cmd = try? LoginCommand(json: d.payload.json) else { continue }
                let repos = [Fx.repo("hello", stars: 3, updated: "2026-05-01T00:00:00Z"), Fx.repo("linux", stars: 9, updated: "2026-05-02T00:00:00Z")]
                let answer: Payload =
                    switch cmd.login {
                    case "ghost": ReposError(login: "ghost", code: .userNotFound, message: "Not Found").payload
                    case "torvalds":
                        ReposReply(
                            login: "torvalds", repos: repos, fetchedAt: Fx.t0,
                            stale: ReposStaleness(code: .rateLimited, message: "GitHub rate limit exceeded")
                        ).payload
                    default: ReposReply(login: cmd.login, repos: repos, fetchedAt: Fx.t0).payload
                    }
                try? await h.phone.reply(to: d, with: answer)
            }
        }
        let loaded = await h.watch.open("octocat")
        guard case .loaded(let list)? = loaded?.phase else { throw TestFailure("expected loaded, got \(String(describing: loaded?.phase))") }
        #expect(list.repos.map(\.name) == ["linux", "hello"])
        let failed = await h.watch.open("ghost")
        guard case .failed(.userNotFound, _)? = failed?.phase else { throw TestFailure("expected failed") }
        // The phone's older list, answered because GitHub refused it: loaded, marked stale.
        let stale = await h.watch.open("torvalds")
        guard case .loaded(let older)? = stale?.phase else { throw TestFailure("expected loaded, got \(String(describing: stale?.phase))") }
        #expect(older.stale?.code == .rateLimited && older.fetchedAt == Fx.t0)
        #expect(stale?.visibleList?.isStale == true)
        #expect(stale?.statusMessage == "GitHub rate limit reached, try later")
        answering.cancel()
        await h.phone.close()
        try await eventually { await !h.watch.session.status().isReachable }
        let offline = await h.watch.open("octocat")
        #expect(offline?.visibleList?.isStale == true, "the cached list, marked stale")
        await h.stop(phoneClosed: true)
    }

    /// A delete the watch could not write down (another writer holds `watch.db` past the busy
    /// timeout) throws and leaves the user as it was: asked again, it is sent. The user stayed
    /// marked pending, so the second `delete` returned without sending anything, and a restart
    /// forgot the mark.
    @Test func aDeleteTheWatchCouldNotStoreCanBeAskedAgain() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        let blocker = try SQLiteDatabase(path: h.directory.path("watch") + "/watch.db")
        try blocker.execute("BEGIN EXCLUSIVE")
        await #expect(throws: (any Error).self) { try await h.watch.delete("torvalds") }
        #expect(await !h.watch.current.favorites.isPendingDelete("torvalds"))
        try blocker.execute("COMMIT")
        try await h.watch.delete("torvalds")
        try await h.expect { if case .deleteAccepted("torvalds") = $0 { true } else { false } }
        await h.stop()
    }

    @Test func aDeleteWhileThePhoneIsOfflineCompletesWhenItReturns() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        await h.phone.close()
        try await h.watch.delete("torvalds")
        try await h.expect { if case .deleteAccepted("torvalds") = $0 { true } else { false } }
        #expect(await h.watch.current.favorites.isPendingDelete("torvalds"))
        // The phone comes back, takes the delete, and pushes a snapshot without the user.
        let phone = try RelaySession(configuration: h.phoneConfig)
        try await phone.activate()
        let d = try await withTimeout(5, "the delete by userInfo") {
            for await e in phone.events { if case .userInfo(let d) = e { return d } }
            throw TestFailure("no userInfo")
        }
        #expect(try LoginCommand(json: d.payload.json) == .favoritesDelete("torvalds"))
        try await phone.updateApplicationContext(Fx.snapshot(2, [Fx.octocat, Fx.gaearon]).payload)
        await phone.acknowledge(d)
        try await h.expect { if case .deleteCompleted("torvalds") = $0 { true } else { false } }
        #expect(await !h.watch.current.favorites.isPendingDelete("torvalds"))
        await phone.close()
        await h.stop(phoneClosed: true)
    }

    /// The session sits in the state directory itself (where `watchrelay pair` writes it); a
    /// directory whose session an older watch kept in `session/` goes on using that one.
    @Test func theSessionIsKeptInTheStateDirectoryUnlessAnOlderWatchPutItInSession() throws {
        let dir = TemporaryDirectory()
        let older = dir.path("older")
        try FileManager.default.createDirectory(atPath: older + "/session", withIntermediateDirectories: true)
        _ = try SQLiteSessionStore(directory: older + "/session")
        #expect(HeadlessWatch.sessionDirectory(of: older) == older + "/session")
        #expect(HeadlessWatch.sessionDirectory(of: dir.path("new")) == dir.path("new"))
        _ = try SQLiteSessionStore(directory: older)
        #expect(HeadlessWatch.sessionDirectory(of: older) == older, "a session paired there since wins")
    }

    @Test func aRestartedWatchShowsItsStoredFavorites() async throws {
        let h = try await LiveHarness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.expect { if case .snapshotStored(1, _, _) = $0 { true } else { false } }
        await h.watch.stop()
        let again = try HeadlessWatch(relayURL: h.relay.url, stateDirectory: h.directory.path("watch"), clock: .manual(h.clock))
        #expect(await again.current.favorites.users.map(\.login) == ["octocat", "torvalds", "gaearon"])
        try await again.start()
        #expect(await again.session.status().isPaired)
        await again.stop()
        await h.phone.close()
        await h.relay.shutdown()
    }
}

// MARK: - Helpers

/// A relay, a phone session and a headless watch with a manual clock, paired.
struct LiveHarness {
    let relay: RelayServer
    let phone: RelaySession
    let phoneConfig: RelaySessionConfiguration
    let watch: HeadlessWatch
    let clock: ManualClock
    let directory: TemporaryDirectory
    let events: EventBuffer

    static func start(rules: WidgetRules = WidgetRules(), foreground: Bool = true) async throws -> LiveHarness {
        let directory = TemporaryDirectory()
        let relay = try await RelayServer.startForTest(in: directory.path) { $0.relay.limits.replyTimeoutMs = Int(3000 * timeoutScale) }
        let phoneConfig = RelaySessionConfiguration(
            url: relay.url, role: .phone, deviceName: "iPhone", stateDirectory: directory.path("phone"))
        let phone = try RelaySession(configuration: phoneConfig)
        try await phone.activate()
        let clock = ManualClock(Fx.t0)
        // The relay stamps `sentAt` with the wall clock, as `watch --manual-clock` tells its watch.
        let watch = try HeadlessWatch(
            relayURL: relay.url, stateDirectory: directory.path("watch"), foreground: foreground, rules: rules, clock: .manual(clock),
            relayClock: .system)
        let events = EventBuffer(watch.events)
        try await watch.start()
        let code = try await phone.beginPairing()
        try await watch.pair(code: code.code)
        // The first pass places the widgets (free reloads of an empty watch); start clean.
        clock.advance(by: .seconds(1))
        await watch.flush()
        try await Task.sleep(for: .milliseconds(50))
        await events.drain()
        return LiveHarness(
            relay: relay, phone: phone, phoneConfig: phoneConfig, watch: watch, clock: clock, directory: directory, events: events)
    }

    func expect(_ match: @escaping @Sendable (WatchEvent) -> Bool) async throws {
        _ = try await events.collect(1) { match($0) ? $0 : nil }
    }

    func reloads(_ n: Int) async throws -> [WidgetReload] {
        try await events.collect(n) { $0.reload }
    }

    func staleReports(_ n: Int) async throws -> [StaleReport] {
        try await events.collect(n) { if case .widget(let w) = $0 { w.staleReport } else { nil } }
    }

    func expectNoReload(within: Duration) async throws {
        let seconds = Double(within.components.seconds) + Double(within.components.attoseconds) / 1e18
        let got = try? await withTimeout(seconds, "a reload") {
            try await events.collect(1) { $0.reload }
        }
        #expect(got == nil, "no further reload")
    }

    func stop(phoneClosed: Bool = false) async {
        await watch.stop()
        if !phoneClosed { await phone.close() }
        await relay.shutdown()
    }
}

extension WatchEvent {
    var reload: WidgetReload? { if case .widget(let w) = self { w.reload } else { nil } }
}

/// Buffers a watch's events so tests can wait for the next ones that match.
actor EventBuffer {
    private var buffered: [WatchEvent] = []
    private var waiter: CheckedContinuation<Void, Never>?
    private var pump: Task<Void, Never>?

    init(_ stream: AsyncStream<WatchEvent>) {
        pump = nil
        Task { await self.run(stream) }
    }

    private func run(_ stream: AsyncStream<WatchEvent>) async {
        for await e in stream {
            buffered.append(e)
            waiter?.resume()
            waiter = nil
        }
    }

    /// Takes the next `n` events that `pick` maps (skipping others), waiting at most 5 s.
    /// The next `n` events `pick` takes; fails after `seconds` (5 unless given; not scaled).
    func collect<T: Sendable>(
        _ n: Int, within seconds: Double = 5, _ pick: @escaping @Sendable (WatchEvent) -> T?
    ) async throws -> [T] {
        var out: [T] = []
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while out.count < n {
            if !buffered.isEmpty {
                let e = buffered.removeFirst()
                if let t = pick(e) { out.append(t) }
                continue
            }
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out: got \(out.count) of \(n)") }
            try Task.checkCancellation()
            let timer = Task { try? await Task.sleep(for: .milliseconds(20)); self.wake() }
            await withCheckedContinuation { waiter = $0 }
            timer.cancel()
        }
        return out
    }

    /// Forgets what arrived so far.
    func drain() {
        buffered = []
    }

    private func wake() {
        waiter?.resume()
        waiter = nil
    }
}
