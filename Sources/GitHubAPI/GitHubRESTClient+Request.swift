import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One GET with the GitHub headers and ETag revalidation.
extension GitHubRESTClient {
    /// A usable answer: a fresh or revalidated body, and its `Link` header.
    struct Page: Sendable {
        var body: Data
        var link: String?
    }

    /// The API version every request pins (GitHub's `X-GitHub-Api-Version`).
    static let apiVersion = "2022-11-28"

    /// Sends `GET url` (with `If-None-Match` when cached) and resolves the answer.
    func get(_ url: URL, login: String) async throws(GitHubError) -> Page {
        let key = url.absoluteString
        let cached = await cache.entry(for: key)
        let request = makeRequest(url, ifNoneMatch: cached?.etag)
        let data: Data
        let response: URLResponse
        do {
            if let transfers {
                (data, response) = try await transfers.data(for: request, on: session)
            } else {
                (data, response) = try await session.dataSafelyCancellable(for: request)
            }
        } catch {
            throw Self.unavailable(error, url: url, timeout: request.timeoutInterval)
        }
        guard let http = response as? HTTPURLResponse else {
            throw .malformedResponse("\(key): not an HTTP response")
        }
        switch try GitHubHTTPReply(http, body: data).resolve(login: login, cached: cached, now: now()) {
        case .fresh(let body, let etag, let link):
            if let etag, !etag.isEmpty {
                await cache.store(ETagCache.Entry(etag: etag, body: body, link: link), for: key)
            }
            return Page(body: body, link: link)
        case .notModified(let entry):
            // The cached entry may have been evicted meanwhile; the copy sent as validator is as good.
            let reused = await cache.reuse(key) ?? entry
            return Page(body: reused.body, link: reused.link)
        }
    }

    /// The request with GitHub's headers, no local caching, and the per-request timeout.
    func makeRequest(_ url: URL, ifNoneMatch etag: String?) -> URLRequest {
        let seconds = Double(requestTimeout.components.seconds) + Double(requestTimeout.components.attoseconds) * 1e-18
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = "GET"
        request.setValue("application/vnd.github+json", forHTTPHeaderField: "Accept")
        request.setValue(Self.apiVersion, forHTTPHeaderField: "X-GitHub-Api-Version")
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        if let token, !token.isEmpty {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        if let etag {
            request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        return request
    }

    /// The ``GitHubError/unavailable(_:)`` for a request that got no HTTP answer.
    static func unavailable(_ error: any Error, url: URL, timeout: TimeInterval) -> GitHubError {
        let target = "\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")"
        if error is CancellationError { return .unavailable("request to \(target) cancelled") }
        if let bound = error as? BoundedTransfers.Failure {
            switch bound {
            case .tooLarge(let bytes): return .unavailable("\(target): answer larger than \(bytes) bytes")
            case .tooSlow(let limit): return .unavailable("\(target): answer took longer than \(limit.components.seconds) s")
            case .stillArriving(let n):
                return .unavailable("\(target): not asked: \(n) answers cut short earlier (too large or too slow) are still arriving")
            }
        }
        guard let urlError = error as? URLError else { return .unavailable("request to \(target) failed: \(error)") }
        let reason: String =
            switch urlError.code {
            case .timedOut: "timed out after \(timeout.formatted()) s"
            case .cannotConnectToHost: "connection refused"
            case .cannotFindHost, .dnsLookupFailed: "host not found"
            case .networkConnectionLost: "connection lost"
            case .notConnectedToInternet: "not connected to the internet"
            case .cancelled: "cancelled"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
                "TLS failed"
            case .badServerResponse, .cannotParseResponse: "bad server response"
            case .httpTooManyRedirects: "too many redirects"
            case .cannotDecodeContentData, .cannotDecodeRawData: "the body does not decode as its Content-Encoding says"
            case .unsupportedURL: "the answer is not HTTP"
            // corelibs' catch-all for a transfer libcurl gave up on: a body shorter than its
            // Content-Length, an encoding that is not what it says.
            case .unknown: "the answer broke off or is malformed"
            default: "URL error \(urlError.code.rawValue)"
            }
        return .unavailable("\(target): \(reason)")
    }
}
