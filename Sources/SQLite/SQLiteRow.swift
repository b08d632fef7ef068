import CSQLite

/// The current row of a stepping ``SQLiteStatement``, read column by column (0-based).
///
/// A row is a view: it is valid only until its statement steps again or is reset, so it must
/// not escape the closure it was given to. Every accessor copies the value out of SQLite.
public struct SQLiteRow {
    /// The statement, owned by its ``SQLiteStatement``; this view never finalizes it.
    let handle: OpaquePointer

    /// The number of columns in the row.
    public var count: Int { Int(sqlite3_column_count(handle)) }

    /// Whether the column holds SQL `NULL`.
    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The column as an integer (`NULL` reads as 0).
    public func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column as an integer, or `nil` for `NULL`.
    public func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    /// The column as a double (`NULL` reads as 0).
    public func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// The column as text (`NULL` reads as the empty string).
    public func text(_ column: Int32) -> String {
        // The bytes are owned by SQLite and valid until the next step/reset of the statement;
        // they are copied into the String here. `column_text` must come before `column_bytes`
        // so the byte count is that of the UTF-8 form.
        guard let base = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    /// The column as text, or `nil` for `NULL`.
    public func optionalText(_ column: Int32) -> String? {
        isNull(column) ? nil : text(column)
    }

    /// The column's bytes, as stored (a TEXT column gives its UTF-8; `NULL` gives no bytes).
    public func bytes(_ column: Int32) -> [UInt8] {
        // Owned by SQLite until the next step/reset; copied into the array here.
        guard let base = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The column's bytes, or `nil` for `NULL`.
    public func optionalBytes(_ column: Int32) -> [UInt8]? {
        isNull(column) ? nil : bytes(column)
    }
}

@available(*, unavailable, message: "a row is a view into a statement confined to its database's owner")
extension SQLiteRow: Sendable {}
