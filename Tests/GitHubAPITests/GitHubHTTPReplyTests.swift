import Foundation
import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import GitHubAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client's status policy and error mapping, without sockets.
struct GitHubHTTPReplyTests {
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    private func resolve(
        _ status: Int, _ headers: [String: String] = [:], body: String = "", cached: ETagCache.Entry? = nil
    ) -> Result<GitHubHTTPReply.Resolution, GitHubError> {
        Result { () throws(GitHubError) in
            try GitHubHTTPReply(status: status, headers: headers, body: Data(body.utf8))
                .resolve(login: "octocat", cached: cached, now: now)
        }
    }

    @Test func a200IsFreshWithItsValidatorAndLinks() {
        let result = resolve(200, ["etag": "\"e\"", "link": "<x>; rel=\"next\""], body: "{}")
        #expect(result == .success(.fresh(body: Data("{}".utf8), etag: "\"e\"", link: "<x>; rel=\"next\"")))
    }

    @Test func a304ReusesTheCachedEntryAndIsMalformedWithoutOne() {
        let entry = ETagCache.Entry(etag: "\"e\"", body: Data("[]".utf8), link: nil)
        #expect(resolve(304, cached: entry) == .success(.notModified(entry)))
        guard case .failure(.malformedResponse) = resolve(304) else {
            Issue.record("expected malformedResponse")
            return
        }
    }

    @Test func statusesMapToTypedErrors() {
        #expect(resolve(404) == .failure(.userNotFound("octocat")))
        #expect(resolve(401) == .failure(.http(status: 401)))
        #expect(resolve(403) == .failure(.http(status: 403)))
        #expect(resolve(422) == .failure(.http(status: 422)))
        #expect(resolve(500, body: #"{"message":"Server Error"}"#) == .failure(.unavailable("HTTP 500: Server Error")))
        #expect(resolve(503) == .failure(.unavailable("HTTP 503")))
    }

