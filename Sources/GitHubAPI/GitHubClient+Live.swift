import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension GitHubClient {
    /// A client backed by ``GitHubRESTClient`` (URLSession, ETag cache, Link pagination).
    /// - Parameters:
    ///   - baseURL: the API root (default `https://api.github.com`), e.g. a stub's base URL.
    ///   - token: a bearer token, or `nil`.
    ///   - session: the URLSession; `nil` (the default) makes an ephemeral one with 10 s timeouts.
    public static func live(
        baseURL: URL = GitHubRESTClient.defaultBaseURL, token: String? = nil, session: URLSession? = nil
    ) -> GitHubClient {
        live(GitHubRESTClient(baseURL: baseURL, token: token, session: session))
    }

    /// A client backed by a configured ``GitHubRESTClient``.
    public static func live(_ rest: GitHubRESTClient) -> GitHubClient {
        GitHubClient(
            user: { (login) async throws(GitHubError) in try await rest.user(login) },
            repos: { (login) async throws(GitHubError) in try await rest.repos(login) })
    }
}
