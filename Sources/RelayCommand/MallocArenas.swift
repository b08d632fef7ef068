import CMalloc

#if canImport(Glibc)
    import Glibc
#endif

/// The relay's malloc: one arena for every thread.
///
/// glibc gives each thread an arena of its own at its first allocation (up to 8 per core, then
/// they are shared), each with pages of its own that stay resident. The relay allocates almost
/// only on its service thread; the store's writer, the console and the Swift runtime's threads
/// allocate little, so the arenas they got cost memory and saved nothing: one arena took 0.25
/// MiB off what 1,000 pairs add to the relay's RSS, and measured no CPU difference on the
/// message and durable paths (BENCHMARKS.md, "One malloc arena"). An arena limit in the
/// environment (`MALLOC_ARENA_MAX`, or `arena_max` in `GLIBC_TUNABLES`), if set, wins.
public enum MallocArenas {
    /// Limits this process to one arena, unless the environment sets a limit; call it first
    /// thing, before other threads allocate (a thread keeps the arena it already has).
    public static func useOne() {
        #if canImport(Glibc)
            guard getenv("MALLOC_ARENA_MAX") == nil else { return }
            if let tunables = getenv("GLIBC_TUNABLES"), String(cString: tunables).contains("arena_max") { return }
            _ = mallopt(relay_m_arena_max, 1)
        #endif
    }
}
