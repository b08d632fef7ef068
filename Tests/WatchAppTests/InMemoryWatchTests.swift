import Foundation
import GitExplorerPayloads
import InMemoryRelay
import RelayClient
import RelayProtocol
import TestClock
import TestSupport
import Testing

@testable import WatchApp

/// The headless watch on an in-memory session: the relay core and both session cores in one
/// actor, a manual widget clock — no sockets, no relay process, no sleeping on widget time.
@Suite(.timeLimit(.minutes(2)))
struct InMemoryWatchTests {
    struct Harness {
        let relay: InMemoryRelay
        let phone: SessionClient
        let watch: HeadlessWatch
        let clock: ManualClock
        let events: EventBuffer
        let directory: TemporaryDirectory

        static func start(wrap: (SessionClient) -> SessionClient = { $0 }) async throws -> Harness {
            let relay = InMemoryRelay()
            let directory = TemporaryDirectory()
            let phone = await relay.session(role: .phone, deviceName: "iPhone")
            try await phone.activate()
            let clock = ManualClock(Fx.t0)
            let watch = try HeadlessWatch(
                relayURL: "memory", stateDirectory: directory.path("watch"), clock: .manual(clock),
                session: wrap(await relay.session(role: .watch, deviceName: "Apple Watch")))
            let events = EventBuffer(watch.events)
            try await watch.start()
            try await watch.pair(code: try await phone.beginPairing().code)
            return Harness(relay: relay, phone: phone, watch: watch, clock: clock, events: events, directory: directory)
        }

        func stop() async {
            await watch.stop()
            await phone.close()
        }

        /// Moves the clock past the debounce; returns the four widgets' reloads.
        func reloadsAfterTheDebounce() async throws -> [WidgetReload] {
            clock.advance(by: .seconds(1))
            return try await events.collect(4) { if case .widget(let w) = $0 { w.reload } else { nil } }
        }
    }

    @Test func pairReturnsAfterThePairedEventIsPublished() async throws {
        let h = try await Harness.start()
        let paired = try await h.events.collect(1) { if case .paired(let peer) = $0 { peer } else { nil } }
        #expect(paired == ["iPhone"])
        await h.stop()
    }

    @Test func aSnapshotIsStoredAckedAndReloadsTheWidgetsWhenTheClockMoves() async throws {
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.watch.caughtUp()
        #expect(await h.watch.current.favorites.snapshot?.revision == 1)
        #expect(await h.watch.session.status().handledEverythingReceived)
        // The widget timer wakes on the manual clock: no flush call, no polling.
        let reloads = try await h.reloadsAfterTheDebounce()
        #expect(reloads.allSatisfy { $0.reasons.contains(.snapshotReceived) })
        await h.stop()
    }

