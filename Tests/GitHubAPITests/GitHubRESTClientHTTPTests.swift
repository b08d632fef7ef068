import Foundation
import GitHubAPI
import RelayProtocol
import TestSupport
import Testing

/// The REST client over real HTTP (URLSession) against the fixture server on 127.0.0.1.
@Suite(.timeLimit(.minutes(5)))
struct GitHubRESTClientHTTPTests {
    static let fixedNow = Date(timeIntervalSince1970: 1_750_000_000)

    @Test func decodesAUserFromGitHubsShape() async throws {
        try await withStub { _, client in
            let octocat = try await client.user("octocat")
            let fixture = try #require(fixtureCatalog.account(login: "octocat")).user
            #expect(octocat.login == "octocat")
            #expect(octocat.id == fixture["id"]?.intValue)
            #expect(octocat.name == "The Octocat")
            #expect(octocat.avatarURL == fixture["avatar_url"]?.stringValue)
            #expect(octocat.htmlURL == "https://github.com/octocat")
            #expect(octocat.publicRepos == 8)
            #expect(octocat.followers == Int(fixture["followers"]?.intValue ?? -1))
            #expect(octocat.following == Int(fixture["following"]?.intValue ?? -1))
            #expect(try await client.user("devxoul").name == nil)
        }
    }

    /// A developer following `repos_url` from the fixture server's user object stays on it
    /// (it named https://api.github.com, the real GitHub, from the offline default).
    @Test func followingReposURLFromAUserStaysOnTheFixtureServer() async throws {
        try await withStub { stub, _ in
            let user = try await PlainHTTP.request(port: stub.port, "/users/octocat")
            #expect(user.status == 200)
            let reposURL = try #require(try JSONParser.parse(Array(user.body.utf8))["repos_url"]?.stringValue)
            #expect(reposURL == "\(stub.baseURL.absoluteString)/users/octocat/repos")
            let path = try #require(URL(string: reposURL)).path
            let repos = try await PlainHTTP.request(port: stub.port, path)
            #expect(repos.status == 200)
            #expect(try JSONParser.parse(Array(repos.body.utf8)).arrayValue?.count == 8)
        }
    }

    @Test func fetchesEveryPageOfAMultiPageUserInOrder() async throws {
        try await withStub { stub, client in
            let account = try #require(fixtureCatalog.account(login: "sindresorhus"))
            let repos = try await client.repos("sindresorhus")
            #expect(repos.count == account.repos.count)
            #expect(repos.count > 200)
            #expect(repos.map(\.fullName) == account.repos.map { $0["full_name"]?.stringValue ?? "" })
            #expect(repos.first?.stargazersCount == Int(account.repos.first?["stargazers_count"]?.intValue ?? -1))
            let counters = stub.counters
            #expect(counters.paths["/users/sindresorhus/repos"] == 1)
            #expect(counters.paths["/user/\(account.id)/repos"] == 2)
            #expect(try await client.repos("kylef").count == 100)
            #expect(stub.counters.requests == 4)
            #expect(try await client.repos("ghost") == [])
        }
    }

    @Test func aRevalidated304ReusesTheCachedBodyAndCostsNoRateLimit() async throws {
        // Free with a token, as on GitHub (an anonymous 304 is charged).
        try await withStub(token: "t") { stub, client in
            let user = try await client.user("gaearon")
            let repos = try await client.repos("mattt")
            let charged = stub.counters.charged
            #expect(charged == 3)
            #expect(try await client.user("gaearon") == user)
            #expect(try await client.repos("mattt") == repos)
            let counters = stub.counters
            #expect(counters.notModified == 3)
            #expect(counters.charged == charged)
            #expect(counters.lastIfNoneMatch?.hasPrefix("\"") == true)
            #expect(await client.cache.reuseCount == 3)
        }
    }

    @Test func anUnknownUserIsNotFound() async throws {
        try await withStub { _, client in
            #expect(await expectGitHubError { try await client.user("no-such-user") } == .userNotFound("no-such-user"))
            #expect(await expectGitHubError { try await client.repos("no-such-user") } == .userNotFound("no-such-user"))
        }
    }

    @Test func aSpentRateLimitRetriesAtTheReset() async throws {
        try await withStub(rateLimit: GitHubStubRateLimit(limit: 2, window: .seconds(600)), token: "t") { stub, client in
            _ = try await client.user("octocat")
            _ = try await client.user("torvalds")
            let error = await expectGitHubError { try await client.user("tj") }
            #expect(error == .rateLimited(retryAt: Self.fixedNow.addingTimeInterval(600)))
            #expect(error?.reposErrorCode == .rateLimited)
            // Revalidation with a token still works while the limit is spent.
            #expect(try await client.user("octocat").login == "octocat")
            #expect(stub.counters.rateLimited == 1)
            #expect(stub.counters.notModified == 1)
        }
    }

