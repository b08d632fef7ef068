import Foundation

/// `posix_spawn` with what every `watchrelay` child process needs: an empty signal mask and
/// default SIGINT, SIGTERM and SIGPIPE (a cooperative-pool thread blocks SIGTERM, and a child
/// inherits the spawning thread's mask, so a `Process` child never sees the SIGTERM that should
/// stop it). `files` sets up the child's descriptors.
///
/// - Returns: the child's pid, or `posix_spawn`'s error number.
public func spawnChild(
    _ executable: String, _ arguments: [String], files: (inout posix_spawn_file_actions_t) -> Void
) -> Result<pid_t, SpawnError> {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    files(&actions)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    // The strdup copies live until posix_spawn returned (it copies them into the child).
    var cArguments: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for argument in cArguments { free(argument) } }
    var child: pid_t = 0
    let status = posix_spawn(&child, executable, &actions, &attributes, &cArguments, environ)
    return status == 0 ? .success(child) : .failure(SpawnError(code: status))
}

/// `posix_spawn` failed with this error number.
public struct SpawnError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public var description: String { String(cString: strerror(code)) }
}
