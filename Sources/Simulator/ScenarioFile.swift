import Foundation

/// Reads a scenario file's bytes: a regular file, or a pipe (`simulate <(make-scenario)`,
/// `/dev/stdin`), which `FileManager.contents(atPath:)` answered as unreadable (nil, "cannot
/// read /dev/fd/63"); why one cannot be read, in the system's words (`Is a directory`); and no
/// more than ``maxBytes`` (a scenario is a few KiB; a device such as `/dev/zero` never ends).
enum ScenarioFile {
    /// The largest scenario file read.
    static let maxBytes = 4 << 20

    /// The bytes of `path`.
    /// - Throws: ``ScenarioError/invalid(_:)`` naming `path` and why.
    static func read(_ path: String) throws(ScenarioError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw cannotRead(path, errno) }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw cannotRead(path, errno) }
            if n == 0 { return data }
            data.append(contentsOf: chunk[0..<n])
            guard data.count <= maxBytes else {
                throw .invalid("\(path): larger than \(maxBytes >> 20) MiB, not a scenario")
            }
        }
    }

    private static func cannotRead(_ path: String, _ code: Int32) -> ScenarioError {
        .invalid("cannot read \(path): \(String(cString: strerror(code)))")
    }
}
