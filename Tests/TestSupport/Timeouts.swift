import Foundation

/// Runs `body`, failing with a ``TestFailure`` that names `what` when it takes longer than
/// `seconds` (not scaled); `body` is cancelled then.
public func withTimeout<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TestFailure("timed out after \(seconds) s waiting for \(what)")
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// Polls `condition` every 10 ms until it holds; fails with a ``TestFailure`` that names `what`
/// after `seconds` × ``timeoutScale``.
public func eventually(
    _ seconds: Double = 5, _ what: String = "a condition", _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * timeoutScale * 1000)))
    // Looks once more after the deadline: on a loaded machine this task may first run again
    // after it, and the condition can have come true meanwhile.
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { break }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("timed out after \(seconds) s waiting for \(what)")
}
