import Foundation
import GitHubAPI
import Testing

struct ETagCacheTests {
    private func entry(_ tag: String) -> ETagCache.Entry {
        ETagCache.Entry(etag: "\"\(tag)\"", body: Data(tag.utf8))
    }

    @Test func storesReusesAndCountsReuse() async {
        let cache = ETagCache()
        await cache.store(entry("a"), for: "u1")
        #expect(await cache.entry(for: "u1") == entry("a"))
        #expect(await cache.reuse("u1") == entry("a"))
        #expect(await cache.reuse("u2") == nil)
        #expect(await cache.reuseCount == 1)
    }

    @Test func evictsTheLeastRecentlyUsed() async {
        let cache = ETagCache(maxEntries: 2)
        await cache.store(entry("a"), for: "u1")
        await cache.store(entry("b"), for: "u2")
        _ = await cache.reuse("u1")
        await cache.store(entry("c"), for: "u3")
        #expect(await cache.count == 2)
        #expect(await cache.entry(for: "u2") == nil)
        #expect(await cache.entry(for: "u1") != nil)
    }

    @Test func entriesRoundTripThroughCodableForPersistence() async throws {
        let cache = ETagCache()
        await cache.store(ETagCache.Entry(etag: "W/\"x\"", body: Data([0, 1, 2]), link: "<n>; rel=\"next\""), for: "u")
        let data = try JSONEncoder().encode(await cache.entries)
        let restored = ETagCache(entries: try JSONDecoder().decode([String: ETagCache.Entry].self, from: data))
        #expect(await restored.entries == cache.entries)
        await restored.removeAll()
        #expect(await restored.count == 0)
    }
}
