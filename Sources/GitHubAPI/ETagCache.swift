import Foundation

/// An in-memory cache of GitHub answers keyed by request URL, for `If-None-Match` revalidation.
///
/// The REST client stores every 200 that carries an `ETag`, sends that ETag with the next
/// request for the same URL, and reuses the stored body (and `Link` header) when GitHub answers
/// 304 Not Modified, which costs no rate limit. Entries are ``Entry`` values, `Codable`, so a
/// caller can persist ``entries`` and hand them back to ``init(maxEntries:entries:)`` later.
///
/// The cache holds at most ``maxEntries`` URLs (default 512); past that, the entry stored or
/// reused longest ago is evicted.
public actor ETagCache {
    /// One cached answer: the validator and what to reuse on a 304.
    public struct Entry: Sendable, Hashable, Codable {
        /// The `ETag` header as GitHub sent it, quotes and any `W/` prefix included.
        public var etag: String
        /// The response body.
        public var body: Data
        /// The `Link` header of the response, if any (a page's neighbours).
        public var link: String?

        /// Creates an entry.
        public init(etag: String, body: Data, link: String? = nil) {
            self.etag = etag
            self.body = body
            self.link = link
        }
    }

    /// The largest number of URLs kept.
    public let maxEntries: Int
    private var storage: [String: Entry]
    /// URLs from least to most recently used; the first is evicted first.
    private var recency: [String]
    /// How many times a 304 reused a cached body.
    public private(set) var reuseCount = 0

    /// Creates a cache, optionally pre-filled (e.g. from a persisted ``entries`` value).
    /// - Parameters:
    ///   - maxEntries: the largest number of URLs kept (default 512; at least 1).
    ///   - entries: initial entries by URL.
    public init(maxEntries: Int = 512, entries: [String: Entry] = [:]) {
        self.maxEntries = max(1, maxEntries)
        storage = entries
        recency = entries.keys.sorted()
        while storage.count > self.maxEntries { storage[recency.removeFirst()] = nil }
    }

    /// Every cached entry by URL, for persisting.
    public var entries: [String: Entry] { storage }

    /// The number of cached URLs.
    public var count: Int { storage.count }

    /// The entry for `url`, if any.
    public func entry(for url: String) -> Entry? {
        storage[url]
    }

    /// Stores (or replaces) the entry for `url`, evicting the least recently used past the limit.
    public func store(_ entry: Entry, for url: String) {
        storage[url] = entry
        touch(url)
        while storage.count > maxEntries { storage[recency.removeFirst()] = nil }
    }

    /// Returns the entry for `url` after a 304, counting the reuse and marking it recently used.
    public func reuse(_ url: String) -> Entry? {
        guard let entry = storage[url] else { return nil }
        reuseCount += 1
        touch(url)
        return entry
    }

    /// Forgets every entry.
    public func removeAll() {
        storage.removeAll()
        recency.removeAll()
    }

    private func touch(_ url: String) {
        if let index = recency.firstIndex(of: url) { recency.remove(at: index) }
        recency.append(url)
    }
}
