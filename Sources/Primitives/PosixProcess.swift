import Foundation

#if canImport(Glibc)
    import Glibc

    /// A child process with the part of Foundation's `Process` API the tests use, started with
    /// `posix_spawn`: the package's tests (`TestProcess`) and apps' own tests (`WatchRelayTesting`'s
    /// app processes) start their children with it.
    ///
    /// Not Foundation's `Process`: in Swift 6.3.1 its `run()` scans `/proc/self/fd` with a 256-byte
    /// copy of every entry's name and over-reads glibc's readdir buffer once the test process holds
    /// more than ~1,300 descriptors (swift-corelibs-foundation#5472) — it crashed CI with SIGSEGV,
    /// and a parallel `swift test` holds over 2,500 at its peak. Here the child closes every
    /// descriptor above 2 itself (`posix_spawn_file_actions_addclosefrom_np`), so no pipe of another
    /// test leaks into it. The child gets an empty signal mask and default SIGINT, SIGTERM and
    /// SIGPIPE (a cooperative-pool thread blocks some of them) and a process group of its own.
    ///
    /// Set the properties, then ``run()``, from one task; after that any thread may read the state.
    /// A dedicated thread blocks in `waitpid`, so the end is an event (``ended()``).
    public final class PosixProcess: @unchecked Sendable {  // configuration before run(), then LockedState
        public var executableURL: URL?
        public var arguments: [String] = []
        /// nil: this process's environment.
        public var environment: [String: String]?
        public var currentDirectoryURL: URL?
        /// A `Pipe` (the child gets its reading end), a `FileHandle` (`FileHandle.nullDevice`, this
        /// process's own standard input — the default — or any other), or nil for /dev/null.
        public var standardInput: Any? = FileHandle.standardInput
        /// A `Pipe` (the child gets its writing end), a `FileHandle`, or nil for /dev/null.
        public var standardOutput: Any? = FileHandle.standardOutput
        /// Like ``standardOutput``.
        public var standardError: Any? = FileHandle.standardError

        private struct State {
            var pid: pid_t = 0
            /// The raw wait status once the child was reaped.
            var status: Int32?
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        private let state = LockedState(State())
        private let reaped = NSCondition()

        public init() {}

        /// The child's pid (0 before ``run()``).
        public var processIdentifier: Int32 { state.withLock { $0.pid } }

        /// Started and not reaped yet.
        public var isRunning: Bool { state.withLock { $0.pid != 0 && $0.status == nil } }

        /// The exit status, or the signal that ended it (like `Process`); 0 while it runs.
        public var terminationStatus: Int32 {
            guard let raw = state.withLock({ $0.status }) else { return 0 }
            return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
        }

        /// `.uncaughtSignal` when a signal ended it.
        public var terminationReason: Process.TerminationReason {
            guard let raw = state.withLock({ $0.status }) else { return .exit }
            return raw & 0x7F == 0 ? .exit : .uncaughtSignal
        }

        /// Starts the child. Throws an `NSError` (Cocoa domain, the POSIX error underneath, e.g.
        /// ETXTBSY) when it cannot be started.
        public func run() throws {
            guard let path = executableURL?.path else { throw PosixProcessError("PosixProcess.run() without an executableURL") }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            let handles: [(Int32, Any?)] = [(0, standardInput), (1, standardOutput), (2, standardError)]
            for (target, handle) in handles {
                switch handle {
                case let pipe as Pipe:
                    let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                    posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
                case let file as FileHandle where file === FileHandle.nullDevice:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                case let file as FileHandle:
                    if file.fileDescriptor != target { posix_spawn_file_actions_adddup2(&actions, file.fileDescriptor, target) }
                default:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                }
            }
            if let directory = currentDirectoryURL?.path {
                guard SpawnActions.changeDirectory(&actions, directory) else {
                    throw PosixProcessError("posix_spawn_file_actions_addchdir_np is missing: cannot start \(path) in \(directory)")
                }
            }
            // After the dup2s, which clear close-on-exec on fds 0–2: nothing else reaches the child.
            _ = SpawnActions.closeFrom(&actions, 3)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            SpawnActions.resetSignals(&attributes, ownProcessGroup: true)

            let environment = environment ?? ProcessInfo.processInfo.environment
            var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
            var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let status = posix_spawn(&pid, path, &actions, &attributes, &argv, &envp)
            guard status == 0 else {
                throw NSError(
                    domain: NSCocoaErrorDomain, code: CocoaError.fileReadUnknown.rawValue,
                    userInfo: [
                        NSFilePathErrorKey: path, NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(status)),
                    ])
            }
            // The child's ends of its pipes are the child's now (as `Process` does).
            if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
            if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
            if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
            let child = pid
            state.withLock { $0.pid = child }
            let reaper = Thread { [state, reaped] in
                let pid = child
                var raw: Int32 = 0
                var result = waitpid(pid, &raw, 0)
                while result < 0 && errno == EINTR { result = waitpid(pid, &raw, 0) }
                let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    s.status = result == pid ? raw : 0
                    defer { s.waiters = [] }
                    return s.waiters
                }
                reaped.lock()
                reaped.broadcast()
                reaped.unlock()
                for waiter in waiters { waiter.resume() }
            }
            reaper.name = "reap-\(child)"
            reaper.start()
        }

        /// SIGTERM.
        public func terminate() { signal(SIGTERM) }

        /// SIGINT.
        public func interrupt() { signal(SIGINT) }

        private func signal(_ number: Int32) {
            let pid = processIdentifier
            if pid != 0 && isRunning { kill(pid, number) }
        }

        /// Returns once the child ended and was reaped; never blocks a thread.
        public func ended() async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.pid == 0 || s.status != nil { return true }
                    s.waiters.append(waiter)
                    return false
                }
                if now { waiter.resume() }
            }
        }

        /// Blocks the calling thread until the child was reaped (not on a cooperative-pool thread:
        /// use ``ended()`` there).
        public func waitUntilExit() {
            reaped.lock()
            defer { reaped.unlock() }
            while isRunning { reaped.wait() }
        }
    }

    /// ``PosixProcess/run()`` was called without what it needs.
    public struct PosixProcessError: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }
#endif
