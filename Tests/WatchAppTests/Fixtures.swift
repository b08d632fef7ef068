import Foundation
import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

/// Users, repos, snapshots and a manual clock for the watch tests.
enum Fx {
    /// The manual clock's origin: 2026-05-31 09:00:00 UTC.
    static let t0 = Timestamp(iso8601: "2026-05-31T09:00:00Z")!

    static func at(seconds: Int64) -> Timestamp { t0.adding(milliseconds: seconds * 1000) }
    static func at(minutes: Int64) -> Timestamp { at(seconds: minutes * 60) }
    static func at(hours: Int64) -> Timestamp { at(seconds: hours * 3600) }

    static func user(_ login: String, name: String? = nil, repos: Int = 10, followers: Int = 100) -> User {
        User(
            login: login, id: login.utf8.reduce(Int64(7)) { $0 &* 31 &+ Int64($1) }, name: name,
            avatarURL: "https://avatars.example/\(login)", htmlURL: "https://github.com/\(login)", publicRepos: repos,
            followers: followers, following: 1)
    }

    static let octocat = User(
        login: "octocat", id: 583_231, name: "The Octocat", avatarURL: "https://avatars.example/octocat",
        htmlURL: "https://github.com/octocat", publicRepos: 8, followers: 3938, following: 9)
    static let torvalds = User(
        login: "torvalds", id: 1024, name: "Linus Torvalds", avatarURL: "https://avatars.example/torvalds",
        htmlURL: "https://github.com/torvalds", publicRepos: 7, followers: 241_503, following: 0)
    static let gaearon = User(
        login: "gaearon", id: 810_438, name: "dan", avatarURL: "https://avatars.example/gaearon",
        htmlURL: "https://github.com/gaearon", publicRepos: 276, followers: 89_100, following: 171)
    static let dongik = User(
        login: "dongik-song", id: 77, name: "송동익", avatarURL: "https://avatars.example/dongik",
        htmlURL: "https://github.com/dongik-song", publicRepos: 23, followers: 41, following: 12)

    static let three = [octocat, torvalds, gaearon]

    static func snapshot(_ revision: Int64, _ users: [User], omitted: Int = 0) -> FavoritesSnapshot {
        FavoritesSnapshot(revision: revision, users: users, omitted: omitted)
    }

    static func repo(_ name: String, stars: Int, language: String? = "Swift", updated: String, fork: Bool = false)
        -> Repo
    {
        Repo(
            id: Int64(stars * 1000 + name.count), name: name, fullName: "octocat/\(name)", language: language,
            stargazersCount: stars, forksCount: stars / 10, htmlURL: "https://github.com/octocat/\(name)",
            updatedAt: updated, fork: fork)
    }

    static let octocatRepos = ReposReply(
        login: "octocat",
        repos: [
            repo("linguist", stars: 12, language: "Ruby", updated: "2026-05-01T10:00:00Z"),
            repo("Hello-World", stars: 2710, language: nil, updated: "2026-05-30T21:00:00Z"),
            repo("Spoon-Knife", stars: 12_800, language: "HTML", updated: "2026-03-02T08:00:00Z"),
            repo("boysenberry-repo-1", stars: 12, language: "Swift", updated: "2025-01-15T08:00:00Z", fork: true),
            repo("git-consortium", stars: 40, language: "C", updated: "2026-05-31T08:50:00Z"),
        ],
        fetchedAt: at(minutes: -2))

    /// A scheduler with one widget, flushed once at `t0` over `favorites`.
    static func single(
        _ descriptor: WidgetDescriptor = .smartStack(.accessoryRectangular), rules: WidgetRules = WidgetRules(),
        provider: FavoritesTimelineProvider = FavoritesTimelineProvider(), favorites: FavoritesSnapshot? = nil
    ) -> WidgetScheduler {
        var s = WidgetScheduler(widgets: [descriptor], rules: rules, provider: provider, now: t0)
        _ = s.flush(now: t0, favorites: favorites)
        return s
    }
}

extension WidgetPass {
    var reloads: [WidgetReload] { events.compactMap(\.reload) }
    var staleReports: [StaleReport] { events.compactMap(\.staleReport) }
    var rendered: [EntryRendered] { events.compactMap(\.rendered) }
}

extension WidgetScheduler {
    /// The only (or first) widget.
    var first: WidgetInstance { widgets[0] }
}
