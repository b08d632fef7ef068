import GitExplorerPayloads
import RelayProtocol

/// Fitting `favorites.snapshot` into the relay's `contextBytes` (PROTOCOL.md §12.2).
///
/// Two steps, so that the watch never stays on an older list because the newest did not fit:
/// - every user goes to the watch in its *watch form* (``watchForm(_:)``): a name of at most
///   ``nameCharacters`` characters and ``maxTextBytes`` bytes (the watch shows a line of it),
///   and a URL longer than ``maxTextBytes`` (GitHub's are about 50 bytes) replaced by GitHub's
///   canonical one. So one user costs at most ``maxUserBytes``, and ``maxFavorites(contextBytes:)``
///   of them always fit: the most ``PhoneCompanion/add(_:)`` lets the list hold.
/// - a list longer than that (favorites added while the relay announced a larger limit, or by
///   `watchrelay phone add --state DIR`, which runs no session) is cut at push time
///   (``fit(_:contextBytes:)``): the longest prefix that fits goes out with `omitted`, the number
///   of favorites left out at the end, and the phone reports it.
///
/// Pure functions: no store, no session; the limit is the one the relay announced in `welcome`.
public enum SnapshotFit {
    /// The most characters of a user's name the watch gets (it shows one line of it).
    public static let nameCharacters = 64
    /// The most bytes (in the canonical encoding, PROTOCOL.md §3.6) of a name or URL the watch gets.
    public static let maxTextBytes = 128

    /// A snapshot's payload cut to fit, and what it left out.
    public struct Fitted: Sendable, Hashable {
        /// The payload to send: `favorites.snapshot` with the first ``sent`` users, and
        /// `omitted` when ``omitted`` is above 0.
        public var payload: Payload
        /// How many users (from the start of the list) it carries.
        public var sent: Int
        /// How many users at the end of the list it leaves out.
        public var omitted: Int
    }

    /// `user` as the watch gets it: the name cut to ``nameCharacters`` characters and
    /// ``maxTextBytes`` bytes (ending in `…` when cut), an over-long `avatarUrl` or `htmlUrl`
    /// replaced by `https://avatars.githubusercontent.com/u/{id}` or `https://github.com/{login}`.
    public static func watchForm(_ user: User) -> User {
        var form = user
        form.name = user.name.map(shortened)
        if encodedBytes(user.avatarURL) > maxTextBytes { form.avatarURL = "https://avatars.githubusercontent.com/u/\(user.id)" }
        if encodedBytes(user.htmlURL) > maxTextBytes { form.htmlURL = "https://github.com/\(user.login)" }
        return form
    }

    /// The most bytes one user in watch form takes in a snapshot (a GitHub login is at most 39
    /// ASCII characters; every number at its widest).
    public static let maxUserBytes: Int = {
        let text = String(repeating: "x", count: maxTextBytes)
        let widest = User(
            login: String(repeating: "x", count: 39), id: Int64.min, name: text, avatarURL: text, htmlURL: text,
            publicRepos: Int.max, followers: Int.max, following: Int.max)
        return JSONWriter.encodedSize(widest.json)
    }()

    /// The bytes of a snapshot with no users, its revision and `omitted` at their widest.
    static let maxEnvelopeBytes = FavoritesSnapshot(revision: Int64.max, users: [], omitted: Int.max).payload.encodedSize

    /// The most favorites a snapshot always has room for within `contextBytes`, whatever GitHub
    /// says about them (0 when the limit is below an empty snapshot's): 438 at the default 262,144.
    public static func maxFavorites(contextBytes: Int) -> Int {
        // n users take n × maxUserBytes and n − 1 commas.
        max(0, (contextBytes - maxEnvelopeBytes + 1) / (maxUserBytes + 1))
    }

    /// `snapshot`'s payload if it fits `contextBytes`, else the longest prefix of its users that
    /// does, with `omitted`; nil when not even an empty list fits.
    public static func fit(_ snapshot: FavoritesSnapshot, contextBytes: Int) -> Fitted? {
        let whole = snapshot.payload
        if whole.encodedSize <= contextBytes { return Fitted(payload: whole, sent: snapshot.users.count, omitted: 0) }
        func prefix(_ count: Int) -> Payload {
            FavoritesSnapshot(
                revision: snapshot.revision, users: Array(snapshot.users.prefix(count)), omitted: snapshot.users.count - count
            ).payload
        }
        guard prefix(0).encodedSize <= contextBytes else { return nil }
        // The longest prefix that fits (binary search: the size grows with the count).
        var low = 0
        var high = snapshot.users.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if prefix(mid).encodedSize <= contextBytes { low = mid } else { high = mid - 1 }
        }
        return Fitted(payload: prefix(low), sent: low, omitted: snapshot.users.count - low)
    }

    /// `name` cut to ``nameCharacters`` characters and ``maxTextBytes`` bytes, ending in `…` when cut.
    static func shortened(_ name: String) -> String {
        guard name.count > nameCharacters || encodedBytes(name) > maxTextBytes else { return name }
        var kept = Substring(name.prefix(nameCharacters - 1))
        let ellipsis = "…"
        while !kept.isEmpty, encodedBytes(String(kept)) + ellipsis.utf8.count > maxTextBytes { kept.removeLast() }
        return kept + ellipsis
    }

    /// The bytes of `text` as a JSON string in the canonical encoding, quotes excluded.
    static func encodedBytes(_ text: String) -> Int {
        JSONWriter.encodedSize(.string(text)) - 2
    }
}
