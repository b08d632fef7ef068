import CSQLite
import Foundation

/// A database file that cannot be used, said so that its owner can act: the file, what is wrong
/// with it, and what to do.
///
/// Every store (the relay's, the phone's, the watch's, a session's) opens its file through
/// ``SQLiteDatabase/open(path:configuration:migrations:option:)``, which turns the SQLite or
/// store error into one of these. Its ``description`` is the one line the CLI prints before it
/// exits with 1, e.g. `relay.db: not a WatchRelay database: move it away or pass another --db`.
public struct DatabaseFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Problem: Sendable, Equatable {
        /// Not an SQLite file (garbage, another format), or an SQLite file of another program.
        case notADatabase
        /// The file, or the directory it lives in (where SQLite puts its `-wal` and `-shm`
        /// companions), cannot be written.
        case readOnly(directory: String)
        /// The directory the file would be created in does not exist.
        case missingDirectory(String)
        /// The file is an SQLite file whose pages or rows do not read back (a crash without
        /// durable writes, a disk fault, a copy cut short).
        case damaged
        /// Written by a newer WatchRelay (its schema version is above this program's).
        case schemaTooNew(found: Int32, supported: Int32)
        /// Another process (a relay) has the file open (``DatabaseOwnerLock``).
        case inUse(lockFile: String)
        /// Anything else SQLite refused (I/O errors, a full disk, a lock held too long).
        case failed
    }

    /// The database file.
    public var path: String
    /// What is wrong with it.
    public var problem: Problem
    /// The option that names the file or its directory (`--db`, `--state`), for the remedy.
    public var option: String
    /// The underlying error as it was reported (SQLite's code, operation and message).
    public var cause: String

    /// Creates an error from its parts.
    public init(path: String, problem: Problem, option: String, cause: String) {
        self.path = path
        self.problem = problem
        self.option = option
        self.cause = cause
    }

    /// Classifies `error`, thrown while opening, migrating or reading the file at `path`.
    public init(path: String, error: any Error, option: String) {
        self.path = path
        self.option = option
        self.cause = String(describing: error)
        if let e = error as? DatabaseFileError {
            self = e
            return
        }
        if let e = error as? RelayStoreError {
            switch e {
            case .schemaTooNew(let found, let supported): problem = .schemaTooNew(found: found, supported: supported)
            case .corruptRow: problem = .damaged
            case .foreignDatabase: problem = .notADatabase
            }
            return
        }
        guard let e = error as? SQLiteError else {
            problem = .failed
            return
        }
        let directory = Self.directory(of: path)
        switch e.primaryCode {
        case SQLITE_NOTADB: problem = .notADatabase
        case SQLITE_CORRUPT: problem = .damaged
        case SQLITE_READONLY, SQLITE_PERM: problem = .readOnly(directory: directory)
        case SQLITE_CANTOPEN:
            // SQLite says only "unable to open database file"; the file system says why.
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
                problem = .missingDirectory(directory)
            } else if access(directory, W_OK) != 0 || (FileManager.default.fileExists(atPath: path) && access(path, W_OK) != 0) {
                problem = .readOnly(directory: directory)
            } else {
                problem = .failed
            }
        default: problem = .failed
        }
    }

    /// The file, what is wrong, the remedy, and the underlying error, on one line.
    public var description: String {
        let what: String
        switch problem {
        case .notADatabase:
            what = "not a WatchRelay database: move it away or pass another \(option)"
        case .readOnly(let directory):
            what = "read-only: check permissions of \(directory) (the file and its directory must be writable)"
        case .missingDirectory(let directory):
            what = "directory \(directory) does not exist: create it or pass another \(option)"
        case .damaged:
            what = "damaged after a crash: restore from backup or remove it (its queued items are lost)"
        case .schemaTooNew(let found, let supported):
            what =
                "written by a newer WatchRelay (schema \(found), this program reads up to \(supported)):"
                + " use a newer WatchRelay or pass another \(option)"
        case .inUse:
            what = "in use by another process (a relay on the same file): stop it or pass another \(option)"
        case .failed:
            what = "cannot be used"
        }
        return "\(path): \(what) (\(cause))"
    }

    /// The directory holding `path` (`.` for a bare file name).
    static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

extension SQLiteDatabase {
    /// Opens the database at `path`, brings its schema to the last of `migrations`, and turns
    /// any failure into a ``DatabaseFileError`` that says what to do.
    ///
    /// - Parameters:
    ///   - path: A file path, or `:memory:`.
    ///   - configuration: Durability, locking and journal settings.
    ///   - migrations: The file's schema history (see ``migrate(_:)``).
    ///   - option: The command-line option that names the file or its directory, for the remedy.
    public static func open(
        path: String, configuration: Configuration = Configuration(), migrations: [Migration], option: String
    ) throws(DatabaseFileError) -> SQLiteDatabase {
        do {
            let database = try SQLiteDatabase(path: path, configuration: configuration)
            try database.migrate(migrations)
            return database
        } catch {
            throw DatabaseFileError(path: path, error: error, option: option)
        }
    }
}
