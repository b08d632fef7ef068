import Foundation
import GitHubAPI
import RelayProtocol
import Testing
import WebSocketTransport

/// The stub's logic as a pure function: requests and times in, answers out.
struct GitHubStubTests {
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    private func get(_ path: String, query: String = "", headers: [String: String] = [:]) -> HTTPRequest {
        HTTPRequest(method: "GET", path: path, query: query, headers: headers)
    }

    @Test func servesAUserInGitHubsShapeWithStandardHeaders() throws {
        var stub = GitHubStub(catalog: fixtureCatalog)
        let response = stub.respond(to: get("/users/octocat"), now: now)
        #expect(response.status == 200)
        #expect(response.contentType == "application/json; charset=utf-8")
        let user = try JSONParser.parse(response.body)
        #expect(user["login"]?.stringValue == "octocat")
        #expect(user["avatar_url"]?.stringValue?.hasPrefix("https://avatars.githubusercontent.com/") == true)
        #expect(response.header("ETag")?.hasPrefix("\"") == true)
        #expect(response.header("X-RateLimit-Limit") == "5000")
        #expect(response.header("X-RateLimit-Remaining") == "4999")
        #expect(response.header("X-RateLimit-Used") == "1")
        #expect(response.header("X-RateLimit-Reset") == "1750003600")
        #expect(response.header("Link") == nil)
    }

    @Test func paginatesLikeGitHubWithLinksByUserID() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://stub")
        let account = try #require(fixtureCatalog.account(login: "sindresorhus"))
        #expect(account.repos.count > 200)
        let root = "http://stub/user/\(account.id)/repos?per_page=100&page="

        let first = stub.respond(to: get("/users/sindresorhus/repos", query: "per_page=100"), now: now)
        #expect(try JSONParser.parse(first.body).arrayValue?.count == 100)
        #expect(first.header("Link") == "<\(root)2>; rel=\"next\", <\(root)3>; rel=\"last\"")

        let middle = stub.respond(to: get("/user/\(account.id)/repos", query: "per_page=100&page=2"), now: now)
        let middleLinks = LinkHeader(parsing: try #require(middle.header("Link")))
        #expect(
            middleLinks
                == LinkHeader(links: ["prev": root + "1", "next": root + "3", "last": root + "3", "first": root + "1"]))

