#ifndef WATCHRELAY_CSQLITE_SHIM_H
#define WATCHRELAY_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro cast of -1 to a function pointer, which Swift cannot
 * import; bind calls that need SQLite to copy the bytes use this. */
static inline sqlite3_destructor_type relay_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
