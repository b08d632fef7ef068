import Foundation

extension Thread {
    /// A thread (not started) that runs `body` under the name `name`, as `top -H`, `ps -L`,
    /// `perf` and `gdb` show it: Foundation on Linux drops a `name` set before `start()`, so
    /// every thread showed the process's name.
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        Thread {
            nameCurrentThread(name)
            body()
        }
    }

    /// Names the calling thread `name`, cut to the 15 bytes Linux keeps (its `comm`; Glibc's
    /// `pthread_setname_np` is not visible to Swift).
    static func nameCurrentThread(_ name: String) {
        var short = name
        while short.utf8.count > 15 { short.removeLast() }
        try? short.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
    }
}
