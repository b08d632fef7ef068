import Foundation
import Primitives

/// A child process's standard output split into lines, read on a thread of its own.
///
/// The reader blocks in `read(2)` on a dedicated `Thread`, never on one of the few threads of
/// Swift's cooperative pool, and ends when the child closes its stdout (or exits). Waiting for a
/// line polls the buffer and sleeps in between. The state is a ``LockedState`` (ThreadSanitizer
/// cannot see `Synchronization.Mutex`).
public final class ChildOutput: Sendable {
    private struct State {
        /// Bytes after the last newline.
        var partial = Data()
        /// Whole lines not yet taken, oldest first.
        var lines: [String] = []
        /// The child closed its stdout.
        var closed = false
    }

    private let state = LockedState(State())

    /// Starts reading `handle` (e.g. a `Pipe`'s `fileHandleForReading`) until end of file.
    public init(reading handle: FileHandle) {
        let state = self.state
        Thread {
            while true {
                let chunk = handle.availableData
                state.withLock { s in
                    guard !chunk.isEmpty else {
                        s.closed = true
                        return
                    }
                    s.partial.append(chunk)
                    while let newline = s.partial.firstIndex(of: UInt8(ascii: "\n")) {
                        s.lines.append(String(decoding: s.partial[s.partial.startIndex..<newline], as: UTF8.self))
                        s.partial = Data(s.partial[(newline + 1)...])
                    }
                }
                if chunk.isEmpty { return }
            }
        }.start()
    }

    /// Whether the child closed its stdout (every line it wrote has been read by then).
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Takes the lines up to and including the first that starts with `prefix`: that line (nil
    /// when none came yet, and then every line so far is dropped), and whether the output ended.
    public func take(startingWith prefix: String) -> (line: String?, closed: Bool) {
        state.withLock { s in
            while !s.lines.isEmpty {
                let line = s.lines.removeFirst()
                if line.hasPrefix(prefix) { return (line, s.closed) }
            }
            return (nil, s.closed)
        }
    }

    /// Takes every line read so far.
    public func takeAll() -> [String] {
        state.withLock { s in
            defer { s.lines = [] }
            return s.lines
        }
    }

    /// Waits for the next line that starts with `prefix` (earlier lines are dropped); fails with
    /// a ``TestFailure`` that names `child` when the output ends first, or after `seconds` ×
    /// ``timeoutScale``.
    public func line(startingWith prefix: String, from child: String, within seconds: Double) async throws -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * timeoutScale * 1000))
        // Looks once more after the deadline: on a loaded machine this task may first run again
        // after it, and what it waited for can have come meanwhile.
        while true {
            let (line, closed) = take(startingWith: prefix)
            if let line { return line }
            if closed { throw TestFailure("\(child) exited before printing '\(prefix)…'") }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("\(child) printed no '\(prefix)…' line within \(seconds * timeoutScale) s")
    }

    /// The lines up to one starting with `prefix`, none dropped: every line taken by the time it
    /// came (it included); fails with a ``TestFailure`` that names `child` when the output ends
    /// first, or after `seconds` × ``timeoutScale``.
    public func lines(through prefix: String, from child: String, within seconds: Double) async throws -> [String] {
        var taken: [String] = []
        let deadline = ContinuousClock.now + .seconds(seconds * timeoutScale)
        while true {
            let closed = isClosed
            taken += takeAll()
            if taken.contains(where: { $0.hasPrefix(prefix) }) { return taken }
            guard !closed, ContinuousClock.now < deadline else {
                throw TestFailure("\(child): no line starting with \"\(prefix)\" (\(closed ? "output ended" : "timed out")): \(taken)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