    @Test func primaryRateLimitRetriesAtTheReset() {
        let headers = ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1750003600"]
        let retryAt = Date(timeIntervalSince1970: 1_750_003_600)
        #expect(resolve(403, headers) == .failure(.rateLimited(retryAt: retryAt)))
        #expect(resolve(429, headers) == .failure(.rateLimited(retryAt: retryAt)))
        // Remaining requests left: a 403 that is about something else.
        #expect(
            resolve(403, ["x-ratelimit-remaining": "12", "x-ratelimit-reset": "1750003600"])
                == .failure(.http(status: 403)))
    }

    @Test func retryAfterWinsOverTheReset() {
        let headers = ["retry-after": "42", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1750003600"]
        #expect(resolve(429, headers) == .failure(.rateLimited(retryAt: now.addingTimeInterval(42))))
        #expect(resolve(403, ["retry-after": "7"]) == .failure(.rateLimited(retryAt: now.addingTimeInterval(7))))
    }

    @Test func rateLimitWithoutTimingWaitsAMinute() {
        #expect(resolve(429) == .failure(.rateLimited(retryAt: now.addingTimeInterval(60))))
        let secondary = #"{"message":"You have exceeded a secondary rate limit."}"#
        #expect(resolve(403, body: secondary) == .failure(.rateLimited(retryAt: now.addingTimeInterval(60))))
    }

    @Test func transportFailuresAreUnavailable() {
        let url = URL(string: "http://127.0.0.1:9/users/x")!
        let cases: [(any Error, String)] = [
            (URLError(.timedOut), "127.0.0.1:9: timed out after 10 s"),
            (URLError(.cannotConnectToHost), "127.0.0.1:9: connection refused"),
            (URLError(.cannotFindHost), "127.0.0.1:9: host not found"),
            (CancellationError(), "request to 127.0.0.1:9 cancelled"),
            // What a hostile server's answers came out as, as bare codes (-1, -1002, -1007).
            (URLError(.unknown), "127.0.0.1:9: the answer broke off or is malformed"),
            (URLError(.unsupportedURL), "127.0.0.1:9: the answer is not HTTP"),
            (URLError(.httpTooManyRedirects), "127.0.0.1:9: too many redirects"),
        ]
        for (error, message) in cases {
            #expect(GitHubRESTClient.unavailable(error, url: url, timeout: 10) == .unavailable(message))
        }
    }

    /// Garbage from a hostile GitHub (the black-box probe of the phone): another user's object
    /// for the login asked for, and a field of megabytes, are errors, not data to keep and push.
    @Test func aUserIsTheOneAskedForAndItsTextIsBounded() throws {
        func user(login: String, name: String?) throws -> GitHubUserResource {
            let named = name.map { #""name":"\#($0)","# } ?? ""
            let json =
                #"{"login":"\#(login)","id":1,\#(named)"avatar_url":"https://a/1","html_url":"https://github.com/x","#
                + #""public_repos":1,"followers":2,"following":3}"#
            return try GitHubDecoding.decode(GitHubUserResource.self, from: Data(json.utf8), what: "user")
        }
        #expect(try user(login: "Octocat", name: "The Octocat").model(asked: "octocat").login == "Octocat", "case-insensitive")
        #expect(throws: GitHubError.malformedResponse("asked for user ole, GitHub answered with user mojombo")) {
            try user(login: "mojombo", name: nil).model(asked: "ole")
        }
        let long = String(repeating: "x", count: GitHubDecoding.maxTextBytes + 1)
        #expect(throws: GitHubError.malformedResponse("user ole: name is 2049 bytes, more than 2048")) {
            try user(login: "ole", name: long).model(asked: "ole")
        }
        #expect(try user(login: "ole", name: String(repeating: "x", count: GitHubDecoding.maxTextBytes)).model(asked: "ole").name?.count == 2048)
    }

    @Test func aRepoWithAFieldOfMegabytesIsAnError() throws {
        let description = String(repeating: "d", count: 5_000_000)
        let repo =
            #"[{"id":1,"name":"a","full_name":"o/a","description":"\#(description)","stargazers_count":1,"forks_count":0,"#
            + #""html_url":"h","updated_at":"u","fork":false}]"#
        let decoded = try GitHubDecoding.decode([GitHubRepoResource].self, from: Data(repo.utf8), what: "repos")
        #expect(throws: GitHubError.malformedResponse("repo o/a: description is 5000000 bytes, more than 2048")) {
            try decoded[0].model()
        }
    }

    @Test func theNextPageIsFetchedFromGitHubsOwnOriginOnly() {
        let base = URL(string: "https://api.github.com")!
        #expect(GitHubRESTClient.sameOrigin(URL(string: "https://api.github.com/user/1/repos?page=2")!, base))
        #expect(GitHubRESTClient.sameOrigin(URL(string: "https://API.github.com:443/x")!, base))
        #expect(!GitHubRESTClient.sameOrigin(URL(string: "https://evil.example/x")!, base))
        #expect(!GitHubRESTClient.sameOrigin(URL(string: "http://api.github.com/x")!, base))
        #expect(!GitHubRESTClient.sameOrigin(URL(string: "https://api.github.com:8443/x")!, base))
    }

    @Test func decodingErrorsNameTheKeyPath() {
        func message(_ json: String, as type: (some Decodable).Type) -> String? {
            do {
                _ = try GitHubDecoding.decode(type, from: Data(json.utf8), what: "thing")
                return nil
            } catch {
                guard case .malformedResponse(let text) = error else { return nil }
                return text
            }
        }
        #expect(message("<html>", as: GitHubUserResource.self) == "thing: body is not valid JSON")
        #expect(message(#"{"id":1}"#, as: GitHubUserResource.self) == "thing: missing key 'login' at the top level")
        let repo =
            #"{"id":1,"name":"a","full_name":"o/a","stargazers_count":"many","forks_count":0,"#
            + #""html_url":"h","updated_at":"u","fork":false}"#
        #expect(
            message("[\(repo)]", as: [GitHubRepoResource].self) == "thing: expected an integer at [0].stargazers_count")
        #expect(message(#"{"a":1}"#, as: [GitHubRepoResource].self) == "thing: expected an array at the top level")
        let nullLogin =
            #"{"login":null,"id":1,"avatar_url":"a","html_url":"h","public_repos":0,"followers":0,"following":0}"#
        #expect(message(nullLogin, as: GitHubUserResource.self) == "thing: null where a string was expected at login")
    }

    @Test func errorsMapToTheProtocolsCodes() {
        #expect(ReposErrorCode(GitHubError.userNotFound("x")) == .userNotFound)
        #expect(GitHubError.rateLimited(retryAt: now).reposErrorCode == .rateLimited)
        #expect(ReposErrorCode(GitHubError.unavailable("down")) == .githubUnavailable)
        #expect(ReposErrorCode(GitHubError.malformedResponse("bad")) == .githubUnavailable)
        #expect(ReposErrorCode(GitHubError.http(status: 401)) == .githubUnavailable)
        let reply = ReposError(login: "x", error: .userNotFound("x"))
        #expect(reply.code == .userNotFound)
        #expect(reply.message == "GitHub user 'x' not found")
    }

    @Test func loginsThatCannotExistAreNotFoundWithoutARequest() async {
        let client = GitHubRESTClient(baseURL: URL(string: "http://127.0.0.1:9")!)
        for login in ["", "a/b", "../etc", String(repeating: "a", count: 40), "a b", "ü"] {
            #expect(await expectGitHubError { try await client.user(login) } == .userNotFound(login))
        }
    }
}

extension GitHubHTTPReply.Resolution: CustomStringConvertible {
    public var description: String {
        switch self {
        case .fresh(let body, let etag, let link):
            "fresh(\(body.count) bytes, etag: \(etag ?? "-"), link: \(link ?? "-"))"
        case .notModified(let entry): "notModified(\(entry.etag))"
        }
    }
}
