import CSQLite

/// A failure reported by SQLite: its result code, its message and what was being done.
///
/// Every SQLite return code goes through ``check(_:operation:connection:)``, so a failure
/// always names the operation (`"prepare: INSERT INTO items …"`, `"step: COMMIT"`) as well
/// as the extended result code SQLite gave.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The (extended) SQLite result code, e.g. `SQLITE_BUSY` (5) or `SQLITE_CONSTRAINT_FOREIGNKEY` (787).
    public var code: Int32
    /// SQLite's own message (`sqlite3_errmsg`, or `sqlite3_errstr` when there is no connection).
    public var message: String
    /// What the wrapper was doing: the C call's purpose and, where there is one, the SQL.
    public var operation: String

    /// Creates an error from its parts.
    public init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// The primary result code (the low byte of ``code``), e.g. `SQLITE_CONSTRAINT` for any constraint failure.
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether a statement failed on a foreign key (a row whose parent row is missing); the
    /// statement's changes were undone and a transaction around it goes on.
    public var isForeignKeyViolation: Bool {
        // SQLITE_CONSTRAINT_FOREIGNKEY, a macro Swift does not import.
        code == SQLITE_CONSTRAINT | (3 << 8)
    }

    /// The code, the operation and SQLite's message on one line, for logs.
    public var description: String { "SQLite error \(code) during \(operation): \(message)" }
}

/// Throws a ``SQLiteError`` unless `code` is `SQLITE_OK`, `SQLITE_ROW` or `SQLITE_DONE`, and returns `code` otherwise.
///
/// The single funnel for SQLite return codes: callers never compare codes themselves, except
/// to tell `SQLITE_ROW` from `SQLITE_DONE` after a successful step.
/// - Parameters:
///   - code: A value returned by a `sqlite3_*` function.
///   - operation: Describes the call for the error; evaluated only on failure.
///   - connection: The connection whose `sqlite3_errmsg` explains the failure, if any.
@discardableResult
func check(
    _ code: Int32, operation: @autoclosure () -> String, connection: OpaquePointer? = nil
) throws(SQLiteError) -> Int32 {
    switch code {
    case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
        return code
    default:
        // Both strings are owned by SQLite (errmsg: by the connection, until its next call;
        // errstr: static), so they are copied into a Swift String at once and never freed here.
        let message: String
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "unknown error"
        }
        throw SQLiteError(code: code, message: message, operation: operation())
    }
}