        let last = stub.respond(to: get("/users/sindresorhus/repos", query: "per_page=100&page=3"), now: now)
        let lastItems = try #require(try JSONParser.parse(last.body).arrayValue)
        #expect(lastItems.count == account.repos.count - 200)
        #expect(lastItems.last?["full_name"] == account.repos.last?["full_name"])
        #expect(LinkHeader(parsing: try #require(last.header("Link"))).next == nil)
    }

    @Test func usesTheHostHeaderForLinks() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://unused")
        let response = stub.respond(
            to: get("/users/mattt/repos", query: "per_page=100", headers: ["Host": "127.0.0.1:4567"]),
            now: now)
        #expect(
            LinkHeader(parsing: try #require(response.header("Link"))).next?.hasPrefix("http://127.0.0.1:4567/user/")
                == true)
    }

    /// The fixture objects named the real GitHub (`https://api.github.com/users/octocat/repos`),
    /// so following `repos_url` from the offline fixture server went to the internet. GitHub's
    /// API URLs in a body name the API host the client used: the stub's now name its own base,
    /// the one its `Link` targets use; other hosts (`github.com`, avatars) are left alone.
    @Test func apiURLsInBodiesNameTheFixtureServer() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://127.0.0.1:9")
        let headers = ["Host": "127.0.0.1:4567"]
        let user = try JSONParser.parse(stub.respond(to: get("/users/octocat", headers: headers), now: now).body)
        #expect(user["url"]?.stringValue == "http://127.0.0.1:4567/users/octocat")
        #expect(user["repos_url"]?.stringValue == "http://127.0.0.1:4567/users/octocat/repos")
        #expect(user["following_url"]?.stringValue == "http://127.0.0.1:4567/users/octocat/following{/other_user}")
        #expect(user["html_url"]?.stringValue == "https://github.com/octocat")
        #expect(user["avatar_url"]?.stringValue?.hasPrefix("https://avatars.githubusercontent.com/") == true)

        let page = stub.respond(to: get("/users/octocat/repos", headers: headers), now: now)
        let repo = try #require(try JSONParser.parse(page.body).arrayValue?.first)
        let name = try #require(repo["full_name"]?.stringValue)
        #expect(repo["url"]?.stringValue == "http://127.0.0.1:4567/repos/\(name)")
        #expect(repo["owner"]?["repos_url"]?.stringValue == "http://127.0.0.1:4567/users/octocat/repos")
        #expect(repo["html_url"]?.stringValue == "https://github.com/\(name)")

        // Without a Host header: the server's own base URL, as for Link targets.
        let bare = try JSONParser.parse(stub.respond(to: get("/users/octocat"), now: now).body)
        #expect(bare["repos_url"]?.stringValue == "http://127.0.0.1:9/users/octocat/repos")
        for login in ["octocat", "sindresorhus", "pointfreeco"] {
            for path in ["/users/\(login)", "/users/\(login)/repos"] {
                let body = stub.respond(to: get(path, query: "per_page=100", headers: headers), now: now).text
                #expect(!body.contains("api.github.com"), "\(path)")
            }
        }
        // The catalog itself (what the fixture files say) is unchanged.
        #expect(fixtureCatalog.account(login: "octocat")?.user["repos_url"]?.stringValue
            == "https://api.github.com/users/octocat/repos")
    }

    /// The `Host` header went into `Link` targets unchecked: a value with `>`, quotes, spaces or
    /// `;` broke the header's syntax (and could add links of its own). Anything that is not a
    /// `host[:port]` of the allowed characters now gives the server's own base URL.
    @Test(arguments: [
        "evil>; rel=\"next\", <http://attacker", "a b", "\"quoted\"", "host,other", "h;x", "h:port", "h:99999",
        "[::1", "[::1]x", "user@host", "host/path", "%41", String(repeating: "a", count: 300), ":8080",
    ])
    func aHostileHostHeaderFallsBackToTheServersBaseURL(_ host: String) throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://127.0.0.1:4567")
        let response = stub.respond(
            to: get("/users/mattt/repos", query: "per_page=100", headers: ["Host": host]), now: now)
        let value = try #require(response.header("Link"))
        let links = LinkHeader(parsing: value)
        #expect(links.links.count == 2)
        #expect(links.next?.hasPrefix("http://127.0.0.1:4567/user/") == true, "\(value)")
        #expect(links.last?.hasPrefix("http://127.0.0.1:4567/user/") == true, "\(value)")
    }

    @Test(arguments: ["localhost", "localhost:8080", "127.0.0.1:4567", "[::1]:9000", "[::1]", "api.example-1.test"])
    func aWellFormedHostHeaderIsKeptInLinks(_ host: String) throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://unused")
        let response = stub.respond(
            to: get("/users/mattt/repos", query: "per_page=100", headers: ["Host": host]), now: now)
        #expect(LinkHeader(parsing: try #require(response.header("Link"))).next?.hasPrefix("http://\(host)/user/") == true)
    }

    @Test(arguments: [("", 30), ("per_page=500", 100), ("per_page=0", 30), ("per_page=x", 30), ("per_page=7", 7)])
    func clampsPerPage(_ query: String, _ expected: Int) throws {
        var stub = GitHubStub(catalog: fixtureCatalog)
        let response = stub.respond(to: get("/users/mattt/repos", query: query), now: now)
        #expect(try JSONParser.parse(response.body).arrayValue?.count == expected)
    }

    @Test func aPageBeyondTheLastIsEmptyAndAUserWithExactlyOnePageHasNoLink() throws {
        var stub = GitHubStub(catalog: fixtureCatalog)
        let beyond = stub.respond(to: get("/users/mattt/repos", query: "per_page=100&page=9"), now: now)
        #expect(try JSONParser.parse(beyond.body).arrayValue == [])
        #expect(LinkHeader(parsing: try #require(beyond.header("Link"))).next == nil)
        let exact = stub.respond(to: get("/users/kylef/repos", query: "per_page=100"), now: now)
        #expect(try JSONParser.parse(exact.body).arrayValue?.count == 100)
        #expect(exact.header("Link") == nil)
    }

    /// A page number near `Int.max` is a request anyone can type; multiplying it by the page
    /// size overflowed and trapped, which took the whole server (its lws service thread) down.
    @Test(arguments: ["page=9223372036854775807", "per_page=100&page=92233720368547758"])
    func aHugePageNumberIsAnEmptyPageNotACrash(_ query: String) throws {
        var stub = GitHubStub(catalog: fixtureCatalog, baseURL: "http://stub")
        let response = stub.respond(to: get("/users/mattt/repos", query: query), now: now)
        #expect(response.status == 200)
        let items = try #require(try JSONParser.parse(response.body).arrayValue)
        #expect(items.isEmpty)
        #expect(LinkHeader(parsing: try #require(response.header("Link"))).next == nil)
    }

    @Test func matchingIfNoneMatchIsA304ThatCostsNoRateLimit() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, rateLimit: GitHubStubRateLimit(limit: 2))
        let first = stub.respond(to: get("/users/gaearon"), now: now)
        let etag = try #require(first.header("ETag"))
        for tag in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
            let again = stub.respond(
                to: get("/users/gaearon", headers: ["If-None-Match": tag, "Authorization": "Bearer t"]), now: now)
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("X-RateLimit-Remaining") == "1")
        }
        let stale = stub.respond(to: get("/users/gaearon", headers: ["If-None-Match": "\"stale\""]), now: now)
        #expect(stale.status == 200)
        #expect(stale.header("ETag") == etag)
        #expect(stub.counters.notModified == 4)
        #expect(stub.counters.charged == 2)
    }

    /// GitHub: a 304 is free "if the request was made while correctly authorized with an
    /// Authorization header". The stub made every 304 free, so an app revalidating without a
    /// token (60 requests an hour on GitHub) looked free against it and ran out on GitHub.
    @Test func anAnonymous304IsChargedAndRefusedOnceTheLimitIsSpent() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, rateLimit: GitHubStubRateLimit(limit: 2))
        let etag = try #require(stub.respond(to: get("/users/gaearon"), now: now).header("ETag"))
        let again = stub.respond(to: get("/users/gaearon", headers: ["If-None-Match": etag]), now: now)
        #expect(again.status == 304)
        #expect(again.header("X-RateLimit-Remaining") == "0")
        let refused = stub.respond(to: get("/users/gaearon", headers: ["If-None-Match": etag]), now: now)
        #expect(refused.status == 403)
        #expect(stub.counters.charged == 2)
        let authorized = stub.respond(
            to: get("/users/gaearon", headers: ["If-None-Match": etag, "Authorization": "Bearer t"]), now: now)
        #expect(authorized.status == 304, "free, so not refused")
    }

    @Test func refusesPastTheLimitUntilTheWindowResets() throws {
        var stub = GitHubStub(catalog: fixtureCatalog, rateLimit: GitHubStubRateLimit(limit: 2, window: .seconds(60)))
        for _ in 0..<2 { #expect(stub.respond(to: get("/users/tj"), now: now).status == 200) }
        let refused = stub.respond(to: get("/users/tj"), now: now.addingTimeInterval(30))
        #expect(refused.status == 403)
        #expect(refused.header("X-RateLimit-Remaining") == "0")
        #expect(refused.header("X-RateLimit-Reset") == "1750000060")
        #expect(refused.text.contains("API rate limit exceeded for"))
        let authenticated = stub.respond(to: get("/nowhere", headers: ["Authorization": "Bearer t"]), now: now)
        #expect(authenticated.status == 403)
        #expect(authenticated.text.contains("user ID"))
        let later = stub.respond(to: get("/users/tj"), now: now.addingTimeInterval(60))
        #expect(later.status == 200)
        #expect(later.header("X-RateLimit-Used") == "1")
        #expect(stub.counters.rateLimited == 2)
    }

    @Test(arguments: [
        "/users/no-such-user", "/users/no-such-user/repos", "/user/999999999", "/nowhere", "/users/octocat/gists",
    ])
    func unknownUsersAndPathsAre404WithGitHubsBody(_ path: String) throws {
        var stub = GitHubStub(catalog: fixtureCatalog)
        let response = stub.respond(to: get(path), now: now)
        #expect(response.status == 404)
        let body = try JSONParser.parse(response.body)
        #expect(body["message"]?.stringValue == "Not Found")
        #expect(body["documentation_url"]?.stringValue?.hasPrefix("https://docs.github.com/rest") == true)
        #expect(response.header("X-RateLimit-Used") == "1")
    }

    @Test func onlyGetAndHeadAreServed() {
        var stub = GitHubStub(catalog: fixtureCatalog)
        #expect(stub.respond(to: HTTPRequest(method: "POST", path: "/users/octocat"), now: now).status == 404)
        #expect(stub.respond(to: HTTPRequest(method: "HEAD", path: "/users/octocat"), now: now).status == 200)
    }

    @Test func faultsApplyPerLoginOrEverywhere() throws {
        var stub = GitHubStub(catalog: fixtureCatalog)
        stub.setFault(.garbage, for: "Mattt")
        let garbage = stub.respond(to: get("/users/mattt"), now: now)
        #expect(garbage.status == 200)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(garbage.body) }
        #expect(stub.respond(to: get("/users/octocat"), now: now).status == 200)

        stub.setFault(.wrongShape, for: "mattt")
        let shape = try JSONParser.parse(stub.respond(to: get("/users/mattt/repos"), now: now).body)
        #expect(shape.arrayValue?.first?["full_name"] == nil)

        stub.setFault(.secondaryRateLimit(retryAfterSeconds: 42), for: "mattt")
        let secondary = stub.respond(to: get("/users/mattt"), now: now)
        #expect(secondary.status == 429)
        #expect(secondary.header("Retry-After") == "42")

        stub.setFault(nil, for: "mattt")
        stub.globalFault = .down
        #expect(stub.respond(to: get("/users/octocat"), now: now).status == 500)
        #expect(stub.respond(to: get("/users/mattt/repos"), now: now).status == 500)
        stub.globalFault = nil
        #expect(stub.respond(to: get("/users/mattt"), now: now).status == 200)
    }

    @Test func countsRequestsAndRecordsTheirHeaders() {
        var stub = GitHubStub(catalog: fixtureCatalog)
        _ = stub.respond(
            to: get("/users/ole", headers: ["Authorization": "Bearer abc", "User-Agent": "t/1"]), now: now)
        _ = stub.respond(to: get("/users/ghost-of-nobody"), now: now)
        #expect(stub.counters.requests == 2)
        #expect(stub.counters.count(status: 200) == 1)
        #expect(stub.counters.count(status: 404) == 1)
        #expect(stub.counters.paths["/users/ole"] == 1)
        #expect(stub.counters.lastAuthorization == nil)
        #expect(stub.counters.lastUserAgent == nil)
        stub.resetCounters()
        #expect(stub.counters == GitHubStubCounters())
    }

    @Test func etagsAreStableAndDifferPerBody() {
        var a = GitHubStub(catalog: fixtureCatalog)
        var b = GitHubStub(catalog: fixtureCatalog)
        let one = a.respond(to: get("/users/torvalds"), now: now).header("ETag")
        let two = b.respond(to: get("/users/torvalds"), now: now.addingTimeInterval(99)).header("ETag")
        let other = a.respond(to: get("/users/defunkt"), now: now).header("ETag")
        #expect(one == two)
        #expect(one != other)
    }
}
