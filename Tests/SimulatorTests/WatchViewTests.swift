import GitExplorerPayloads
import RelayProtocol
import Testing
import WatchApp

@testable import Simulator

/// What a scenario checks of a watch reads the same from a watch in this process and from a
/// `--machine` child's `state` answer (its `--json` rendering).
@Suite struct WatchViewTests {
    /// A list the phone cut to fit the relay's limit: `omitted` reaches `expectWatchFavorites`
    /// in every mode (a child's from the rendering's `favorites.omitted`).
    @Test func theFavoritesThePhoneLeftOutReadAlikeInProcessAndFromAChild() throws {
        let now = Timestamp(millisecondsSinceEpoch: 1_796_000_000_000)
        let user = User(
            login: "octocat", id: 1, name: nil, avatarURL: "https://avatars.githubusercontent.com/u/1",
            htmlURL: "https://github.com/octocat", publicRepos: 8, followers: 1, following: 0)
        var state = WatchAppState.standard(now: now)
        state.receive(FavoritesSnapshot(revision: 2, users: [user], omitted: 5), sentAt: now, now: now)
        _ = state.flush(now: now)
        let here = WatchView(state)
        let child = try WatchView(json: JSONRenderer.json(state, now: now))
        #expect(here.omitted == 5)
        #expect(child == here)
        #expect(child.widgets.first { $0.id == "face.circular" }?.text == "6\nFAV")
    }
}
