import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Waits for the test suites that never block a thread of Swift's cooperative pool.
//
// The pool has as many threads as the machine has cores (two in CI). A test that parks one of
// them in `poll(2)` or `waitUntilExit` while it waits for an in-process relay, whose engine
// needs that pool to answer, slows every other test in the run, and two such tests at once
// stall it: under ThreadSanitizer a transport test once timed out waiting for echoes that way.
// Polling from the pool every millisecond instead was no better: a dozen waiting sockets made
// thousands of task wake-ups a second, and the TSan run took twice as long. So the blocking
// call runs on a thread of its own, and the task waits for it without holding a pool thread.

/// Waits until `fd` has something to read (data, end of file or an error), at most
/// `timeoutMilliseconds`; false on timeout. Never blocks the calling thread.
public func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32) async -> Bool {
    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    if poll(&ready, 1, 0) > 0 { return true }
    return await onOwnThread {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let result = poll(&poller, 1, timeoutMilliseconds)
            if result < 0 && errno == EINTR { continue }
            return result > 0
        }
    }
}

/// Waits for `process` to end (e.g. after SIGKILL) without blocking the calling thread.
public func waitForExit(_ process: TestProcess) async {
    await process.ended()
}

/// Reads `handle` (a child's standard output) to its end without blocking the calling thread:
/// a blocking read would hold one of the test run's few cooperative threads for the child's
/// whole run (seconds, with child processes of its own).
public func readToEnd(_ handle: FileHandle) async -> String {
    await onOwnThread { String(decoding: handle.readDataToEndOfFile(), as: UTF8.self) }
}

/// Runs the blocking `body` on a new thread; the caller's task waits without holding a thread.
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (done: CheckedContinuation<T, Never>) in
        Thread { done.resume(returning: body()) }.start()
    }
}
