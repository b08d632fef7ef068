import GitExplorerPayloads
import GitHubAPI
import RelayProtocol
import Testing

struct GitHubClientTests {
    let octocat = User(
        login: "octocat", id: 1, avatarURL: "a", htmlURL: "h", publicRepos: 1, followers: 2, following: 3)
    let repo = Repo(
        id: 9, name: "r", fullName: "octocat/r", stargazersCount: 1, forksCount: 0, htmlURL: "h", updatedAt: "u",
        fork: false)

    @Test func fixedClientAnswersKnownLoginsCaseInsensitively() async throws {
        let client = GitHubClient.fixed(users: [octocat], repos: ["OctoCat": [repo]])
        #expect(try await client.user("OCTOCAT") == octocat)
        #expect(try await client.repos("octocat") == [repo])
        #expect(await expectGitHubError { try await client.user("nobody") } == .userNotFound("nobody"))
        #expect(await expectGitHubError { try await client.repos("nobody") } == .userNotFound("nobody"))
    }

    @Test func failingClientFailsEveryCall() async {
        let client = GitHubClient.failing(.unavailable("test"))
        #expect(await expectGitHubError { try await client.user("octocat") } == .unavailable("test"))
        #expect(await expectGitHubError { try await client.repos("octocat") } == .unavailable("test"))
    }
}