    @Test func caughtUpWaitsForWhatTheRelayHeldWhileTheWatchWasAway() async throws {
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, [Fx.octocat]).payload)
        try await h.watch.caughtUp()
        await h.watch.stop()
        try await h.phone.updateApplicationContext(Fx.snapshot(2, Fx.three).payload)
        // The watch comes back with its stored revision 1; the relay holds revision 2.
        let again = try HeadlessWatch(
            relayURL: "memory", stateDirectory: h.directory.path("watch"), clock: .manual(h.clock),
            session: await h.relay.session(role: .watch, deviceName: "Apple Watch"))
        #expect(await again.current.favorites.snapshot?.revision == 1)
        try await again.start()
        try await again.caughtUp()
        #expect(await again.current.favorites.snapshot?.revision == 2)
        await again.stop()
        await h.phone.close()
    }

    /// A snapshot the phone cut to fit the relay's limit (`omitted`, PROTOCOL.md §12.2): the
    /// widgets count the phone's favorites, the list says it goes on on the phone, a snapshot
    /// that changes only `omitted` reloads the widgets, and a restart brings it back from
    /// `watch.db`.
    @Test func aCutSnapshotIsCountedReloadsWhenOnlyItsOmittedChangesAndSurvivesARestart() async throws {
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three, omitted: 9).payload)
        try await h.watch.caughtUp()
        // The event says how many the phone left out.
        let stored = try await h.events.collect(1) { if case .snapshotStored(1, _, let omitted) = $0 { omitted } else { nil } }
        #expect(stored == [9])
        _ = try await h.reloadsAfterTheDebounce()
        #expect(await h.watch.current.widgets.widget("face.circular")?.content.lines == ["12"])
        #expect(await h.watch.current.favorites.omitted == 9)
        // The phone's list grew past what fits: the same users, one more left out.
        try await h.phone.updateApplicationContext(Fx.snapshot(2, Fx.three, omitted: 10).payload)
        try await h.watch.caughtUp()
        let reloads = try await h.reloadsAfterTheDebounce()
        #expect(reloads.allSatisfy { $0.reasons.contains(.snapshotReceived) })
        #expect(await h.watch.current.widgets.widget("face.circular")?.content.lines == ["13"])
        #expect(TextRenderer.render(await h.watch.current.favorites).contains("+10 more on iPhone"))
        await h.watch.stop()

        let again = try HeadlessWatch(
            relayURL: "memory", stateDirectory: h.directory.path("watch"), clock: .manual(h.clock),
            session: await h.relay.session(role: .watch, deviceName: "Apple Watch"))
        #expect(await again.current.favorites.omitted == 10)
        h.clock.advance(by: .seconds(1))
        await again.flush()
        #expect(await again.current.widgets.widget("face.circular")?.content.lines == ["13"])
        // The whole list at last: nothing is left on the phone only, also in the store.
        try await again.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(3, Fx.three).payload)
        try await again.caughtUp()
        h.clock.advance(by: .seconds(1))
        await again.flush()
        #expect(await again.current.widgets.widget("face.circular")?.content.lines == ["3"])
        #expect(await again.current.favorites.omittedNote == nil)
        await again.stop()
        #expect(try WatchStore(directory: h.directory.path("watch")).snapshot()?.0.omitted == 0)
        await h.phone.close()
    }

    @Test func aDeleteGoesToThePhoneAsUserInfo() async throws {
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.watch.caughtUp()
        try await h.watch.delete("torvalds")
        let d = try await withTimeout(10, "the delete at the phone") {
            for await event in h.phone.events { if case .userInfo(let d) = event { return d } }
            throw TestFailure("the event stream ended")
        }
        #expect(d.payload.kind == "favorites.delete")
        #expect(await h.watch.current.favorites.pendingDeletes == ["torvalds"])
        await h.stop()
    }

    @Test func aSnapshotThatOvertakesTheDeletesAcceptedStillAnnouncesAcceptedFirstAndLeavesNothingPending()
        async throws
    {
        // The relay's `accepted` for the delete is held back until the test lets it through; the
        // phone's snapshot without the user arrives first (as it can when both race to the actor).
        let (held, release) = AsyncStream.makeStream(of: Void.self)
        let (sent, sentSignal) = AsyncStream.makeStream(of: Void.self)
        let h = try await Harness.start { inner in
            var client = inner
            client.transferUserInfo = { payload in
                let transfer = try await inner.transferUserInfo(payload)
                sentSignal.yield()
                for await _ in held { break }
                return transfer
            }
            return client
        }
        try await h.phone.updateApplicationContext(Fx.snapshot(1, Fx.three).payload)
        try await h.watch.caughtUp()
        let deleting = Task { try await h.watch.delete("torvalds") }
        for await _ in sent { break }
        try await h.phone.updateApplicationContext(Fx.snapshot(2, [Fx.octocat, Fx.gaearon]).payload)
        try await h.watch.caughtUp()
        release.yield()
        try await deleting.value
        let order = try await h.events.collect(2) { event -> String? in
            switch event {
            case .deleteAccepted(let login): "accepted \(login)"
            case .deleteCompleted(let login): "completed \(login)"
            default: nil
            }
        }
        #expect(order == ["accepted torvalds", "completed torvalds"])
        #expect(await h.watch.current.favorites.pendingDeletes.isEmpty)
        // The late `accepted` did not write the finished delete back as pending.
        #expect(try WatchStore(directory: h.directory.path("watch")).pendingDeletes().isEmpty)
        await h.stop()
    }

    @Test func aSnapshotSentAsAComplicationTransferIsStoredAndShown() async throws {
        // PROTOCOL §12.2: the phone MAY send a snapshot by `complication` (it arrives as a
        // userInfo delivery); the watch handles it the same way whatever the mode.
        let h = try await Harness.start()
        _ = try await h.phone.transferCurrentComplicationUserInfo(Fx.snapshot(1, Fx.three).payload)
        try await h.watch.caughtUp()
        #expect(await h.watch.current.favorites.snapshot?.revision == 1)
        #expect(try WatchStore(directory: h.directory.path("watch")).snapshot()?.0.revision == 1)
        let reloads = try await h.reloadsAfterTheDebounce()
        #expect(reloads.allSatisfy { $0.reasons.contains(.snapshotReceived) })
        await h.stop()
    }

    @Test func aSnapshotNotNewerThanTheOneShownIsNotStoredEither() async throws {
        // The watch ignores a revision not above the one it holds (PROTOCOL §12.2): its store
        // must too, or a restart brings back the older list the screen never showed.
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(2, Fx.three).payload)
        try await h.watch.caughtUp()
        try await h.phone.updateApplicationContext(Fx.snapshot(1, [Fx.dongik]).payload)
        try await h.watch.caughtUp()
        #expect(await h.watch.current.favorites.snapshot?.revision == 2)
        #expect(try WatchStore(directory: h.directory.path("watch")).snapshot()?.0.revision == 2)
        await h.watch.stop()
        let again = try HeadlessWatch(
            relayURL: "memory", stateDirectory: h.directory.path("watch"), clock: .manual(h.clock),
            session: await h.relay.session(role: .watch, deviceName: "Apple Watch"))
        #expect(await again.current.favorites.snapshot?.revision == 2)
        await h.phone.close()
    }

    @Test func aReplyForAnotherLoginFailsTheScreenInsteadOfLeavingItLoading() async throws {
        // `open` returns once the screen is loaded, failed or offline: a phone whose reply to
        // this very request names another user must not leave it on "Loading…".
        let h = try await Harness.start()
        let answering = Task {
            for await event in h.phone.events {
                guard case .message(let d) = event else { continue }
                try? await h.phone.reply(d, ReposReply(login: "torvalds", repos: [], fetchedAt: Fx.t0).payload)
            }
        }
        let screen = await h.watch.open("octocat")
        guard case .failed(.githubUnavailable, _)? = screen?.phase else {
            throw TestFailure("expected failed, got \(String(describing: screen?.phase))")
        }
        #expect(await h.watch.current.repoCache["torvalds"] == nil, "nobody asked for torvalds' list")
        answering.cancel()
        await h.stop()
    }

    @Test func aReplyTheWatchCannotReadFailsTheScreenAndSaysWhyInsteadOfCallingThePhoneUnreachable() async throws {
        // The phone answered: a reply that does not decode (here a repos list that is not an
        // array) was caught with the link's errors and shown as "Phone not reachable".
        let h = try await Harness.start()
        let answering = Task {
            for await event in h.phone.events {
                guard case .message(let d) = event else { continue }
                try? await h.phone.reply(d, Payload(kind: "profile.repos", ["login": .string("octocat"), "repos": .string("none")]))
            }
        }
        let screen = await h.watch.open("octocat")
        guard case .failed(.githubUnavailable, _)? = screen?.phase else {
            throw TestFailure("expected failed, got \(String(describing: screen?.phase))")
        }
        let said = try await h.events.collect(1) { if case .error(let e) = $0 { e } else { nil } }
        #expect(said.first?.message.hasPrefix("not a valid reply to open octocat") == true, "\(said)")
        #expect(said.first?.source == "phone" && said.first?.code == "invalid_payload", "\(said)")
        answering.cancel()
        await h.stop()
    }

    @Test func aWatchPairedWithANewPhoneShowsItsFavoritesWhateverTheirRevision() async throws {
        // A new phone's revisions start again at 1: compared with the old pair's revision 5,
        // the watch ignored its snapshots and kept showing the old phone's favorites.
        let h = try await Harness.start()
        try await h.phone.updateApplicationContext(Fx.snapshot(5, Fx.three).payload)
        try await h.watch.caughtUp()
        await h.stop()
        let phone = await h.relay.session(role: .phone, deviceName: "New iPhone")
        try await phone.activate()
        let watch = try HeadlessWatch(
            relayURL: "memory", stateDirectory: h.directory.path("watch"), clock: .manual(h.clock),
            session: await h.relay.session(role: .watch, deviceName: "Apple Watch"))
        try await watch.start()
        try await watch.pair(code: try await phone.beginPairing().code)
        try await phone.updateApplicationContext(Fx.snapshot(2, [Fx.dongik]).payload)
        try await watch.caughtUp()
        #expect(await watch.current.favorites.snapshot?.users == [Fx.dongik])
        // Within the new pair, revisions count again: an older one is ignored.
        _ = try await phone.transferCurrentComplicationUserInfo(Fx.snapshot(1, Fx.three).payload)
        try await watch.caughtUp()
        #expect(await watch.current.favorites.snapshot?.revision == 2)
        await watch.stop()
        let again = try HeadlessWatch(
            relayURL: "memory", stateDirectory: h.directory.path("watch"), clock: .manual(h.clock),
            session: await h.relay.session(role: .watch, deviceName: "Apple Watch"))
        #expect(await again.current.favorites.snapshot?.users == [Fx.dongik], "stored, not only shown")
        await phone.close()
    }
}
