#include <sqlite3.h>

/* A GNU extension the Swift Glibc module hides (it is built without _GNU_SOURCE): names the
   storage threads so ps, top and perf can tell them apart. */
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);
