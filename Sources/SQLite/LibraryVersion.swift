import CSQLite

extension SQLiteDatabase {
    /// The SQLite library's version at run time, e.g. `3.40.1` (for `--version`).
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
