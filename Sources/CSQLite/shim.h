#include <sqlite3.h>

/* A GNU extension the Swift Glibc module hides (it is built without _GNU_SOURCE): names the
   storage threads so ps, top and perf can tell them apart. */
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);

/* Linux's sync_file_range(2), also hidden without _GNU_SOURCE: the checkpointer starts the WAL's
   write-back early with it (SYNC_FILE_RANGE_WRITE = 2), so checkpoint fsyncs find little left. */
extern int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);

/* sqlite3_config is variadic, which Swift cannot call: the one setting the store makes. */
static inline int cupcake_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* A WAL file opened through the store's VFS (WALWriteGathering.swift): SQLite's file header,
   the bookkeeping for the frame writes gathered so far, and the underlying unix file, which
   lives in the same allocation right after this header. */
typedef struct cupcake_wal_file {
    sqlite3_file base;
    sqlite3_file *real;
    unsigned char *pending;
    sqlite3_int64 pendingOffset;
    int pendingBytes;
    int capacity;
    int commitFrameStarted;
} cupcake_wal_file;
