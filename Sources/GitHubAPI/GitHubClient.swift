import GitExplorerPayloads
import RelayProtocol

/// The GitHub dependency of the phone app: a user and a user's repositories, as closures.
///
/// Build it with ``live(baseURL:token:session:)`` (URLSession against GitHub or the fixture
/// stub), or with ``fixed(users:repos:)`` and ``failing(_:)`` in tests; inject it through
/// initializers. Both closures throw only ``GitHubError``.
public struct GitHubClient: Sendable {
    /// Fetches the user with this login.
    public var user: @Sendable (_ login: String) async throws(GitHubError) -> User
    /// Fetches all repositories of the user with this login, in GitHub's order.
    public var repos: @Sendable (_ login: String) async throws(GitHubError) -> [Repo]

    /// Creates a client from its endpoints.
    public init(
        user: @escaping @Sendable (_ login: String) async throws(GitHubError) -> User,
        repos: @escaping @Sendable (_ login: String) async throws(GitHubError) -> [Repo]
    ) {
        self.user = user
        self.repos = repos
    }
}
