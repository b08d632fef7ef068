#if canImport(Glibc)
    import Glibc

    /// What every `posix_spawn` of this project sets up: the child's signals, and glibc's file
    /// actions that Swift's Glibc module leaves out (declared under `_GNU_SOURCE`; looked up at
    /// run time).
    public enum SpawnActions {
        private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        private typealias ChangeDirectory =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

        /// Sets `attributes` for a child that starts with an empty signal mask and default
        /// SIGINT, SIGTERM, SIGHUP and SIGPIPE (a cooperative-pool thread blocks some of them, a
        /// child inherits the spawning thread's mask, and a test run under `nohup` would pass its
        /// ignored SIGHUP on); `ownProcessGroup` also gives it a group of its own.
        public static func resetSignals(_ attributes: inout posix_spawnattr_t, ownProcessGroup: Bool = false) {
            var mask = sigset_t()
            sigemptyset(&mask)
            posix_spawnattr_setsigmask(&attributes, &mask)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
            if ownProcessGroup {
                posix_spawnattr_setpgroup(&attributes, 0)
                flags |= POSIX_SPAWN_SETPGROUP
            }
            posix_spawnattr_setflags(&attributes, Int16(flags))
        }

        /// Adds "close every descriptor from `lowest` up" (glibc 2.34+); false where it is missing.
        public static func closeFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) -> Bool {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return false }
            return unsafeBitCast(symbol, to: CloseFrom.self)(&actions, lowest) == 0
        }

        /// Adds "change to `directory`" (glibc 2.29+); false where it is missing.
        public static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, _ directory: String) -> Bool {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
            else { return false }
            return directory.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(&actions, $0) == 0 }
        }
    }
#endif
