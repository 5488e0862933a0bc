#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* GNU extensions the Swift Glibc module hides (it is built without _GNU_SOURCE); both exist in
   every glibc since 2.10 and 2.12. */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
extern long syscall(long number, ...);

/* Sets the calling thread's nice value (Linux keeps one per thread, addressed by its thread id,
   which only the variadic syscall() gives); 0 on success. */
static inline int cupcake_set_thread_nice(int nice) {
  return setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), nice);
}

/* MHD_get_connection_info is variadic, which Swift cannot call; these ask it for one field. */
static inline void *cupcake_connection_socket_context(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? info->socket_context : (void *) 0;
}

/* The size of the request's head as received (request line and header fields, with their line
   ends): what libmicrohttpd keeps of it in the connection's memory. 0 before the head is read. */
static inline size_t cupcake_connection_head_size(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info ? info->header_size : 0;
}

/* The status of the answer queued on the connection, 0 when none is: libmicrohttpd queues its
   own answer to some malformed requests before the access handler is called. */
static inline unsigned int cupcake_connection_queued_status(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS);
  return info ? info->http_status : 0;
}

static inline int cupcake_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}

/* CPU affinity, for ThreadPlacement. The Glibc module hides sched_getaffinity and
   sched_setaffinity (GNU extensions), and CPU_SET and friends are macros Swift cannot call, so
   these work on the mask as the kernel does: one bit per CPU, 1024 of them (glibc's cpu_set_t). */
extern int sched_getaffinity(pid_t thread, size_t size, void *mask);
extern int sched_setaffinity(pid_t thread, size_t size, const void *mask);

/* The CPUs `thread` (0 for the caller) may run on, lowest first, into `cpus`; how many there
   are (at most `capacity`), or -1 with errno set. */
static inline int cupcake_thread_cpus(pid_t thread, int *cpus, int capacity) {
  unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
  if (sched_getaffinity(thread, sizeof mask, mask) != 0) return -1;
  int count = 0;
  for (int cpu = 0; cpu < 1024 && count < capacity; cpu++) {
    if (mask[cpu / (8 * sizeof(unsigned long))] & (1UL << (cpu % (8 * sizeof(unsigned long))))) {
      cpus[count++] = cpu;
    }
  }
  return count;
}

/* Lets `thread` (0 for the caller) run only on `cpu`; 0, or -1 with errno set. */
static inline int cupcake_pin_thread(pid_t thread, int cpu) {
  unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
  if (cpu < 0 || cpu >= 1024) return -1;
  mask[cpu / (8 * sizeof(unsigned long))] = 1UL << (cpu % (8 * sizeof(unsigned long)));
  return sched_setaffinity(thread, sizeof mask, mask);
}

#include <arpa/inet.h>

/* The client's address as text (IPv4, or IPv6 without brackets) into `buffer` (at least 46
   bytes); 1 on success. An IPv4-mapped IPv6 address is written as IPv4. */
static inline int cupcake_format_address(const struct sockaddr *address, char *buffer, socklen_t size) {
  if (address == 0) return 0;
  if (address->sa_family == AF_INET) {
    return inet_ntop(AF_INET, &((const struct sockaddr_in *) address)->sin_addr, buffer, size) != 0;
  }
  if (address->sa_family == AF_INET6) {
    const struct in6_addr *six = &((const struct sockaddr_in6 *) address)->sin6_addr;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    int isMapped = 1;
    for (int i = 0; i < 12; i++) if (six->s6_addr[i] != mapped[i]) isMapped = 0;
    if (isMapped) return inet_ntop(AF_INET, &six->s6_addr[12], buffer, size) != 0;
    return inet_ntop(AF_INET6, six, buffer, size) != 0;
  }
  return 0;
}

static inline int cupcake_connection_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info ? cupcake_format_address(info->client_addr, buffer, size) : 0;
}
