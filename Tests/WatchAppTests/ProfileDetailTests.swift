import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct ProfileDetailTests {
    @Test func openingLoadsThenShowsTheReposSortedByStarsThenName() {
        var d = ProfileDetail(login: "octocat")
        #expect(d.phase == .idle)
        let r1 = d.handle(.requested)
        #expect(r1 == .sendRequest(.reposRequest("octocat")))
        #expect(d.phase == .loading(cached: nil))
        #expect(d.statusMessage == "Loading…")
        let r2 = d.handle(.requested)
        #expect(r2 == nil)
        d.handle(.replied(Fx.octocatRepos))
        guard case .loaded(let list) = d.phase else {
            Issue.record("not loaded: \(d.phase)")
            return
        }
        #expect(
            list.repos.map(\.name) == [
                "Spoon-Knife", "Hello-World", "git-consortium", "boysenberry-repo-1", "linguist",
            ])
        let rows = list.rows(now: Fx.t0)
        #expect(rows[0] == .init(name: "Spoon-Knife", stars: "12k", language: "HTML", updated: "3mo", isFork: false))
        #expect(rows[1].language == "—")
        #expect(rows[1].updated == "12h")
        #expect(rows[2].updated == "10m")
        #expect(rows[3].updated == "1y")
        #expect(rows[3].isFork)
        #expect(d.statusMessage == nil)
        #expect(d.visibleList?.isStale == false)
    }

    @Test(arguments: [
        (ReposErrorCode.userNotFound, "User not found"),
        (.rateLimited, "GitHub rate limit reached, try later"),
        (.githubUnavailable, "GitHub is unavailable"),
        (ReposErrorCode(rawValue: "teapot"), "phone says: teapot"),
    ])
    func aFailureShowsTheCodeInWords(code: ReposErrorCode, message: String) {
        var d = ProfileDetail(login: "octocat")
        d.handle(.requested)
        d.handle(.failed(ReposError(login: "octocat", code: code, message: "phone says: teapot")))
        #expect(d.phase == .failed(code, message: message))
        #expect(d.statusMessage == message)
        #expect(d.visibleList == nil)
    }

    @Test func anUnreachablePhoneShowsTheCachedListAsStaleOrSaysSo() {
        var empty = ProfileDetail(login: "octocat")
        empty.handle(.requested)
        empty.handle(.unreachable)
        #expect(empty.phase == .offline(.notReachable, cached: nil))
        #expect(empty.statusMessage == "Phone not reachable")
        #expect(empty.visibleList == nil)

        let cached = RepoList(Fx.octocatRepos)
        var d = ProfileDetail(login: "octocat", cached: cached)
        d.handle(.requested)
        #expect(d.visibleList?.isStale == true)
        d.handle(.unreachable)
        #expect(d.phase == .offline(.notReachable, cached: cached))
        #expect(d.visibleList?.list == cached)
        #expect(d.visibleList?.isStale == true)
    }

    @Test func aTimeoutIsOfflineAndALateReplyStillLoads() {
        var d = ProfileDetail(login: "octocat")
        d.handle(.requested)
        d.handle(.timeout)
        #expect(d.phase == .offline(.timedOut, cached: nil))
        #expect(d.statusMessage == "Phone did not answer")
        d.handle(.replied(Fx.octocatRepos))
        #expect(d.phase.name == "loaded")
        // Retrying goes back to loading with the list now cached.
        let r3 = d.handle(.requested)
        #expect(r3 != nil)
        #expect(d.phase == .loading(cached: RepoList(Fx.octocatRepos)))
    }

    /// The phone's older list, answered because GitHub failed (PROTOCOL.md §12.5): loaded and
    /// cached like any list, but shown stale, with GitHub's failure in words (a code the watch
    /// does not know: the phone's message). A current list after it is not stale.
    @Test(arguments: [
        (ReposErrorCode.githubUnavailable, "GitHub is unavailable"),
        (.rateLimited, "GitHub rate limit reached, try later"),
        (ReposErrorCode(rawValue: "teapot"), "phone says: teapot"),
    ])
    func aStaleReplyIsLoadedMarkedStaleWithTheFailureInWords(code: ReposErrorCode, message: String) throws {
        var state = WatchAppState.standard(now: Fx.t0)
        _ = state.openProfile("octocat")
        var reply = Fx.octocatRepos
        reply.stale = ReposStaleness(code: code, message: "phone says: teapot")
        state.handleProfile(.replied(reply))
        let d = try #require(state.profile)
        #expect(d.phase == .loaded(RepoList(reply)))
        #expect(d.phase.name == "loaded")
        #expect(d.visibleList?.isStale == true)
        #expect(d.visibleList?.list.fetchedAt == reply.fetchedAt)
        #expect(d.statusMessage == message)
        // Cached as it came: offline, it is still the stale list; a current reply replaces it.
        _ = state.openProfile("octocat")
        state.handleProfile(.unreachable)
        #expect(state.profile?.visibleList?.isStale == true)
        _ = state.openProfile("octocat")
        state.handleProfile(.replied(Fx.octocatRepos))
        #expect(state.profile?.visibleList?.isStale == false)
        #expect(state.profile?.statusMessage == nil)
    }

    @Test func answersForAnotherLoginAreIgnored() {
        var d = ProfileDetail(login: "octocat")
        d.handle(.requested)
        d.handle(.replied(ReposReply(login: "torvalds", repos: [], fetchedAt: Fx.t0)))
        d.handle(.failed(ReposError(login: "torvalds", code: .userNotFound, message: "")))
        #expect(d.phase == .loading(cached: nil))
        // Unreachable or timeout outside loading change nothing.
        var idle = ProfileDetail(login: "octocat")
        idle.handle(.unreachable)
        idle.handle(.timeout)
        #expect(idle.phase == .idle)
    }

    @Test func theWatchStateCachesListsAcrossScreens() {
        var state = WatchAppState.standard(now: Fx.t0)
        let r4 = state.openProfile("octocat")
        #expect(r4 == .sendRequest(.reposRequest("octocat")))
        state.handleProfile(.replied(Fx.octocatRepos))
        state.closeProfile()
        #expect(state.profile == nil)
        state.handleProfile(.unreachable)
        _ = state.openProfile("OctoCat")
        state.handleProfile(.unreachable)
        #expect(state.profile?.visibleList?.isStale == true)
        #expect(state.profile?.visibleList?.list.repos.count == 5)
    }
}
