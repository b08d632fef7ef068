import Foundation
import GitExplorerPayloads
import PhoneApp
import RelayProtocol
import SQLite
import TestSupport
import Testing

/// The phone's SQLite store: ordered favorites that survive reopening, caches, change detection.
struct PhoneStoreTests {
    @Test func favoritesKeepTheirOrderAcrossReopening() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try PhoneStore(directory: dir.path)
            for login in ["mattt", "octocat", "torvalds"] { try store.addFavorite(login) }
        }
        let store = try PhoneStore(directory: dir.path)
        #expect(try store.favoriteLogins() == ["mattt", "octocat", "torvalds"])
        #expect(try store.favorites().map(\.position) == [0, 1, 2])
    }

    @Test func addingIsCaseInsensitiveAndIdempotent() throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        #expect(try store.addFavorite("Octocat"))
        #expect(try !store.addFavorite("octocat"))
        #expect(try store.favoriteLogins() == ["Octocat"])
    }

    @Test func moveAndRemoveKeepPositionsDense() throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        for login in ["a", "b", "c", "d"] { try store.addFavorite(login) }
        #expect(try store.moveFavorite("d", to: 0) == FavoriteMove(moved: true, index: 0))
        #expect(try store.favoriteLogins() == ["d", "a", "b", "c"])
        #expect(try store.moveFavorite("a", to: 99) == FavoriteMove(moved: true, index: 3), "the index is clamped, and said")
        #expect(try store.favoriteLogins() == ["d", "b", "c", "a"])
        #expect(try store.moveFavorite("b", to: 1) == FavoriteMove(moved: false, index: 1))
        #expect(try store.moveFavorite("zz", to: 0) == nil)
        #expect(try store.removeFavorite("B"))
        #expect(try !store.removeFavorite("b"))
        try store.addFavorite("e")
        #expect(try store.favoriteLogins() == ["d", "c", "a", "e"])
    }

    /// `watchrelay phone remove|move --state DIR` edits the state of a running companion. The
    /// edit read the order before it took the write lock, so when it had to wait for the
    /// companion's write (a move), it renumbered the favorites from the order it had read and
    /// undid that move.
    @Test(arguments: [true, false])
    func anEditWaitingForAnotherWriterKeepsWhatThatWriterCommitted(remove: Bool) async throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        for login in ["a", "b", "c"] { try store.addFavorite(login) }
        let companion = try SQLiteDatabase(path: dir.path("phone.db"))
        try companion.execute("BEGIN IMMEDIATE")
        // The companion moves c to the front: c, a, b.
        try companion.execute("UPDATE favorites SET position = CASE login WHEN 'c' THEN 0 WHEN 'a' THEN 1 ELSE 2 END")
        let path = dir.path
        let edit = Task { () async -> String? in
            await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                // A thread of its own: the edit waits for the lock in SQLite's busy handler.
                Thread {
                    do {
                        let cli = try PhoneStore(directory: path)
                        if remove { try cli.removeFavorite("b") } else { try cli.moveFavorite("b", to: 0) }
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: "\(error)")
                    }
                }.start()
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        try companion.execute("COMMIT")
        #expect(await edit.value == nil)
        #expect(try store.favoriteLogins() == (remove ? ["c", "a"] : ["b", "c", "a"]))
        #expect(try store.favorites().map(\.position) == (remove ? [0, 1] : [0, 1, 2]))
    }

    @Test func theLastGoodUserIsCachedAndSpellsTheLogin() throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        try store.addFavorite("OCTOCAT")
        try store.saveUser(testUser("octocat", followers: 3), fetchedAt: Date(timeIntervalSince1970: 1_000))
        let favorite = try #require(try store.favorites().first)
        #expect(favorite.login == "octocat")
        #expect(favorite.user?.followers == 3)
        #expect(favorite.fetchedAt == Date(timeIntervalSince1970: 1_000))
        #expect(try store.currentSnapshotUsers() == [testUser("octocat", followers: 3)])
    }

    @Test func anotherConnectionsCommitMovesTheDataVersion() throws {
        let dir = TemporaryDirectory()
        let companion = try PhoneStore(directory: dir.path)
        let cli = try PhoneStore(directory: dir.path)
        let before = try companion.dataVersion()
        try companion.addFavorite("own-write")
        #expect(try companion.dataVersion() == before, "a connection's own commits do not count")
        try cli.addFavorite("octocat")
        try cli.enqueueRequest("refresh")
        #expect(try companion.dataVersion() != before)
        #expect(try companion.takeRequests() == ["refresh"])
        #expect(try companion.takeRequests().isEmpty)
    }

    @Test func reposAreCachedWithTheirFetchTime() throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        let repo = Repo(
            id: 1, name: "Hello-World", fullName: "octocat/Hello-World", stargazersCount: 3, forksCount: 1,
            htmlURL: "https://github.com/octocat/Hello-World", updatedAt: "2026-01-01T00:00:00Z", fork: false)
        try store.saveRepos([repo], for: "octocat", fetchedAt: Date(timeIntervalSince1970: 2_000))
        let cached = try #require(try store.cachedRepos("OctoCat"))
        #expect(cached.repos == [repo] && cached.fetchedAt == Date(timeIntervalSince1970: 2_000))
        try store.forgetRepos("octocat")
        #expect(try store.cachedRepos("octocat") == nil)
    }

    @Test func theFileIsInWALMode() throws {
        let dir = TemporaryDirectory()
        let store = try PhoneStore(directory: dir.path)
        try store.addFavorite("octocat")
        #expect(store.path == dir.path + "/phone.db")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/phone.db-wal"))
    }
}
