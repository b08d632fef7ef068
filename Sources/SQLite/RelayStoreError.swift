/// Why the relay's store (or another database built on ``SQLiteDatabase``) refused to work.
///
/// Failures of SQLite itself are ``SQLiteError`` values, which carry the C result code;
/// these cases are the store's own judgments about what it read.
public enum RelayStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's `user_version` is newer than any migration this program knows: it was
    /// written by a newer WatchRelay, and opening it could corrupt it.
    case schemaTooNew(found: Int32, supported: Int32)
    /// A stored row could not be decoded (bad JSON, an unknown role); names the table and why.
    case corruptRow(table: String, reason: String)
    /// The file is an SQLite database of another program: schema version 0, yet it has tables
    /// (migrating it would mix our tables into someone else's file).
    case foreignDatabase(tables: [String])

    /// What went wrong and what to do about it, on one line, for logs and the CLI.
    public var description: String {
        switch self {
        case .schemaTooNew(let found, let supported):
            return "the database has schema version \(found), but this program supports up to \(supported);"
                + " use a newer WatchRelay or another database file"
        case .corruptRow(let table, let reason):
            return "a row of table '\(table)' cannot be read: \(reason)"
        case .foreignDatabase(let tables):
            return "the database has no WatchRelay schema version but has tables (\(tables.prefix(5).joined(separator: ", ")))"
        }
    }
}
