import Foundation

#if canImport(Glibc)
import Glibc

/// Wakes its owner when named files of a directory change (Linux inotify), so the phone sees
/// another process's commit to `phone.db`, and a WatchConnectivity phone app the active watch
/// `watchrelay switch-watch` chose, as an event instead of checking on a timer.
///
/// A dedicated thread blocks in `poll` on the inotify descriptor and on a pipe that ``stop()``
/// wakes; nothing waits on a cooperative-pool thread. Changes are coalesced: one element of
/// ``changes`` stands for every change since the last one was taken, and the owner then reads
/// what changed (for the phone: SQLite's `data_version`, which moves only for other
/// connections' commits, so its own writes cost one cheap check each).
public final class FileChangeSignal: Sendable {
    /// One element per batch of changes to the watched files; finishes after ``stop()``.
    public let changes: AsyncStream<Void>
    private let stopWriteEnd: LockedState<Int32?>

    /// Watches `names` inside `directory` (which must exist); nil where inotify is unavailable
    /// (the watch limit is reached, or the directory cannot be watched).
    public init?(directory: String, names: Set<String>) {
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            close(inotify)
            return nil
        }
        var pipeEnds: [Int32] = [-1, -1]
        // Glibc's module has no pipe2: a child spawned in between may inherit these ends, which
        // is why stop() writes a byte rather than relying on the close alone.
        guard pipe(&pipeEnds) == 0 else {
            close(inotify)
            return nil
        }
        for fd in pipeEnds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.changes = changes
        stopWriteEnd = LockedState(pipeEnds[1])
        let stopReadEnd = pipeEnds[0]
        let thread = Thread.named("file-changes") {
            Self.run(inotify: inotify, stop: stopReadEnd, names: names) { continuation.yield(()) }
            close(inotify)
            close(stopReadEnd)
            continuation.finish()
        }
        thread.start()
        continuation.onTermination = { [stopWriteEnd] _ in Self.stop(stopWriteEnd) }
    }

    deinit {
        stop()
    }

    /// Ends the thread and ``changes``; safe to call more than once.
    public func stop() {
        Self.stop(stopWriteEnd)
    }

    private static func stop(_ writeEnd: LockedState<Int32?>) {
        // A byte on the pipe wakes the thread's poll.
        if let fd = writeEnd.withLock({ end -> Int32? in
            defer { end = nil }
            return end
        }) {
            var byte: UInt8 = 1
            _ = write(fd, &byte, 1)
            close(fd)
        }
    }

    /// The thread's loop: returns when `stop` is readable or hung up, or inotify fails.
    private static func run(inotify: Int32, stop: Int32, names: Set<String>, changed: () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { return }
            let count = read(inotify, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            let records = buffer.prefix(count)
            // An overflowed queue lost events, perhaps of the watched files: a change, to be safe.
            if Self.names(in: records).contains(where: names.contains) || Self.overflowed(records) { changed() }
        }
    }

    /// Whether one of the `inotify_event` records in `bytes` reports `IN_Q_OVERFLOW` (the
    /// kernel's queue was full and events were dropped).
    public static func overflowed(_ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset + 16 <= bytes.endIndex {
            let mask = bytes[(offset + 4)..<(offset + 8)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
            let length = bytes[(offset + 12)..<(offset + 16)].reversed().reduce(0) { $0 << 8 | Int($1) }
            offset += 16 + length
        }
        return false
    }

    /// The file names of the `inotify_event` records in `bytes` (each a 16-byte header —
    /// wd, mask, cookie, len, in host byte order: little-endian on every Linux WatchRelay builds
    /// for — then `len` bytes of NUL-padded name).
    public static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        var offset = bytes.startIndex
        while offset + 16 <= bytes.endIndex {
            let lengthBytes = bytes[(offset + 12)..<(offset + 16)]
            let length = lengthBytes.reversed().reduce(0) { $0 << 8 | Int($1) }
            let nameStart = offset + 16
            guard nameStart + length <= bytes.endIndex else { break }
            let name = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
            if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
            offset = nameStart + length
        }
        return names
    }
}
#endif
