import CMalloc

#if canImport(Glibc)
    import Glibc
#endif

/// The relay's malloc: one arena for every thread.
///
/// glibc gives a thread that allocates while another holds an arena's lock an arena of its own
/// (up to 8 per core), each with pages of its own that stay resident. The relay allocates almost
/// only on its service thread; the store's writer, the console and the Swift runtime's threads
/// allocate little, so the arenas they got cost memory and saved nothing: one arena took 0.25
/// MiB off what 1,000 pairs add to the relay's RSS, and measured no CPU difference on the
/// message and durable paths (BENCHMARKS.md, "One malloc arena"). `MALLOC_ARENA_MAX` in the
/// environment, if set, wins.
public enum MallocArenas {
    /// Limits this process to one arena, unless `MALLOC_ARENA_MAX` is set; call it first thing,
    /// before other threads allocate (a thread keeps the arena it already has).
    public static func useOne() {
        #if canImport(Glibc)
            guard getenv("MALLOC_ARENA_MAX") == nil else { return }
            _ = mallopt(relay_m_arena_max, 1)
        #endif
    }
}
