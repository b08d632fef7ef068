import CSQLite

/// A value bound to a statement parameter.
public enum SQLiteValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// UTF-8 text given as its bytes, bound as TEXT as they are (no `String` in between, no
    /// validation): for bytes already checked as UTF-8, such as a payload the relay decoded.
    case utf8(ArraySlice<UInt8>)
    /// Raw bytes.
    case blob([UInt8])
}

/// A prepared SQLite statement: bind, step, read columns, reset.
///
/// Not `Sendable`: a statement belongs to its ``SQLiteDatabase`` and is used only by the
/// owner of that database (in WatchRelay, an actor). Statements from
/// ``SQLiteDatabase/statement(_:)`` are cached and reused, so callers reset them after use;
/// ``execute(_:)`` and ``query(_:_:)`` do that themselves.
public final class SQLiteStatement {
    /// The SQL text, for error messages.
    public let sql: String
    /// The prepared statement, owned by this object and finalized in `deinit`.
    private let handle: OpaquePointer
    /// The connection, owned by the ``SQLiteDatabase`` that created this statement.
    private let connection: OpaquePointer

    /// Prepares `sql` on `connection` (one statement; trailing text is an error).
    ///
    /// - Parameter persistent: Hints SQLite that the statement will be reused many times.
    init(sql: String, connection: OpaquePointer, persistent: Bool) throws(SQLiteError) {
        self.sql = sql
        self.connection = connection
        var prepared: OpaquePointer?
        var tailOffset = 0
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        // The SQL bytes are owned by the Swift string and valid only inside the closure;
        // SQLite reads them during prepare and keeps its own copy. `tail` points into the
        // same buffer and is turned into an offset before the closure returns.
        let code = sql.utf8CString.withUnsafeBufferPointer { buffer -> Int32 in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, buffer.baseAddress, Int32(buffer.count), flags, &prepared, &tail)
            if let tail, let base = buffer.baseAddress { tailOffset = tail - base }
            return code
        }
        try check(code, operation: "prepare: \(sql)", connection: connection)
        guard let prepared else {
            // SQLite gives no statement for empty SQL or a lone comment.
            throw SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement", operation: "prepare: \(sql)")
        }
        let rest = sql.utf8.dropFirst(tailOffset).filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }
        guard rest.isEmpty || rest == [UInt8(ascii: ";")] else {
            sqlite3_finalize(prepared)
            throw SQLiteError(
                code: SQLITE_MISUSE, message: "more than one statement; use execute(script:)",
                operation: "prepare: \(sql)")
        }
        self.handle = prepared
    }

    deinit {
        // Finalize returns the last step's error again; it was already reported by `step`.
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1…n, after clearing earlier bindings.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE` if there are more values than parameters).
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try check(sqlite3_clear_bindings(handle), operation: "clear bindings: \(sql)", connection: connection)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the parameter at `index` (1-based).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let v):
            code = sqlite3_bind_int64(handle, index, v)
        case .real(let v):
            code = sqlite3_bind_double(handle, index, v)
        case .text(var s):
            code = s.withUTF8 { bindText($0, at: index) }
        case .utf8(let bytes):
            code = bytes.withUnsafeBufferPointer { bindText($0, at: index) }
        case .blob(let bytes):
            // Owned by the Swift array for the closure's duration; SQLITE_TRANSIENT copies it.
            code = bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, raw.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob(handle, index, base, Int32(raw.count), relay_sqlite_transient())
            }
        }
        try check(code, operation: "bind #\(index): \(sql)", connection: connection)
    }

    /// Binds UTF-8 bytes as TEXT. They are valid only for the caller's closure; SQLITE_TRANSIENT
    /// makes SQLite copy them before this returns. Empty text has no base address, and binding a
    /// null pointer would bind NULL, hence the literal.
    private func bindText(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        guard let base = utf8.baseAddress, utf8.count > 0 else {
            return sqlite3_bind_text(handle, index, "", 0, relay_sqlite_transient())
        }
        return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
            sqlite3_bind_text(handle, index, $0, Int32(utf8.count), relay_sqlite_transient())
        }
    }

    /// Advances to the next row; `true` if there is one, `false` when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        try check(sqlite3_step(handle), operation: "step: \(sql)", connection: connection) == SQLITE_ROW
    }

    /// The current row (valid until the next ``step()`` or ``reset()``).
    public var row: SQLiteRow { SQLiteRow(handle: handle) }

    /// Rewinds the statement so it can run again (bindings are kept until the next ``bind(_:)``).
    public func reset() {
        // sqlite3_reset repeats the code of the last step, which `step` already checked and
        // threw; resetting itself cannot fail.
        sqlite3_reset(handle)
    }

    /// Binds `values`, runs the statement to completion, ignoring any rows, and resets it.
    public func execute(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Binds `values`, maps every row through `transform`, and resets the statement.
    ///
    /// - Parameter transform: Reads one row; the ``SQLiteRow`` must not escape the closure.
    public func query<T>(_ values: [SQLiteValue] = [], _ transform: (SQLiteRow) throws -> T) throws -> [T] {
        defer { reset() }
        try bind(values)
        var results: [T] = []
        while try step() {
            results.append(try transform(row))
        }
        return results
    }
}

@available(*, unavailable, message: "a statement is confined to the owner of its database")
extension SQLiteStatement: Sendable {}
