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

/* MHD_get_connection_info is variadic, which Swift cannot call; these ask it for one field. */
static inline void *cupcake_connection_socket_context(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? info->socket_context : (void *) 0;
}

static inline int cupcake_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}
