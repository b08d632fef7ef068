import RelayProtocol

/// The payload kinds of the GitExplorer watch companion.
public struct PayloadKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let favoritesSnapshot = PayloadKind(rawValue: "favorites.snapshot")
    public static let favoritesDelete = PayloadKind(rawValue: "favorites.delete")
    public static let favoritesRefresh = PayloadKind(rawValue: "favorites.refresh")
    public static let reposRequest = PayloadKind(rawValue: "profile.repos.request")
    public static let repos = PayloadKind(rawValue: "profile.repos")
    public static let reposError = PayloadKind(rawValue: "profile.repos.error")

    /// Every kind the app defines.
    public static let all: [PayloadKind] = [
        .favoritesSnapshot, .favoritesDelete, .favoritesRefresh, .reposRequest, .repos, .reposError,
    ]
}

/// Reads and checks `kind` for an app payload.
private func expectKind(_ r: ObjectReader, _ kind: PayloadKind) throws(ProtocolError) {
    let k = try r.string("kind")
    guard k == kind.rawValue else { throw r.invalid("kind", "'\(kind.rawValue)'") }
}

/// phone → watch by `context`: the favorites, in the phone's order.
public struct FavoritesSnapshot: JSONRepresentable, Hashable {
    public static let kind = PayloadKind.favoritesSnapshot
    /// Strictly increases with every change.
    public var revision: Int64
    public var users: [User]
    /// Favorites the phone left out at the end of ``users`` because the whole list would not
    /// fit the relay's `contextBytes` (PROTOCOL.md §12.2); 0 (not sent) when the list is whole.
    public var omitted: Int

    public init(revision: Int64, users: [User], omitted: Int = 0) {
        self.revision = revision
        self.users = users
        self.omitted = omitted
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        try expectKind(r, Self.kind)
        revision = try r.int("revision", min: 1)
        users = try r.objects("users") { (o) throws(ProtocolError) in try User(reader: o) }
        omitted = Int(try r.optionalInt("omitted", min: 1) ?? 0)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "kind": .string(Self.kind.rawValue), "revision": .int(revision), "users": .array(users.map(\.json)),
        ]
        if omitted > 0 { members["omitted"] = .int(Int64(omitted)) }
        return .object(members)
    }
}

/// A payload that is a `kind` and a `login` (`favorites.delete`, `profile.repos.request`).
public struct LoginCommand: JSONRepresentable, Hashable {
    public var kind: PayloadKind
    public var login: String

    public init(kind: PayloadKind, login: String) {
        self.kind = kind
        self.login = login
    }

    /// watch → phone by `userInfo`: remove `login` from the favorites. Idempotent.
    public static func favoritesDelete(_ login: String) -> LoginCommand { .init(kind: .favoritesDelete, login: login) }
    /// watch → phone by `message` with `wantsReply`: the repos of `login`.
    public static func reposRequest(_ login: String) -> LoginCommand { .init(kind: .reposRequest, login: login) }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        kind = PayloadKind(rawValue: try r.string("kind"))
        login = try r.string("login", length: 1...39)
    }

    public var json: JSONValue { ["kind": .string(kind.rawValue), "login": .string(login)] }
}

/// watch → phone by `message`: refresh the favorites now.
public struct FavoritesRefresh: JSONRepresentable, Hashable {
    public static let kind = PayloadKind.favoritesRefresh

    public init() {}

    public init(reader r: ObjectReader) throws(ProtocolError) {
        try expectKind(r, Self.kind)
    }

    public var json: JSONValue { ["kind": .string(Self.kind.rawValue)] }
}

/// phone → watch, the reply to `profile.repos.request`.
public struct ReposReply: JSONRepresentable, Hashable {
    public static let kind = PayloadKind.repos
    public var login: String
    public var repos: [Repo]
    /// When the phone got this list from GitHub.
    public var fetchedAt: Timestamp
    /// Set when the phone could not get the list from GitHub now and answered with the one it
    /// fetched at ``fetchedAt`` (member `stale`, optional: a watch that does not know it shows
    /// the list as current); nil when the list is current.
    public var stale: ReposStaleness?

