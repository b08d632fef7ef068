import GitExplorerPayloads
import PhoneApp
import RelayProtocol
import Testing

/// The watch form of a user and cutting a snapshot to `contextBytes`, as pure functions.
@Suite struct SnapshotFitTests {
    /// A user with every text at the 2,048 bytes the GitHub client accepts.
    static let longest = User(
        login: "long-user", id: 42, name: String(repeating: "é", count: 1024),
        avatarURL: "https://avatars.githubusercontent.com/u/42?" + String(repeating: "x", count: 2005),
        htmlURL: "https://github.com/long-user?" + String(repeating: "x", count: 2019), publicRepos: 1, followers: 2,
        following: 3)

    @Test func theWatchFormCutsLongNamesAndReplacesLongURLs() {
        let form = SnapshotFit.watchForm(Self.longest)
        let name = try! #require(form.name)
        #expect(name.hasSuffix("…"))
        #expect(name.count <= SnapshotFit.nameCharacters && name.utf8.count <= SnapshotFit.maxTextBytes)
        #expect(name.dropLast().allSatisfy { $0 == "é" })
        #expect(form.avatarURL == "https://avatars.githubusercontent.com/u/42")
        #expect(form.htmlURL == "https://github.com/long-user")
        #expect(form.login == Self.longest.login && form.publicRepos == 1 && form.followers == 2 && form.following == 3)
        #expect(JSONWriter.encodedSize(form.json) <= SnapshotFit.maxUserBytes)

        // A name of many characters in few bytes is cut by characters; escapes count as sent.
        #expect(SnapshotFit.watchForm(user(name: String(repeating: "a", count: 65))).name == String(repeating: "a", count: 63) + "…")
        let controls = try! #require(SnapshotFit.watchForm(user(name: String(repeating: "\u{1}", count: 60))).name)
        #expect(JSONWriter.encodedSize(.string(controls)) - 2 <= SnapshotFit.maxTextBytes)
        // What GitHub usually sends is kept as it is.
        let usual = testUser("octocat")
        #expect(SnapshotFit.watchForm(usual) == usual)
        #expect(SnapshotFit.watchForm(user(name: String(repeating: "a", count: 64))).name == String(repeating: "a", count: 64))
    }

    /// The most favorites for a limit always fit it, each at its widest; one more may not.
    @Test(arguments: [262_144, 65_536, 4_096, 600])
    func maxFavoritesAtTheirWidestFitTheLimit(contextBytes: Int) {
        let most = SnapshotFit.maxFavorites(contextBytes: contextBytes)
        let widest = SnapshotFit.watchForm(
            User(
                login: String(repeating: "w", count: 39), id: .min, name: String(repeating: "é", count: 64),
                avatarURL: "https://example.com/" + String(repeating: "a", count: 108),
                htmlURL: "https://example.com/" + String(repeating: "h", count: 108), publicRepos: .max, followers: .max,
                following: .max))
        #expect(JSONWriter.encodedSize(widest.json) == SnapshotFit.maxUserBytes, "the widest user is the bound")
        let full = FavoritesSnapshot(revision: .max, users: Array(repeating: widest, count: most))
        #expect(full.payload.encodedSize <= contextBytes)
        let over = FavoritesSnapshot(revision: .max, users: Array(repeating: widest, count: most + 1), omitted: .max)
        #expect(over.payload.encodedSize > contextBytes)
        if contextBytes == 262_144 { #expect(most == 438, "the number PROTOCOL.md §12.2 gives") }
    }

    @Test func aSnapshotOverTheLimitKeepsTheLongestPrefixThatFits() throws {
        let users = (0..<10).map { testUser("user\($0)") }
        let snapshot = FavoritesSnapshot(revision: 7, users: users)
        let whole = try #require(SnapshotFit.fit(snapshot, contextBytes: snapshot.payload.encodedSize))
        #expect(whole.omitted == 0 && whole.sent == 10 && whole.payload == snapshot.payload)

        let cut = try #require(SnapshotFit.fit(snapshot, contextBytes: snapshot.payload.encodedSize - 1))
        let sent = try FavoritesSnapshot(json: cut.payload.json)
        #expect(cut.sent == 9 && cut.omitted == 1)
        #expect(sent == FavoritesSnapshot(revision: 7, users: Array(users.prefix(9)), omitted: 1))
        #expect(cut.payload.encodedSize <= snapshot.payload.encodedSize - 1)

        let tight = try #require(SnapshotFit.fit(snapshot, contextBytes: 400))
        #expect(tight.payload.encodedSize <= 400)
        #expect(try #require(SnapshotFit.fit(snapshot, contextBytes: tight.payload.encodedSize)).sent == tight.sent)
        let more = FavoritesSnapshot(revision: 7, users: Array(users.prefix(tight.sent + 1)), omitted: 10 - tight.sent - 1)
        #expect(more.payload.encodedSize > 400, "no longer prefix fits")

        let empty = FavoritesSnapshot(revision: 7, users: [], omitted: 10).payload.encodedSize
        #expect(try #require(SnapshotFit.fit(snapshot, contextBytes: empty)).sent == 0)
        #expect(SnapshotFit.fit(snapshot, contextBytes: empty - 1) == nil, "not even an empty list fits")
    }

    func user(name: String) -> User {
        var user = testUser("someone")
        user.name = name
        return user
    }
}
