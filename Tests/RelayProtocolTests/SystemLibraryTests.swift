import CSQLite
import CWebSockets
import Testing

/// Proves the two system libraries link and work from Swift.
@Suite struct SystemLibraryTests {
    @Test func libwebsocketsContextCanBeCreatedAndDestroyed() {
        lws_set_log_level(0, nil)
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.gid = -1
        info.uid = -1
        let context = lws_create_context(&info)
        #expect(context != nil)
        lws_context_destroy(context)
        #expect(relay_lws_pre == 16)
    }

    @Test func sqliteOpensAnInMemoryDatabase() {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (42);", nil, nil, nil) == SQLITE_OK)
        var stmt: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &stmt, nil) == SQLITE_OK)
        #expect(sqlite3_step(stmt) == SQLITE_ROW)
        #expect(sqlite3_column_int(stmt, 0) == 42)
        sqlite3_finalize(stmt)
        sqlite3_close(db)
    }
}
