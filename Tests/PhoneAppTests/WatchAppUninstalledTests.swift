import GitExplorerPayloads
import PhoneApp
import RelayProtocol
import TestSupport
import Testing

/// The watch app uninstalled (PROTOCOL.md §7.1), over a real relay: the phone's push is refused
/// with `watch_app_not_installed`, shown as its push error; when the watch app runs again the
/// phone pushes the list it could not. Before, it waited for the user's next change, and the
/// watch came back on the list from before the uninstall.
@Suite(.timeLimit(.minutes(2)))
struct WatchAppUninstalledTests {
    @Test func aListChangedWhileTheWatchAppWasUninstalledGoesOnceItRunsAgain() async throws {
        let h = try await PhoneHarness.start()
        h.watch.send(.state(StateChange(appInstalled: false)))
        try await eventually(10, "the phone to hear of the uninstall") {
            await h.phone.status().watchAppInstalled == false
        }
        let change = try await h.phone.add("octocat")
        #expect(change.sync == .queued(revision: h.first.revision + 1))
        #expect(await h.phone.status().pushError?.code == "watch_app_not_installed")
        let lastSeq = await h.watch.lastSeq
        await h.watch.close()
        let again = try await RawWatch.reconnect(relay: h.relay.url, token: h.watch.token, lastSeq: lastSeq)
        let snapshot = try await again.nextSnapshot(10 * timeoutScale)
        #expect(snapshot.users.map(\.login) == ["octocat"])
        try await eventually(10, "the push error cleared") {
            let status = await h.phone.status()
            return status.pushError == nil && status.watchAppInstalled
        }
        await again.close()
        await h.phone.shutdown()
        await h.relay.stop()
        await h.github.stop()
    }
}
