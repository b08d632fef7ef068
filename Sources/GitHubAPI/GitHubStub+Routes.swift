import RelayProtocol
import WebSocketTransport

/// Routing, pagination and bodies of the fixture GitHub API.
extension GitHubStub {
    /// GitHub's default page size.
    static let defaultPerPage = 30
    /// GitHub's largest page size.
    static let maxPerPage = 100

    /// A route's answer before rate limiting and the standard headers.
    struct Routed {
        /// The answer if the request is charged.
        var response: HTTPResponse
        /// The answer's ETag, set for a 200 that may be revalidated.
        var etag: String?
        /// The fault in force for the request's login, if any.
        var fault: GitHubStubFault?

        var status: Int { response.status }
    }

    /// What a path names.
    private enum Target {
        case root
        case user(GitHubFixtureCatalog.Account)
        case repos(GitHubFixtureCatalog.Account)
        case unknownUser(String, repos: Bool)
        case unknownPath
    }

    /// The answer to a request, with the faults applied.
    mutating func route(_ request: HTTPRequest) -> Routed {
        let target = resolve(request)
        let login: String? =
            switch target {
            case .user(let account), .repos(let account): account.login
            case .unknownUser(let login, _): login
            case .root, .unknownPath: nil
            }
        let fault = login.flatMap { self.fault(for: $0) } ?? globalFault
        if let fault, let faulty = Self.faulty(fault, target: target) {
            return Routed(response: faulty, etag: faulty.headers.first { $0.name == "ETag" }?.value, fault: fault)
        }
        var response: HTTPResponse
        switch target {
        case .root:
            let base = linkBase(request)
            response = Self.json(
                status: 200,
                [
                    "current_user_url": .string("\(base)/user"),
                    "user_url": .string("\(base)/users/{user}"),
                    "user_repositories_url": .string("\(base)/users/{user}/repos{?type,page,per_page,sort}"),
                ])
        case .user(let account):
            response = HTTPResponse(
                status: 200, contentType: Self.jsonContentType,
                body: Self.rebased(JSONWriter.encode(account.user), to: linkBase(request)))
        case .repos(let account):
            response = page(of: account, request: request)
        case .unknownUser(_, let repos):
            let doc = repos ? "repos/repos#list-repositories-for-a-user" : "users/users#get-a-user"
            response = Self.notFound(documentation: "https://docs.github.com/rest/\(doc)")
        case .unknownPath:
            response = Self.notFound(documentation: "https://docs.github.com/rest")
        }
        guard response.status == 200 else { return Routed(response: response, etag: nil, fault: fault) }
        let etag = Self.etag(of: response.body)
        response.headers.insert(HTTPHeader(name: "ETag", value: etag), at: 0)
        response.headers.append(HTTPHeader(name: "Cache-Control", value: "private, max-age=60, s-maxage=60"))
        // A secondary rate limit refuses even a request that would be 304.
        let revalidatable = fault == nil
        return Routed(response: response, etag: revalidatable ? etag : nil, fault: fault)
    }

    private func resolve(_ request: HTTPRequest) -> Target {
        guard request.method == "GET" || request.method == "HEAD" else { return .unknownPath }
        var path = request.path
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if parts == [""] { return .root }
        guard parts.count == 2 || (parts.count == 3 && parts[2] == "repos") else { return .unknownPath }
        let isRepos = parts.count == 3
        let account: GitHubFixtureCatalog.Account?
        switch parts[0] {
        case "users": account = catalog.account(login: parts[1])
        case "user": account = Int64(parts[1]).flatMap { catalog.account(id: $0) }
        default: return .unknownPath
        }
        guard let account else { return .unknownUser(parts[1], repos: isRepos) }
        return isRepos ? .repos(account) : .user(account)
    }

    /// One page of an account's repositories, with GitHub's `Link` header.
    private mutating func page(of account: GitHubFixtureCatalog.Account, request: HTTPRequest) -> HTTPResponse {
        let items = request.queryItems
        let perPage = min(
            Self.maxPerPage, items["per_page"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? Self.defaultPerPage)
        let page = max(1, items["page"].flatMap { Int($0) } ?? 1)
        let lastPage = max(1, (account.repos.count + perPage - 1) / perPage)
        // Past the last page, the end: `(page - 1) * perPage` of a typed-in page near Int.max
        // would overflow, and trap on the transport's service thread.
        let start = page > lastPage ? account.repos.count : (page - 1) * perPage
        let end = min(account.repos.count, start + perPage)
        var headers: [HTTPHeader] = []
        let base = linkBase(request)
        if lastPage > 1 || page > 1 {
            // GitHub links a user's repo pages by user ID: /user/{id}/repos?per_page=…&page=…
            let root = "\(base)/user/\(account.id)/repos?per_page=\(perPage)&page="
            var links = LinkHeader()
            if page > 1 {
                links.links["prev"] = root + String(min(page - 1, lastPage))
                links.links["first"] = root + "1"
            }
            if page < lastPage {
                links.links["next"] = root + String(page + 1)
                links.links["last"] = root + String(lastPage)
            }
            if let value = links.value { headers.append(HTTPHeader(name: "Link", value: value)) }
        }
        return HTTPResponse(
            status: 200, contentType: Self.jsonContentType,
            body: Self.rebased(encodedPage(of: account, start..<end), to: base), headers: headers)
    }

    /// The compact JSON array of some of an account's repositories (what `JSONWriter` gives for
    /// the slice), from repository encodings made once each: encoding is most of the cost of a
    /// page, and this runs on the transport's service thread.
    private mutating func encodedPage(of account: GitHubFixtureCatalog.Account, _ range: Range<Int>) -> [UInt8] {
        var encoded = encodedRepos[account.id] ?? Array(repeating: nil, count: account.repos.count)
        var body: [UInt8] = [UInt8(ascii: "[")]
        for index in range {
            let repo = encoded[index] ?? JSONWriter.encode(account.repos[index])
            encoded[index] = repo
            if index > range.lowerBound { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: repo)
        }
        body.append(UInt8(ascii: "]"))
        encodedRepos[account.id] = encoded
        return body
    }

    /// The answer a fault gives instead of the route's, or `nil` if it applies later (rate limits).
    private static func faulty(_ fault: GitHubStubFault, target: Target) -> HTTPResponse? {
        let body: [UInt8]
        switch fault {
        case .secondaryRateLimit:
            return nil
        case .down:
            return json(status: 500, ["message": "Server Error"])
        case .garbage:
            return HTTPResponse(
                status: 200, contentType: "text/html; charset=utf-8",
                body: Array("<html><body><h1>Unicorn!</h1> This page is taking too long to load.</body></html>".utf8))
        case .wrongShape:
            if case .repos = target {
                body = JSONWriter.encode([["id": 1, "name": "half-a-repo", "fork": false]])
            } else {
                body = JSONWriter.encode(["login": "octocat", "id": "583231"])
            }
        }
        let etag = etag(of: body)
        return HTTPResponse(
            status: 200, contentType: jsonContentType, body: body, headers: [HTTPHeader(name: "ETag", value: etag)])
    }

    /// GitHub's 404 body.
    static func notFound(documentation: String) -> HTTPResponse {
        json(
            status: 404,
            ["message": "Not Found", "documentation_url": .string(documentation), "status": "404"])
    }

    /// A strong ETag for a body: a quoted 64-bit FNV-1a hash and the length, in hex.
    static func etag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return "\"\(hex(hash, width: 16))\(hex(UInt64(body.count), width: 8))\""
    }

    private static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
