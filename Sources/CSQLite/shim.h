#ifndef WATCHRELAY_CSQLITE_SHIM_H
#define WATCHRELAY_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro cast of -1 to a function pointer, which Swift cannot
 * import; bind calls that need SQLite to copy the bytes use this. */
static inline sqlite3_destructor_type relay_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/* sqlite3_config is variadic, which Swift cannot call. Memory statistics (on by default)
 * take a global mutex around every allocation SQLite makes; the relay reads none of them.
 * Returns SQLITE_MISUSE, changing nothing, once SQLite is initialised. */
static inline int relay_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
