import Foundation
import GitExplorerPayloads
import PhoneApp
import RelayProtocol
import RelayServer
import TestSupport
import Testing

/// Snapshots against the relay's `contextBytes` (PROTOCOL.md §12.2), over a real relay and the
/// fixture GitHub server serving users whose texts are as long as the GitHub client accepts.
///
/// Before, a snapshot over the limit was refused by the session (`payloadTooLarge`) on every
/// change and activation: `add` answered `queued` as if the phone were offline, the error said
/// only `relay_error`, and the watch stayed on its older list (41 of 45 such favorites at the
/// default 262,144 bytes) with nothing in the status saying why.
@Suite(.timeLimit(.minutes(5)))
struct SnapshotLimitTests {
    /// A relay whose `contextBytes` holds a handful of favorites.
    static let smallContext = 3000

    @Test func favoritesWithTheLongestGitHubTextsAllReachTheWatch() async throws {
        let count = 45
        let h = try await PhoneHarness.start(github: try TestGitHub.start(longUsers: count))
        let errors = Self.collect(h.phone.errors)
        var sync = SnapshotSync.unchanged
        for i in 0..<count { sync = try await h.phone.add(TestGitHub.longLogin(i)).sync }
        #expect(sync == .pushed(revision: h.first.revision + Int64(count)))
        let last = try await h.watch.snapshot(atLeast: h.first.revision + Int64(count))
        #expect(last.users.map(\.login) == (0..<count).map(TestGitHub.longLogin))
        #expect(last.omitted == 0)
        for user in last.users {
            #expect(user.name.map { $0.count <= SnapshotFit.nameCharacters && $0.hasSuffix("…") } == true)
            #expect(user.htmlURL == "https://github.com/\(user.login)")
        }
        // The phone keeps GitHub's data whole; only the watch's copy is short.
        #expect(try await h.phone.favorites().first?.user?.name?.count == 1024)
        let status = await h.phone.status()
        #expect(status.pushedRevision == status.revision && status.omitted == 0 && status.pushError == nil)
        await h.stop()
        #expect(await errors.value.isEmpty)
    }

