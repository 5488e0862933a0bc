#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <sys/eventfd.h>

/// The epoll descriptor of a daemon started with MHD_USE_EPOLL in external polling mode, or -1
/// (MHD_get_daemon_info is variadic, which Swift cannot call).
static inline int cupcake_daemon_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}
