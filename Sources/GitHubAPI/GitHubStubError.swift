import WebSocketTransport

/// The errors of starting the fixture GitHub server (``GitHubStubServer``).
///
/// Kept apart from ``GitHubError``, which is what a GitHub *client* sees: these never reach
/// the wire, they stop `watchrelay github-stub` (or a test) before it serves anything.
public enum GitHubStubError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A fixture file or directory is missing, unreadable, or not the expected JSON; the path
    /// and what was wrong.
    case invalidFixture(path: String, reason: String)
    /// The HTTP server could not start (port taken, bad host, …).
    case transport(TransportError)

    /// A one-line description for logs.
    public var description: String {
        switch self {
        case .invalidFixture(let path, let reason): "invalid GitHub fixture \(path): \(reason)"
        case .transport(let error): "GitHub stub server failed to start: \(error)"
        }
    }
}
