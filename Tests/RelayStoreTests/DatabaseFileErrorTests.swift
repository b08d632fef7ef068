import Foundation
import RelayProtocol
import RelayStore
import SQLite
import TestSupport
import Testing

/// A database file that cannot be used is refused with the file, the problem and the remedy.
/// (Read-only files and directories are tested with child processes in RelayServerTests, which
/// can drop root's permission override.)
@Suite struct DatabaseFileErrorTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path("relay.db") }

    @Test func garbageFileIsNotAWatchRelayDatabase() throws {
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))

        let error = try #require(throws: DatabaseFileError.self) { try RelayStore(path: path) }
        #expect(error.problem == .notADatabase)
        #expect(error.description.hasPrefix("\(path): not a WatchRelay database: move it away or pass another --db"))
        #expect(error.cause.contains("26"))
    }

    @Test func sqliteFileOfAnotherProgramIsNotAWatchRelayDatabase() throws {
        try SQLiteDatabase(path: path).execute(script: "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('mine');")

        let error = try #require(throws: DatabaseFileError.self) { try RelayStore(path: path) }
        #expect(error.problem == .notADatabase)
        #expect(error.cause.contains("notes"))
        // Left as it was: no WatchRelay table was added to it.
        let tables = try SQLiteDatabase(path: path).query("SELECT name FROM sqlite_master") { $0.text(0) }
        #expect(tables == ["notes"])
    }

    @Test func damagedFileSaysRestoreOrRemove() async throws {
        try await RelayStore(path: path).commit([.insertPair(Fixture.pair("p1"))])
        try scribble(over: path, from: 100, count: 3996)  // page 1's b-tree, after the file header

        let error = try await #require(throws: DatabaseFileError.self) { try await reload(path) }
        #expect(error.problem == .damaged)
        #expect(
            error.description.hasPrefix(
                "\(path): damaged after a crash: restore from backup or remove it (its queued items are lost)"))
    }

    @Test func missingDirectoryIsNamed() throws {
        let inMissing = directory.path("no-such-dir/relay.db")

        let error = try #require(throws: DatabaseFileError.self) { try RelayStore(path: inMissing) }
        #expect(error.problem == .missingDirectory(directory.path("no-such-dir")))
        #expect(error.description.contains("does not exist: create it or pass another --db"))
    }

    @Test func sqliteReadOnlyCodesAreReadOnly() {
        let error = DatabaseFileError(
            path: "/data/relay.db", error: SQLiteError(code: 8, message: "attempt to write a readonly database", operation: "step"),
            option: "--db")
        #expect(error.problem == .readOnly(directory: "/data"))
        #expect(error.description.hasPrefix("/data/relay.db: read-only: check permissions of /data"))
    }

    @Test func bareFileNameLivesInTheCurrentDirectory() {
        let error = DatabaseFileError(
            path: "relay.db", error: SQLiteError(code: 1544, message: "readonly", operation: "open"), option: "--db")
        #expect(error.problem == .readOnly(directory: "."))
    }
}

/// Overwrites `count` bytes of the file at `path` from `offset` with a pattern no SQLite page has.
func scribble(over path: String, from offset: UInt64, count: Int) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: offset)
    try handle.write(contentsOf: Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xA5) }))
}