    @Test func aSecondaryRateLimitRetriesAfterRetryAfter() async throws {
        try await withStub { stub, client in
            stub.setFault(.secondaryRateLimit(retryAfterSeconds: 30), for: "twostraws")
            let error = await expectGitHubError { try await client.repos("twostraws") }
            #expect(error == .rateLimited(retryAt: Self.fixedNow.addingTimeInterval(30)))
        }
    }

    @Test func aGarbageOrWronglyShapedBodyIsMalformed() async throws {
        try await withStub { stub, client in
            stub.setFault(.garbage, for: "ole")
            let garbage = await expectGitHubError { try await client.user("ole") }
            #expect(garbage == .malformedResponse("user ole: body is not valid JSON"))
            stub.setFault(.wrongShape, for: "ole")
            let user = await expectGitHubError { try await client.user("ole") }
            #expect(user == .malformedResponse("user ole: expected an integer at id"))
            let repos = await expectGitHubError { try await client.repos("ole") }
            #expect(repos == .malformedResponse("repos of ole, page 1: missing key 'full_name' at [0]"))
            #expect(repos?.reposErrorCode == .githubUnavailable)
        }
    }

    @Test func aServerErrorIsUnavailable() async throws {
        try await withStub { stub, client in
            stub.setGlobalFault(.down)
            #expect(
                await expectGitHubError { try await client.user("octocat") } == .unavailable("HTTP 500: Server Error"))
            stub.setGlobalFault(nil)
            let recovered = try await client.user("octocat")
            #expect(recovered.login == "octocat")
        }
    }

    @Test func aClosedPortIsUnavailable() async throws {
        let closed = try ClosedPort()
        let baseURL = URL(string: "http://127.0.0.1:\(closed.port)")!
        let client = GitHubRESTClient(baseURL: baseURL, requestTimeout: .seconds(5))
        let error = try await withTimeout(10, "a refused connection") {
            await expectGitHubError { try await client.user("octocat") }
        }
        #expect(error == .unavailable("127.0.0.1:\(baseURL.port ?? 0): connection refused"))
        #expect(error?.reposErrorCode == .githubUnavailable)
        withExtendedLifetime(closed) {}
    }

    @Test func sendsTheBearerTokenAndGitHubsHeaders() async throws {
        try await withStub(token: "ghp_fixture123") { stub, client in
            _ = try await client.user("octocat")
            let counters = stub.counters
            #expect(counters.lastAuthorization == "Bearer ghp_fixture123")
            #expect(counters.lastAccept == "application/vnd.github+json")
            #expect(counters.lastUserAgent == "WatchRelay-GitHubAPI")
        }
        try await withStub { stub, client in
            _ = try await client.user("octocat")
            #expect(stub.counters.lastAuthorization == nil)
        }
    }

    @Test func theLiveClientWorksAgainstTheStub() async throws {
        let stub = try GitHubStubServer.start(fixturesDirectory: fixturesDirectory)
        let client = GitHubClient.live(baseURL: stub.baseURL, token: "t")
        let result = await Result {
            try await withTimeout(10 * timeoutScale, "the live client") {
                (try await client.user("JohnSundell"), try await client.repos("onevcat"))
            }
        }
        await stub.stop()
        let (user, repos) = try result.get()
        #expect(user.login == "JohnSundell")
        #expect(repos.count == 104)
    }

    // MARK: - Helpers

    /// Starts a stub on 127.0.0.1:0 with a fixed clock, runs `body` with a client pointed at it
    /// (same clock), and stops the stub whatever happens.
    private func withStub(
        rateLimit: GitHubStubRateLimit? = nil, token: String? = nil,
        _ body: @escaping @Sendable (GitHubStubServer, GitHubRESTClient) async throws -> Void
    ) async throws {
        let now = Self.fixedNow
        let stub = try GitHubStubServer.start(catalog: fixtureCatalog, rateLimit: rateLimit, now: { now })
        let client = GitHubRESTClient(baseURL: stub.baseURL, token: token, now: { now })
        let result = await Result { try await withTimeout(40, "the GitHub stub test") { try await body(stub, client) } }
        await stub.stop()
        try result.get()
    }
}

extension Result where Failure == any Error {
    /// Captures the outcome of an async throwing body.
    init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
