import Foundation

/// Standard error as a sink that never ends the process. `FileHandle.write(_:)` traps when the
/// write fails, and it fails with EPIPE once the reader of a pipe is gone (`2>&1 | head -1`, a
/// log shipper that restarted): a relay died of its own "shutting down" line that way, and an
/// app using WatchConnectivity would die of a warning. Here such a line is lost instead.
public enum StandardError {
    private static let lock = LockedState<Void>(())

    /// Writes `text` as it is (add the newline); lines from different threads never interleave.
    public static func write(_ text: String) {
        let data = Data(text.utf8)
        lock.withLock { _ in try? FileHandle.standardError.write(contentsOf: data) }
    }
}
