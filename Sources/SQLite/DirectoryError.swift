import Foundation

/// A directory that cannot be made or used (a state directory, `--snapshot`, `--out`), said
/// in one line as ``DatabaseFileError`` says a database file: the path, what is wrong, and the
/// option to change, e.g. `afile: a file, not a directory: pass another --state`.
///
/// Foundation's own error for these reads `Error Domain=NSCocoaErrorDomain Code=516 …
/// UserInfo={…}`: ``create(_:option:)`` makes the directory and turns such an error into this
/// one; ``check(_:option:)`` finds the same problems without creating anything (a command that
/// runs a while first, or one that must leave nothing behind when it fails).
public struct DirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory.
    public var path: String
    /// What is wrong with it, e.g. `afile is a file, not a directory`.
    public var problem: String
    /// The option that names it (`--state`, `--snapshot`, `--out`), for the remedy.
    public var option: String

    /// Creates an error from its parts.
    public init(path: String, problem: String, option: String) {
        self.path = path
        self.problem = problem
        self.option = option
    }

    public var description: String { "\(path): \(problem): pass another \(option)" }

    /// Makes `path` a directory (with its missing parents) unless it is one.
    public static func create(_ path: String, option: String) throws(DirectoryError) {
        try check(path, option: option)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // What `check` could not foresee (a file system that refuses, such as /proc).
            let underlying = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            let reason =
                underlying.map { $0.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32($0.code))) : $0.localizedDescription }
                ?? error.localizedDescription
            throw DirectoryError(path: path, problem: "cannot create the directory (\(reason))", option: option)
        }
    }

    /// Throws what would keep `path` from being a usable directory: it, or a parent of it, is
    /// something other than a directory, or the nearest existing parent of a missing one can't
    /// be written. Writes nothing.
    public static func check(_ path: String, option: String) throws(DirectoryError) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DirectoryError(path: path, problem: "a file, not a directory", option: option)
            }
            return
        }
        // Missing: the nearest part of the path that exists must be a directory we may write in.
        var parent = URL(fileURLWithPath: path).deletingLastPathComponent()
        while !fm.fileExists(atPath: parent.path, isDirectory: &isDirectory), parent.path != "/" {
            parent = parent.deletingLastPathComponent()
        }
        let shown = relative(parent.path, to: path)
        guard isDirectory.boolValue else {
            throw DirectoryError(path: path, problem: "\(shown) is a file, not a directory", option: option)
        }
        guard fm.isWritableFile(atPath: parent.path) else {
            throw DirectoryError(path: path, problem: "cannot create it: \(shown) is not writable", option: option)
        }
    }

    /// `ancestor` as the user wrote it in `path` when `path` is relative (`afile`, not
    /// `/home/me/afile`).
    private static func relative(_ ancestor: String, to path: String) -> String {
        guard !path.hasPrefix("/") else { return ancestor }
        let cwd = FileManager.default.currentDirectoryPath
        if ancestor == cwd { return "." }
        return ancestor.hasPrefix(cwd + "/") ? String(ancestor.dropFirst(cwd.count + 1)) : ancestor
    }
}
