#include <sqlite3.h>

/* A GNU extension the Swift Glibc module hides (it is built without _GNU_SOURCE): names the
   storage threads so ps, top and perf can tell them apart. */
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);

/* Linux's sync_file_range(2), also hidden without _GNU_SOURCE: the checkpointer starts the WAL's
   write-back early with it (SYNC_FILE_RANGE_WRITE = 2), so checkpoint fsyncs find little left. */
extern int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);
