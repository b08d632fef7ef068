import CSQLite
import Foundation
import SQLite
import TestSupport
import Testing

@testable import RelayStore

/// The generic SQLite wrapper: settings, statements, errors, transactions, migrations.
struct SQLiteDatabaseTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = TemporaryDirectory()
    }

    // MARK: - Settings

    @Test func fileDatabaseUsesWALFullSyncAndForeignKeys() throws {
        let db = try SQLiteDatabase(path: directory.path("a.sqlite"))
        #expect(try db.pragma("journal_mode") == "wal")
        #expect(try db.pragma("synchronous") == "2")  // FULL
        #expect(try db.pragma("foreign_keys") == "1")
    }

    @Test(arguments: [(SQLiteDatabase.Synchronous.full, "2"), (.normal, "1"), (.off, "0")])
    func synchronousModeIsConfigurable(mode: SQLiteDatabase.Synchronous, expected: String) throws {
        let db = try SQLiteDatabase(path: directory.path("s.sqlite"), configuration: .init(synchronous: mode))
        #expect(try db.pragma("synchronous") == expected)
    }

    @Test func unopenableFileIsAnErrorNamingTheOperation() throws {
        let error = try #require(throws: SQLiteError.self) {
            try SQLiteDatabase(path: directory.path("missing-dir/x.sqlite"))
        }
        #expect(error.code == SQLITE_CANTOPEN)
        #expect(error.operation.hasPrefix("open "))
    }

    // MARK: - Statements

    @Test func valuesRoundTripIncludingEmptyTextAndBlob() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute(script: "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let rows: [[SQLiteValue]] = [
            [.integer(.max), .real(1.5), .text("héllo ✓"), .blob([0, 1, 255]), .null],
            [.integer(-1), .real(0), .text(""), .blob([]), .null],
        ]
        for row in rows { try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row) }

        let read = try db.query("SELECT i, r, s, b, n, s IS NULL, b IS NULL FROM t ORDER BY rowid") { row in
            [
                SQLiteValue.integer(row.int64(0)), .real(row.double(1)), .text(row.text(2)), .blob(row.bytes(3)),
                row.isNull(4) ? .null : .text("?"), .integer(row.int64(5) + row.int64(6)),
            ]
        }
        #expect(read.map { Array($0.prefix(5)) } == rows)
        #expect(read.map { $0[5] } == [.integer(0), .integer(0)])  // empty values are not NULL
    }

    @Test func statementsAreCachedAndReusable() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        let insert = "INSERT INTO t VALUES (?)"
        for x in 0..<10 { try db.execute(insert, [.integer(Int64(x))]) }
        #expect(try db.statement(insert) === db.statement(insert))
        #expect(try db.query("SELECT sum(x) FROM t") { $0.int64(0) } == [45])
    }

    @Test func badSQLIsAnErrorWithCodeMessageAndOperation() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        let error = try #require(throws: SQLiteError.self) { try db.execute("SELEKT 1") }
        #expect(error.primaryCode == SQLITE_ERROR)
        #expect(error.message.contains("syntax error"))
        #expect(error.operation == "prepare: SELEKT 1")
    }

    @Test func foreignKeyViolationCarriesTheExtendedCode() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute(script: "CREATE TABLE p (id TEXT PRIMARY KEY); CREATE TABLE c (p TEXT REFERENCES p(id));")
        let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO c VALUES ('none')") }
        #expect(error.code == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
        #expect(error.operation.hasPrefix("step: "))
    }

    // MARK: - Transactions

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        struct Abort: Error {}
        let db = try SQLiteDatabase(path: directory.path("t.sqlite"))
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        #expect(throws: Abort.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                throw Abort()
            }
        }
        #expect(!db.isInTransaction)
        try db.transaction { try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try db.query("SELECT x FROM t") { $0.int64(0) } == [2])
    }

    // MARK: - Migrations

    @Test func migratingAnEmptyFileSetsUserVersion() throws {
        let path = directory.path("m.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let db = try SQLiteDatabase(path: path)
        #expect(try db.userVersion() == 0)
        let result = try db.migrate(Self.migrations)
        #expect(result == (from: 0, to: 2))
        #expect(try db.userVersion() == 2)
        #expect(try db.query("SELECT name FROM t") { $0.text(0) } == ["v2"])
        #expect(try db.migrate(Self.migrations) == (from: 2, to: 2))
    }

    @Test func migrationAppliesOnlyTheMissingSteps() throws {
        let path = directory.path("m.sqlite")
        try SQLiteDatabase(path: path).migrate(Array(Self.migrations.prefix(1)))
        let db = try SQLiteDatabase(path: path)
        #expect(try db.migrate(Self.migrations) == (from: 1, to: 2))
        #expect(try db.query("SELECT name FROM t") { $0.text(0) } == ["v2"])
    }

    @Test func failedMigrationLeavesTheOldSchema() throws {
        let db = try SQLiteDatabase(path: directory.path("m.sqlite"))
        let broken = Self.migrations + [Migration(version: 3, name: "broken", sql: "ALTER TABLE nope ADD x")]
        #expect(throws: SQLiteError.self) { try db.migrate(broken) }
        #expect(try db.userVersion() == 0)
        #expect(try db.query("SELECT count(*) FROM sqlite_schema") { $0.int64(0) } == [0])
    }

    @Test func newerSchemaIsRefusedAndLeftUntouched() throws {
        let path = directory.path("m.sqlite")
        try SQLiteDatabase(path: path).setUserVersion(999)
        let db = try SQLiteDatabase(path: path)
        #expect(throws: RelayStoreError.schemaTooNew(found: 999, supported: 2)) { try db.migrate(Self.migrations) }
        #expect(try db.userVersion() == 999)
    }

    // MARK: - Fixtures

    static let migrations = [
        Migration(version: 1, name: "create", sql: "CREATE TABLE t (name TEXT); INSERT INTO t VALUES ('v1');"),
        Migration(version: 2, name: "rename") { db in try db.execute("UPDATE t SET name = ?", [.text("v2")]) },
    ]
}
