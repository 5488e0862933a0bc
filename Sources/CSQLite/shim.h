#include <sqlite3.h>

/* A GNU extension the Swift Glibc module hides (it is built without _GNU_SOURCE): names the
   storage threads so ps, top and perf can tell them apart. */
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);

/* sqlite3_config is variadic, which Swift cannot call: the one setting the store makes. */
static inline int cupcake_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
