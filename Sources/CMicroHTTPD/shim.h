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
