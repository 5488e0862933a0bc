#include <sqlite3.h>

/* A GNU extension the Swift Glibc module hides (it is built without _GNU_SOURCE): names the
   storage threads so ps, top and perf can tell them apart. */
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);

/* sqlite3_config is variadic, which Swift cannot call: the one setting the store makes. */
static inline int cupcake_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* sqlite3_db_config is variadic too: after a failed fsync the store closes its connections
   without SQLite's checkpoint-on-close, which would otherwise copy the WAL and delete it. */
static inline int cupcake_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
