import Foundation
import Primitives

/// `posix_spawn` with what every `watchrelay` child process needs: an empty signal mask and
/// default SIGINT, SIGTERM and SIGPIPE (a cooperative-pool thread blocks SIGTERM, and a child
/// inherits the spawning thread's mask, so a `Process` child never sees the SIGTERM that should
/// stop it). `files` sets up the child's descriptors 0–2; every other one is closed in the child.
///
/// - Returns: the child's pid, or `posix_spawn`'s error number.
public func spawnChild(
    _ executable: String, _ arguments: [String], files: (inout posix_spawn_file_actions_t) -> Void
) -> Result<pid_t, SpawnError> {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    files(&actions)
    // Nothing but fds 0–2 reaches the child, also descriptors another thread opened without
    // close-on-exec (a test's `Pipe`, say).
    _ = SpawnActions.closeFrom(&actions, 3)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    SpawnActions.resetSignals(&attributes)
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

/// A started child: a dedicated thread blocks in `waitpid` for it, so its end is an event
/// (``ended()``, ``signal(_:grace:)`` await it) rather than something checked on a timer. It
/// stays in ``ChildProcesses``' live set until it is reaped, so an interrupted run can kill
/// whatever it started. Shared by the simulator's children and the benchmark's relays.
public final class SpawnedProcess: Sendable {
    /// The process ID.
    public let pid: pid_t
    private struct State {
        /// The wait status once the child was reaped.
        var exitStatus: Int32?
        /// When it was reaped.
        var endedAt: ContinuousClock.Instant?
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedState(State())

    /// Takes charge of `pid`, a child of this process that was just started.
    public init(pid: pid_t) {
        self.pid = pid
        ChildProcesses.live.withLock { _ = $0.insert(pid) }
        let state = state
        let reaper = Thread {
            var raw: Int32 = 0
            var result = waitpid(pid, &raw, 0)
            while result < 0 && errno == EINTR { result = waitpid(pid, &raw, 0) }
            ChildProcesses.live.withLock { _ = $0.remove(pid) }
            // ECHILD (reaped elsewhere) counts as ended, status unknown (0).
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.exitStatus = result == pid ? raw : 0
                s.endedAt = .now
                defer { s.waiters = [:] }
                return Array(s.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }
        reaper.name = "reap-\(pid)"
        // Ends when the child does: nothing waits for the thread, only for the status it stores.
        reaper.start()
    }

    /// Whether the child still runs (has not been reaped yet).
    public var isRunning: Bool {
        state.withLock { $0.exitStatus == nil }
    }

    /// Returns once the child ended and was reaped, or the waiting task was cancelled.
    public func ended() async {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.exitStatus != nil || Task.isCancelled { return true }
                    s.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Sends `signal` (if the child still runs), then waits up to `grace` (forever when nil)
    /// for it to be reaped; false if it still runs.
    @discardableResult
    public func signal(_ signal: Int32, grace: Duration? = nil) async -> Bool {
        guard isRunning else { return true }
        Glibc.kill(pid, signal)
        guard let grace else {
            await ended()
            return true
        }
        // The end, or one timer for the grace period, whichever comes first.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.ended() }
            group.addTask { try? await Task.sleep(for: grace) }
            await group.next()
            group.cancelAll()
        }
        return !isRunning
    }

    /// When the child was reaped (nil while it runs).
    public var endedAt: ContinuousClock.Instant? { state.withLock { $0.endedAt } }

    /// How the child ended: `killed by signal 9`, `exit status 0`, or nil while it runs.
    public var termination: String? {
        guard let raw = state.withLock({ $0.exitStatus }) else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which do not import into Swift.
        return raw & 0x7F == 0 ? "exit status \((raw >> 8) & 0xFF)" : "killed by signal \(raw & 0x7F)"
    }
}
