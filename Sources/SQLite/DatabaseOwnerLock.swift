import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One relay process at a time on a database file: an advisory lock (`flock`) on `PATH-lock`
/// (PATH with its symbolic links resolved),
/// held while this object lives and released by the kernel when the process ends (`kill -9`
/// included, so a restart right after one never finds it taken).
///
/// Two relays on one `--db` each keep their own copy of the state in memory over the same
/// rows: sequence numbers collide and each deletes what the other delivered. SQLite's own
/// locks order the writes but cannot say that. The lock is on a file of its own: taken on the
/// database file, closing its descriptor would drop the POSIX locks SQLite holds on that file
/// (POSIX ties them to the process, not the descriptor). The relay's command takes it (a
/// process holds one); stores opened in one process, as tests do, are not locked.
public final class DatabaseOwnerLock {
    private let descriptor: Int32
    /// The lock file, `PATH-lock`.
    public let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock of `databasePath`; throws ``DatabaseFileError/Problem/inUse`` when another
    /// process holds it (`option` names the flag that picks another file). Nil when the lock
    /// file cannot be created (a missing or read-only directory): opening the database then
    /// says what is wrong, as it would have.
    public static func take(databasePath: String, option: String) throws(DatabaseFileError) -> DatabaseOwnerLock? {
        // The file SQLite opens: a symbolic link to it (or `..` through one) names the same lock.
        let path = resolved(databasePath) + "-lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            throw DatabaseFileError(
                path: databasePath, problem: code == EWOULDBLOCK ? .inUse(lockFile: path) : .failed, option: option,
                cause: "flock \(path): errno \(code)")
        }
        return DatabaseOwnerLock(descriptor: fd, path: path)
    }

    deinit {
        close(descriptor)  // releases the lock
    }

    /// `path` with its symbolic links and `..` resolved as far as it exists: POSIX `realpath`,
    /// or for a file not created yet its directory's real path and its name. (Not Foundation's
    /// `URL.resolvingSymlinksInPath`: run once at the relay's start, it left 2.7 MiB more of the
    /// static binary's pages resident in every figure of `make bench`.)
    static func resolved(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let real = realpath(directory, nil) else { return path }
        defer { free(real) }
        let parent = String(cString: real)
        return (parent == "/" ? "" : parent) + "/" + name
    }
}
