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
// These waits poll without blocking and sleep between looks instead.

/// Waits until `fd` has something to read (data, end of file or an error), at most
/// `timeoutMilliseconds`; false on timeout. Never blocks the calling thread.
public func waitReadable(_ fd: Int32, timeoutMilliseconds: Int32) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeoutMilliseconds))
    while true {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, 0) > 0 { return true }
        if ContinuousClock.now >= deadline { return false }
        // A cancelled test keeps waiting out its timeout rather than spinning.
        do { try await Task.sleep(for: .milliseconds(1)) } catch { await sleepIgnoringCancellation() }
    }
}

/// Waits for `process` to end (e.g. after SIGKILL) without blocking the calling thread.
public func waitForExit(_ process: Process) async {
    while process.isRunning {
        do { try await Task.sleep(for: .milliseconds(2)) } catch { await sleepIgnoringCancellation() }
    }
}

/// One millisecond's pause that a cancelled task also gets (`Task.sleep` returns at once then).
private func sleepIgnoringCancellation() async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { done.resume() }
    }
}
