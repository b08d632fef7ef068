import GitExplorerPayloads
import RelayProtocol

extension GitHubClient {
    /// A client answering from memory: known logins (case-insensitive) get their user and
    /// repos (none if `repos` has no entry); any other login is ``GitHubError/userNotFound(_:)``.
    public static func fixed(users: [User], repos: [String: [Repo]] = [:]) -> GitHubClient {
        let usersByLogin = Dictionary(
            users.map { ($0.login.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        let reposByLogin = Dictionary(repos.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        return GitHubClient(
            user: { (login) throws(GitHubError) in
                guard let user = usersByLogin[login.lowercased()] else { throw .userNotFound(login) }
                return user
            },
            repos: { (login) throws(GitHubError) in
                guard usersByLogin[login.lowercased()] != nil else { throw .userNotFound(login) }
                return reposByLogin[login.lowercased()] ?? []
            })
    }

    /// A client whose every call fails with `error`.
    public static func failing(_ error: GitHubError) -> GitHubClient {
        GitHubClient(
            user: { (_) throws(GitHubError) in throw error },
            repos: { (_) throws(GitHubError) in throw error })
    }
}