    @Test func addingPastWhatTheRelaysContextBytesAlwaysHoldsFailsAndAddsNothing() async throws {
        let github = try TestGitHub.start(longUsers: 12)
        let h = try await PhoneHarness.start(github: github, relay: { $0.relay.limits.contextBytes = Self.smallContext })
        let most = SnapshotFit.maxFavorites(contextBytes: Self.smallContext)
        #expect(most > 1 && most < 12)
        for i in 0..<most {
            #expect(try await h.phone.add(TestGitHub.longLogin(i)).sync.name == "pushed")
        }
        let next = TestGitHub.longLogin(most)
        await #expect(throws: PhoneError.tooManyFavorites(max: most, contextBytes: Self.smallContext)) {
            try await h.phone.add(next)
        }
        let line = await PhoneConsole.run(.add(next), on: h.phone).lines
        #expect(line.count == 1 && line[0].hasPrefix("error add source=input code=too_many_favorites"), "\(line)")
        #expect(github.server.counters.paths["/users/\(next)", default: 0] == 0, "refused before asking GitHub")
        #expect(try await h.phone.favorites().count == most)
        let last = try await h.watch.snapshot(atLeast: h.first.revision + Int64(most))
        #expect(last.users.count == most && last.omitted == 0)
        await h.stop()
    }

    /// A list over the limit (here added by another process, which runs no session and cannot
    /// know the limit) reaches the watch cut short, with `omitted`; the errors and the status say
    /// so. A relay announcing a larger limit gets the whole list as a new revision, and the
    /// status clears.
    @Test func aListOverTheRelaysContextBytesReachesTheWatchCutShortAndThePhoneSaysSo() async throws {
        let count = 12
        let github = try TestGitHub.start(longUsers: count)
        let h = try await PhoneHarness.start(github: github, relay: { $0.relay.limits.contextBytes = Self.smallContext })
        let errors = Self.collect(h.phone.errors)
        let logins = (0..<count).map(TestGitHub.longLogin)
        let cli = try PhoneStore(directory: h.state.path)
        try cli.write { for login in logins { _ = try cli.addFavorite(login) } }

        var received = try await h.watch.nextSnapshot(10)
        while received.users.count + received.omitted < count { received = try await h.watch.nextSnapshot(10) }
        let cut = received
        #expect(cut.omitted > 0 && cut.users.map(\.login) == Array(logins.prefix(count - cut.omitted)))
        // The watch may have the snapshot before the phone's push returned.
        let phone = h.phone
        try await eventually(10, "the phone to record the push") { await phone.status().pushedRevision == cut.revision }
        var status = await h.phone.status()
        #expect(status.revision == cut.revision)
        #expect(status.omitted == cut.omitted)
        #expect(status.pushError?.code == "snapshot_truncated")
        let statusLine = await PhoneConsole.run(.status, on: h.phone).lines.joined()
        #expect(statusLine.contains("omitted=\(cut.omitted)") && statusLine.contains("push_error=snapshot_truncated"), "\(statusLine)")

        // The relay comes back with the default limit: the whole list goes out as a new revision.
        let port = h.relay.server.port
        await h.relay.stop()
        await h.watch.close()
        let roomier = try await RelayServer.startForTest(in: h.relay.directory.path) { $0.port = port }
        let watch = try await RawWatch.reconnect(relay: h.relay.url, token: h.watch.token, lastSeq: await h.watch.lastSeq)
        let whole = try await watch.snapshot(atLeast: cut.revision + 1)
        #expect(whole.users.map(\.login) == logins && whole.omitted == 0)
        try await eventually(10, "the phone to record the push") { await phone.status().pushedRevision == whole.revision }
        status = await h.phone.status()
        #expect(status.omitted == 0 && status.pushError == nil && status.pushedRevision == whole.revision)

        await h.phone.shutdown()
        await watch.close()
        await roomier.shutdown()
        await github.stop()
        let reported = await errors.value
        #expect(reported.contains(.snapshotTruncated(revision: cut.revision, sent: cut.users.count, omitted: cut.omitted, contextBytes: Self.smallContext)))
    }

    /// A relay whose `contextBytes` holds not even an empty list: nothing is sent, the status
    /// says why (`payload_too_large`, which the error code called `relay_error` before), and no
    /// favorite can be added.
    @Test func aLimitBelowAnEmptySnapshotSendsNothingAndTheStatusSaysWhy() async throws {
        let relay = try await TestRelay.start { $0.relay.limits.contextBytes = 40 }
        let github = try TestGitHub.start(longUsers: 1)
        let state = TemporaryDirectory()
        let phone = try PhoneCompanion(configuration: phoneConfiguration(relay: relay.url, state: state.path), github: github.client)
        await phone.start()
        let watch = try await RawWatch.pair(relay: relay.url, code: try await phone.pair().code)
        try await eventually(10, "the failed push") { await phone.status().pushError != nil }
        let status = await phone.status()
        #expect(status.pushError?.code == "payload_too_large" && status.pushedRevision == 0 && status.revision == 1)
        await #expect(throws: PhoneError.tooManyFavorites(max: 0, contextBytes: 40)) { try await phone.add(TestGitHub.longLogin(0)) }
        await watch.expectNoSnapshot(for: 0.2)
        await phone.shutdown()
        await watch.close()
        await relay.stop()
        await github.stop()
    }

    /// Everything `stream` yields until it finishes.
    static func collect(_ stream: AsyncStream<PhoneError>) -> Task<[PhoneError], Never> {
        Task {
            var seen: [PhoneError] = []
            for await error in stream { seen.append(error) }
            return seen
        }
    }
}

extension RawWatch {
    /// The first snapshot of revision `revision` or above, skipping (and acknowledging) older ones.
    func snapshot(atLeast revision: Int64) async throws -> FavoritesSnapshot {
        while true {
            let snapshot = try await nextSnapshot(10)
            if snapshot.revision >= revision { return snapshot }
        }
    }
}
