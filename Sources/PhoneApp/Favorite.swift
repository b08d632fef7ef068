import Foundation
import GitExplorerPayloads
import RelayProtocol

/// One favorite GitHub user: the login in its place, and the last good data fetched for it.
public struct Favorite: Sendable, Hashable {
    /// The login as it was added (or as GitHub spells it, once fetched).
    public var login: String
    /// The place in the favorites, from 0.
    public var position: Int
    /// The last user data GitHub returned, if any (kept when a later fetch fails).
    public var user: User?
    /// When ``user`` was fetched.
    public var fetchedAt: Date?

    /// Creates a favorite.
    public init(login: String, position: Int, user: User? = nil, fetchedAt: Date? = nil) {
        self.login = login
        self.position = position
        self.user = user
        self.fetchedAt = fetchedAt
    }

    /// The favorite as JSON, for `list --json`: `{login, position, user, fetchedAt}` (user and
    /// fetchedAt are null when no data was fetched yet).
    public var json: JSONValue {
        [
            "login": .string(login),
            "position": .int(Int64(position)),
            "user": user?.json ?? .null,
            "fetchedAt": fetchedAt.map { .string(Timestamp(date: $0).iso8601) } ?? .null,
        ]
    }

    /// Whether `text` can be a GitHub login: 1–39 ASCII letters, digits, `-` or `_`.
    public static func isValidLogin(_ text: String) -> Bool {
        (1...39).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }
}

extension Timestamp {
    /// The timestamp of a `Date`, to the millisecond.
    init(date: Date) {
        self.init(millisecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// The `Date` of this timestamp.
    var date: Date { Date(timeIntervalSince1970: Double(millisecondsSinceEpoch) / 1000) }
}
