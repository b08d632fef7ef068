/// One step of a database's schema history, identified by the `user_version` it produces.
///
/// A database's migrations form an ordered list with versions 1, 2, 3, …; version *n* is
/// applied to a database at version *n − 1*. Never edit a migration that has shipped: add
/// the next one.
public struct Migration: Sendable {
    /// The `user_version` after this migration (1 for the first).
    public var version: Int32
    /// A short name for logs and errors, e.g. `"create tables"`.
    public var name: String
    /// Applies the change; runs inside the migration transaction.
    public var apply: @Sendable (SQLiteDatabase) throws -> Void

    /// A migration that runs arbitrary code (data moves, conditional changes).
    public init(version: Int32, name: String, apply: @escaping @Sendable (SQLiteDatabase) throws -> Void) {
        self.version = version
        self.name = name
        self.apply = apply
    }

    /// A migration that runs an SQL script (several statements separated by `;`).
    public init(version: Int32, name: String, sql: String) {
        self.init(version: version, name: name) { db in try db.execute(script: sql) }
    }
}

extension SQLiteDatabase {
    /// Brings the schema to the last of `migrations`, in one transaction, and returns the versions before and after.
    ///
    /// Reads `PRAGMA user_version`, applies every migration above it in order and stores the
    /// new version, all inside one `BEGIN IMMEDIATE` transaction: a crash leaves the old
    /// schema or the new one, and two processes opening the same file cannot both migrate.
    /// - Parameter migrations: Versions 1…n in order.
    /// - Precondition: `migrations` is non-empty and numbered 1, 2, 3, … without gaps.
    /// - Throws: ``RelayStoreError/schemaTooNew(found:supported:)`` if the file was written by a
    ///   newer program (it is left untouched), ``RelayStoreError/foreignDatabase(tables:)`` if a
    ///   file at version 0 already has tables, ``SQLiteError``, or what a migration throws.
    @discardableResult
    public func migrate(_ migrations: [Migration]) throws -> (from: Int32, to: Int32) {
        for (index, migration) in migrations.enumerated() {
            precondition(migration.version == Int32(index + 1), "migrations must be numbered 1, 2, 3, …")
        }
        let latest = Int32(migrations.count)
        let found = try userVersion()
        if found > latest { throw RelayStoreError.schemaTooNew(found: found, supported: latest) }
        if found == latest { return (found, found) }
        return try transaction(.immediate) {
            // Re-read under the write lock: another process may have migrated meanwhile.
            let current = try userVersion()
            if current > latest { throw RelayStoreError.schemaTooNew(found: current, supported: latest) }
            if current == 0 {
                // A file never migrated has no tables; one with tables belongs to another program.
                let tables = try query("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name") {
                    $0.text(0)
                }
                if !tables.isEmpty { throw RelayStoreError.foreignDatabase(tables: tables) }
            }
            for migration in migrations where migration.version > current {
                try migration.apply(self)
            }
            try setUserVersion(latest)
            return (current, latest)
        }
    }
}
