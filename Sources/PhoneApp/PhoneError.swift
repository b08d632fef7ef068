import GitHubAPI
import Primitives
import RelayClient

/// Everything that can go wrong on the phone side, from every source, as one type.
///
/// The companion's throwing API throws only these, and ``PhoneCompanion/errors`` merges the
/// ones nobody awaited (a failing user in a periodic refresh, a dropped relay connection, a
/// bad payload from the watch) into the one stream the user sees: the seed app's "merge the
/// error streams into one alert". ``source`` names where an error came from.
public enum PhoneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// GitHub failed for this login (the user keeps its last known data).
    case github(login: String, GitHubError)
    /// A relay session call failed, or the connection dropped.
    case relay(RelaySessionError)
    /// The phone's SQLite store failed; the text names the operation and SQLite's message.
    case store(String)
    /// The text cannot be a GitHub login (1–39 letters, digits, `-` or `_`).
    case invalidLogin(String)
    /// The login is not a favorite (e.g. for a move).
    case notAFavorite(String)
    /// The watch sent something the phone cannot handle: the payload kind and why.
    case invalidPayload(kind: String?, reason: String)
    /// The companion is shut down.
    case shutDown
    /// Adding a favorite past the most a snapshot always has room for at the relay's announced
    /// `contextBytes` (``SnapshotFit/maxFavorites(contextBytes:)``); nothing was added.
    case tooManyFavorites(max: Int, contextBytes: Int)
    /// The newest snapshot did not fit the relay's `contextBytes`: the relay got revision
    /// `revision` with the first `sent` favorites, and the last `omitted` were left out.
    case snapshotTruncated(revision: Int64, sent: Int, omitted: Int, contextBytes: Int)

    /// Where the error came from: `github`, `relay`, `store`, `input` or `watch`.
    public var source: String {
        switch self {
        case .github: "github"
        case .relay: "relay"
        case .store: "store"
        case .invalidLogin, .notAFavorite, .shutDown, .tooManyFavorites: "input"
        case .snapshotTruncated: "relay"
        case .invalidPayload: "watch"
        }
    }

    /// A short machine-readable code, e.g. `user_not_found`, `rate_limited`, `disconnected`.
    public var code: String {
        switch self {
        case .github(_, let error): error.reposErrorCode.rawValue
        // The watch's codes for the same errors (a reply timeout was `relay_error` here).
        case .relay(let error): error.code
        case .store: "store_failed"
        case .invalidLogin: "invalid_login"
        case .notAFavorite: "not_a_favorite"
        case .invalidPayload: "invalid_payload"
        case .shutDown: "shut_down"
        case .tooManyFavorites: "too_many_favorites"
        case .snapshotTruncated: "snapshot_truncated"
        }
    }

    /// One line for people and logs.
    public var description: String {
        switch self {
        case .github(let login, let error): "\(login): \(error)"
        case .relay(let error): "relay: \(error)"
        case .store(let what): "store: \(what)"
        case .invalidLogin(let text):
            // A login is at most 39 characters; what a script sent by mistake may be megabytes.
            "\(Excerpt.quoted(text, limit: 80, keep: 40)) is not a GitHub login"
        case .notAFavorite(let login): "\(Excerpt.quoted(login, limit: 80, keep: 40)) is not a favorite"
        case .invalidPayload(let kind, let reason): "bad payload \(kind ?? "without kind") from the watch: \(reason)"
        case .shutDown: "the phone companion is shut down"
        case .tooManyFavorites(let max, let contextBytes):
            "the watch's snapshot holds at most \(max) favorites at the relay's contextBytes of \(contextBytes): remove one first"
        case .snapshotTruncated(let revision, let sent, let omitted, let contextBytes):
            "snapshot revision \(revision) is over the relay's contextBytes of \(contextBytes): the watch got the first "
                + "\(sent) favorites, the last \(omitted) are left out until the list fits (remove favorites)"
        }
    }

    /// Wraps any error of a store call.
    static func storeFailure(_ error: any Error) -> PhoneError {
        (error as? PhoneError) ?? .store(String(describing: error))
    }
}
