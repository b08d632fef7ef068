import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when
/// the last reference goes.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates `watchrelay-test-<UUID>` in the temporary directory.
    public init() {
        path = NSTemporaryDirectory() + "watchrelay-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String {
        URL(fileURLWithPath: path).appendingPathComponent(name).path
    }

    /// Writes `text` at `relativePath`, creating the folders on the way.
    public func write(_ text: String, to relativePath: String) {
        let url = URL(fileURLWithPath: path).appendingPathComponent(relativePath)
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? Data(text.utf8).write(to: url)
    }
}