    public init(login: String, repos: [Repo], fetchedAt: Timestamp, stale: ReposStaleness? = nil) {
        self.login = login
        self.repos = repos
        self.fetchedAt = fetchedAt
        self.stale = stale
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        try expectKind(r, Self.kind)
        login = try r.string("login")
        repos = try r.objects("repos") { (o) throws(ProtocolError) in try Repo(reader: o) }
        fetchedAt = try r.timestamp("fetchedAt")
        stale = try r.optionalObject("stale").map { (o) throws(ProtocolError) in try ReposStaleness(reader: o) }
    }

    public var json: JSONValue {
        var o = ObjectBuilder()
        o.set("kind", Self.kind.rawValue)
        o.set("login", login)
        o["repos"] = .array(repos.map(\.json))
        o.set("fetchedAt", fetchedAt)
        o.set("stale", stale)
        return o.json
    }
}

/// Why a `profile.repos` reply holds an older list: what GitHub did when the phone asked it
/// now (PROTOCOL.md §12.5). The code is read as any string, so a code a later phone adds
/// still delivers the list (the watch shows ``message`` for a code it does not know).
public struct ReposStaleness: JSONRepresentable, Hashable {
    /// `rate_limited` or `github_unavailable`: what a `profile.repos.error` would have said.
    public var code: ReposErrorCode
    /// For people (e.g. when the rate limit resets).
    public var message: String

    public init(code: ReposErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        code = ReposErrorCode(rawValue: try r.string("code"))
        message = try r.string("message")
    }

    public var json: JSONValue { ["code": .string(code.rawValue), "message": .string(message)] }
}

/// Why the phone could not answer a repos request.
public struct ReposErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let userNotFound = ReposErrorCode(rawValue: "user_not_found")
    public static let rateLimited = ReposErrorCode(rawValue: "rate_limited")
    public static let githubUnavailable = ReposErrorCode(rawValue: "github_unavailable")
    public static let all: [ReposErrorCode] = [.userNotFound, .rateLimited, .githubUnavailable]
}

/// phone → watch, the failed reply to `profile.repos.request`.
public struct ReposError: JSONRepresentable, Hashable {
    public static let kind = PayloadKind.reposError
    public var login: String
    public var code: ReposErrorCode
    public var message: String

    public init(login: String, code: ReposErrorCode, message: String) {
        self.login = login
        self.code = code
        self.message = message
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        try expectKind(r, Self.kind)
        login = try r.string("login")
        code = try r.oneOf("code", ReposErrorCode.all)
        message = try r.string("message")
    }

    public var json: JSONValue {
        [
            "kind": .string(Self.kind.rawValue), "login": .string(login), "code": .string(code.rawValue),
            "message": .string(message),
        ]
    }
}

/// Any app payload, decoded by its `kind`.
public enum AppPayload: Sendable, Hashable {
    case favoritesSnapshot(FavoritesSnapshot)
    case favoritesDelete(LoginCommand)
    case favoritesRefresh(FavoritesRefresh)
    case reposRequest(LoginCommand)
    case repos(ReposReply)
    case reposError(ReposError)

    /// Decodes `payload` by its kind; `nil` for a kind the app does not know.
    public init?(_ payload: Payload) throws(ProtocolError) {
        switch payload.kind.map(PayloadKind.init(rawValue:)) {
        case .favoritesSnapshot?: self = .favoritesSnapshot(try payload.decode())
        case .favoritesDelete?: self = .favoritesDelete(try payload.decode())
        case .favoritesRefresh?: self = .favoritesRefresh(try payload.decode())
        case .reposRequest?: self = .reposRequest(try payload.decode())
        case .repos?: self = .repos(try payload.decode())
        case .reposError?: self = .reposError(try payload.decode())
        default: return nil
        }
    }

    /// The payload form.
    public var payload: Payload {
        switch self {
        case .favoritesSnapshot(let p): return p.payload
        case .favoritesDelete(let p), .reposRequest(let p): return p.payload
        case .favoritesRefresh(let p): return p.payload
        case .repos(let p): return p.payload
        case .reposError(let p): return p.payload
        }
    }
}
