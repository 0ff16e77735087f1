#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/sock.h>
#include <ucs/sys/sys.h>
#include <ucs/debug/log.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Out of descriptors or socket memory: a state that passes */
static int ucs_socket_err_is_exhaustion(int err)
{
    return (err == EMFILE) || (err == ENFILE) || (err == ENOBUFS) ||
           (err == ENOMEM);
}

ucs_status_t ucs_socket_create(int domain, int type, int *fd_p)
{
    int fd;

    fd = socket(domain, type | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (ucs_socket_err_is_exhaustion(errno)) {
            ucs_error("socket(domain=%d, type=%d) failed: %m; raise the "
                      "open files limit (ulimit -n)",
                      domain, type);
            return UCS_ERR_NO_RESOURCE;
        }
        ucs_error("socket(domain=%d, type=%d) failed: %m", domain, type);
        return UCS_ERR_IO_ERROR;
    }

    *fd_p = fd;
    return UCS_OK;
}

ucs_status_t ucs_socket_setopt(int fd, int level, int optname,
                               const void *optval, socklen_t optlen)
{
    if (setsockopt(fd, level, optname, optval, optlen) < 0) {
        ucs_error("setsockopt(fd=%d, level=%d, optname=%d, optlen=%u) "
                  "failed: %m",
                  fd, level, optname, (unsigned)optlen);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t ucs_socket_set_nonblock(int fd)
{
    return ucs_sys_fcntl_modfl(fd, O_NONBLOCK, 0);
}

static int ucs_socket_err_is_unreachable(int err)
{
    return (err == ECONNREFUSED) || (err == ENETUNREACH) ||
           (err == EHOSTUNREACH) || (err == ETIMEDOUT) || (err == ECONNRESET) ||
           (err == EADDRNOTAVAIL);
}

ucs_status_t ucs_socket_connect(int fd, const struct sockaddr *dest_addr)
{
    char str[UCS_SOCKADDR_STRING_LEN];
    ucs_status_t status;
    size_t addrlen;

    status = ucs_sockaddr_sizeof(dest_addr, &addrlen);
    if (status != UCS_OK) {
        return status;
    }

    if (connect(fd, dest_addr, (socklen_t)addrlen) == 0) {
        return UCS_OK;
    }

    if ((errno == EINPROGRESS) || (errno == EINTR)) {
        /* EINTR: the connection goes on asynchronously */
        return UCS_INPROGRESS;
    } else if (errno == EISCONN) {
        return UCS_OK;
    } else if (ucs_socket_err_is_unreachable(errno)) {
        ucs_debug("connect(fd=%d, %s) failed: %m", fd,
                  ucs_sockaddr_str(dest_addr, str, sizeof(str)));
        return UCS_ERR_UNREACHABLE;
    }

    ucs_error("connect(fd=%d, %s) failed: %m", fd,
              ucs_sockaddr_str(dest_addr, str, sizeof(str)));
    return UCS_ERR_IO_ERROR;
}

ucs_status_t ucs_socket_connect_nb_get_status(int fd)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof(int);
    int err       = 0;

    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
        ucs_error("getsockopt(fd=%d, SO_ERROR) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }

    if (err != 0) {
        ucs_debug("non-blocking connect on fd %d failed: %s", fd,
                  strerror(err));
        return ucs_socket_err_is_unreachable(err) ? UCS_ERR_UNREACHABLE
                                                  : UCS_ERR_IO_ERROR;
    }

    len = sizeof(peer);
    if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0) {
        if (errno == ENOTCONN) {
            return UCS_INPROGRESS;
        }
        ucs_error("getpeername(fd=%d) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }

    return UCS_OK;
}

ucs_status_t ucs_socket_server_init(const struct sockaddr *saddr, int backlog,
                                    int reuse_addr, int silent_addr_in_use,
                                    int *listen_fd_p)
{
    char str[UCS_SOCKADDR_STRING_LEN];
    ucs_status_t status;
    size_t addrlen;
    int fd, one = 1;

    status = ucs_sockaddr_sizeof(saddr, &addrlen);
    if (status != UCS_OK) {
        return status;
    }

    status = ucs_socket_create(saddr->sa_family, SOCK_STREAM, &fd);
    if (status != UCS_OK) {
        return status;
    }

    if (reuse_addr) {
        status =
            ucs_socket_setopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (status != UCS_OK) {
            goto err_close;
        }
    }

    if (bind(fd, saddr, (socklen_t)addrlen) < 0) {
        if (errno == EADDRINUSE) {
            status = UCS_ERR_BUSY;
            ucs_log(silent_addr_in_use ? UCS_LOG_LEVEL_DEBUG
                                       : UCS_LOG_LEVEL_ERROR,
                    "bind(fd=%d, %s) failed: %m; choose another port or "
                    "stop the process using it",
                    fd, ucs_sockaddr_str(saddr, str, sizeof(str)));
        } else {
            status = UCS_ERR_INVALID_ADDR;
            ucs_error("bind(fd=%d, %s) failed: %m", fd,
                      ucs_sockaddr_str(saddr, str, sizeof(str)));
        }
        goto err_close;
    }

    if (listen(fd, backlog) < 0) {
        ucs_error("listen(fd=%d, %s, backlog=%d) failed: %m", fd,
                  ucs_sockaddr_str(saddr, str, sizeof(str)), backlog);
        status = UCS_ERR_IO_ERROR;
        goto err_close;
    }

    *listen_fd_p = fd;
    return UCS_OK;

err_close:
    close(fd);
    return status;
}

ucs_status_t ucs_socket_accept(int fd, struct sockaddr *addr,
                               socklen_t *length_p, int *accept_fd_p)
{
    int accept_fd;

    do {
        accept_fd = accept4(fd, addr, length_p, SOCK_CLOEXEC);
    } while ((accept_fd < 0) && (errno == EINTR));

    if (accept_fd < 0) {
        if ((errno == EAGAIN) || (errno == EWOULDBLOCK) ||
            (errno == ECONNABORTED)) {
            return UCS_ERR_NO_PROGRESS;
        }
        if (ucs_socket_err_is_exhaustion(errno)) {
            return UCS_ERR_NO_RESOURCE; /* the caller decides how to wait */
        }
        ucs_error("accept(fd=%d) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }

    *accept_fd_p = accept_fd;
    return UCS_OK;
}

ucs_status_t ucs_socket_getname(int fd, struct sockaddr_storage *saddr,
                                socklen_t *length_p)
{
    *length_p = sizeof(*saddr);
    if (getsockname(fd, (struct sockaddr *)saddr, length_p) < 0) {
        ucs_error("getsockname(fd=%d) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t ucs_socket_getpeername(int fd, struct sockaddr_storage *saddr,
                                    socklen_t *length_p)
{
    *length_p = sizeof(*saddr);
    if (getpeername(fd, (struct sockaddr *)saddr, length_p) < 0) {
        if (errno == ENOTCONN) {
            ucs_debug("getpeername(fd=%d): %m", fd);
            return UCS_ERR_NOT_CONNECTED;
        }
        ucs_error("getpeername(fd=%d) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* Map the errno of a failed send or receive to a status. */
static ucs_status_t ucs_socket_io_status(int fd, const char *op, int err)
{
    switch (err) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
        return UCS_ERR_NO_PROGRESS;
    case ECONNRESET:
    case EPIPE:
        ucs_debug("%s(fd=%d): %s", op, fd, strerror(err));
        return UCS_ERR_CONNECTION_RESET;
    case ENOTCONN:
        ucs_debug("%s(fd=%d): %s", op, fd, strerror(err));
        return UCS_ERR_NOT_CONNECTED;
    case ETIMEDOUT:
        ucs_debug("%s(fd=%d): %s", op, fd, strerror(err));
        return UCS_ERR_ENDPOINT_TIMEOUT;
    default:
        ucs_error("%s(fd=%d) failed: %s", op, fd, strerror(err));
        return UCS_ERR_IO_ERROR;
    }
}

ucs_status_t ucs_socket_send_nb(int fd, const void *data, size_t *length_p)
{
    ssize_t ret;

    if (*length_p == 0) {
        return UCS_OK;
    }

    do {
        ret = send(fd, data, *length_p, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while ((ret < 0) && (errno == EINTR));

    if (ret < 0) {
        *length_p = 0;
        return ucs_socket_io_status(fd, "send", errno);
    }

    *length_p = (size_t)ret;
    return UCS_OK;
}

ucs_status_t ucs_socket_sendv_nb(int fd, const struct iovec *iov,
                                 size_t iov_cnt, size_t *length_p)
{
    struct msghdr msg;
    ssize_t ret;

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = (struct iovec *)iov;
    msg.msg_iovlen = iov_cnt;

    do {
        ret = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while ((ret < 0) && (errno == EINTR));

    if (ret < 0) {
        *length_p = 0;
        return ucs_socket_io_status(fd, "sendmsg", errno);
    }

    *length_p = (size_t)ret;
    return UCS_OK;
}

ucs_status_t ucs_socket_recv_nb(int fd, void *data, size_t *length_p)
{
    ssize_t ret;

    if (*length_p == 0) {
        return UCS_OK;
    }

    do {
        ret = recv(fd, data, *length_p, MSG_DONTWAIT);
    } while ((ret < 0) && (errno == EINTR));

    if (ret == 0) {
        ucs_debug("recv(fd=%d): connection closed by the peer", fd);
        *length_p = 0;
        return UCS_ERR_NOT_CONNECTED;
    } else if (ret < 0) {
        *length_p = 0;
        return ucs_socket_io_status(fd, "recv", errno);
    }

    *length_p = (size_t)ret;
    return UCS_OK;
}

/* Wait until @a fd is ready for @a events (POLLIN/POLLOUT). */
static ucs_status_t ucs_socket_wait(int fd, short events)
{
    struct pollfd pfd;
    int ret;

    pfd.fd      = fd;
    pfd.events  = events;
    pfd.revents = 0;

    do {
        ret = poll(&pfd, 1, -1);
    } while ((ret < 0) && (errno == EINTR));

    if (ret < 0) {
        ucs_error("poll(fd=%d) failed: %m", fd);
        return UCS_ERR_IO_ERROR;
    }
    /* errors and hang-ups are reported by the next send/recv */
    return UCS_OK;
}

ucs_status_t ucs_socket_send(int fd, const void *data, size_t length)
{
    size_t offset = 0;
    ucs_status_t status;
    size_t chunk;

    while (offset < length) {
        chunk = length - offset;
        status =
            ucs_socket_send_nb(fd, UCS_PTR_BYTE_OFFSET(data, offset), &chunk);
        if (status == UCS_ERR_NO_PROGRESS) {
            status = ucs_socket_wait(fd, POLLOUT);
        }
        if (status != UCS_OK) {
            return status;
        }
        offset += chunk;
    }

    return UCS_OK;
}

ucs_status_t ucs_socket_recv(int fd, void *data, size_t length)
{
    size_t offset = 0;
    ucs_status_t status;
    size_t chunk;

    while (offset < length) {
        chunk = length - offset;
        status =
            ucs_socket_recv_nb(fd, UCS_PTR_BYTE_OFFSET(data, offset), &chunk);
        if (status == UCS_ERR_NO_PROGRESS) {
            status = ucs_socket_wait(fd, POLLIN);
        }
        if (status != UCS_OK) {
            return status;
        }
        offset += chunk;
    }

    return UCS_OK;
}

ucs_status_t ucs_sockaddr_sizeof(const struct sockaddr *addr, size_t *size_p)
{
    switch (addr->sa_family) {
    case AF_INET:
        *size_p = sizeof(struct sockaddr_in);
        return UCS_OK;
    case AF_INET6:
        *size_p = sizeof(struct sockaddr_in6);
        return UCS_OK;
    default:
        ucs_error("unknown address family %d; expected AF_INET or AF_INET6",
                  addr->sa_family);
        return UCS_ERR_INVALID_PARAM;
    }
}

ucs_status_t ucs_sockaddr_get_port(const struct sockaddr *addr,
                                   uint16_t *port_p)
{
    switch (addr->sa_family) {
    case AF_INET:
        *port_p = ntohs(((const struct sockaddr_in *)addr)->sin_port);
        return UCS_OK;
    case AF_INET6:
        *port_p = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
        return UCS_OK;
    default:
        ucs_error("unknown address family %d; expected AF_INET or AF_INET6",
                  addr->sa_family);
        return UCS_ERR_INVALID_PARAM;
    }
}

ucs_status_t ucs_sockaddr_set_port(struct sockaddr *addr, uint16_t port)
{
    switch (addr->sa_family) {
    case AF_INET:
        ((struct sockaddr_in *)addr)->sin_port = htons(port);
        return UCS_OK;
    case AF_INET6:
        ((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
        return UCS_OK;
    default:
        ucs_error("unknown address family %d; expected AF_INET or AF_INET6",
                  addr->sa_family);
        return UCS_ERR_INVALID_PARAM;
    }
}

const void *ucs_sockaddr_get_inet_addr(const struct sockaddr *addr)
{
    switch (addr->sa_family) {
    case AF_INET:
        return &((const struct sockaddr_in *)addr)->sin_addr;
    case AF_INET6:
        return &((const struct sockaddr_in6 *)addr)->sin6_addr;
    default:
        return NULL;
    }
}

int ucs_sockaddr_is_inaddr_any(const struct sockaddr *addr)
{
    switch (addr->sa_family) {
    case AF_INET:
        return ((const struct sockaddr_in *)addr)->sin_addr.s_addr ==
               htonl(INADDR_ANY);
    case AF_INET6:
        return !memcmp(&((const struct sockaddr_in6 *)addr)->sin6_addr,
                       &in6addr_any, sizeof(in6addr_any));
    default:
        return 0;
    }
}

int ucs_sockaddr_cmp(const struct sockaddr *sa1, const struct sockaddr *sa2,
                     ucs_status_t *status_p)
{
    size_t addr_size;
    uint16_t port1 = 0, port2 = 0;
    int result;

    if (((sa1->sa_family != AF_INET) && (sa1->sa_family != AF_INET6)) ||
        ((sa2->sa_family != AF_INET) && (sa2->sa_family != AF_INET6))) {
        ucs_error("cannot compare address families %d and %d; expected "
                  "AF_INET or AF_INET6",
                  sa1->sa_family, sa2->sa_family);
        if (status_p != NULL) {
            *status_p = UCS_ERR_INVALID_PARAM;
        }
        return 1;
    }

    if (status_p != NULL) {
        *status_p = UCS_OK;
    }

    if (sa1->sa_family != sa2->sa_family) {
        return (int)sa1->sa_family - (int)sa2->sa_family;
    }

    addr_size = (sa1->sa_family == AF_INET) ? sizeof(struct in_addr)
                                            : sizeof(struct in6_addr);
    result    = memcmp(ucs_sockaddr_get_inet_addr(sa1),
                       ucs_sockaddr_get_inet_addr(sa2), addr_size);
    if (result != 0) {
        return result;
    }

    ucs_sockaddr_get_port(sa1, &port1);
    ucs_sockaddr_get_port(sa2, &port2);
    return (int)port1 - (int)port2;
}

const char *ucs_sockaddr_str(const struct sockaddr *addr, char *str, size_t max)
{
    char ip[INET6_ADDRSTRLEN];
    uint16_t port = 0;

    if (max == 0) {
        return str;
    }

    if (addr == NULL) {
        snprintf(str, max, "<null>");
        return str;
    }

    if ((addr->sa_family != AF_INET) && (addr->sa_family != AF_INET6)) {
        snprintf(str, max, "<family %d>", addr->sa_family);
        return str;
    }

    if (inet_ntop(addr->sa_family, ucs_sockaddr_get_inet_addr(addr), ip,
                  sizeof(ip)) == NULL) {
        snprintf(str, max, "<invalid address>");
        return str;
    }

    ucs_sockaddr_get_port(addr, &port);
    if (addr->sa_family == AF_INET) {
        snprintf(str, max, "%s:%u", ip, (unsigned)port);
    } else {
        snprintf(str, max, "[%s]:%u", ip, (unsigned)port);
    }
    return str;
}

ucs_status_t ucs_sockaddr_from_str(const char *ip_str, uint16_t port,
                                   struct sockaddr_storage *saddr)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)saddr;
    struct sockaddr_in *sin   = (struct sockaddr_in *)saddr;
    struct in6_addr addr6;
    struct in_addr addr4;

    if (inet_pton(AF_INET, ip_str, &addr4) == 1) {
        memset(saddr, 0, sizeof(*saddr));
        sin->sin_family = AF_INET;
        sin->sin_addr   = addr4;
        sin->sin_port   = htons(port);
        return UCS_OK;
    }

    if (inet_pton(AF_INET6, ip_str, &addr6) == 1) {
        memset(saddr, 0, sizeof(*saddr));
        sin6->sin6_family = AF_INET6;
        sin6->sin6_addr   = addr6;
        sin6->sin6_port   = htons(port);
        return UCS_OK;
    }

    ucs_debug("\"%s\" is not a numeric IPv4 or IPv6 address", ip_str);
    return UCS_ERR_INVALID_ADDR;
}

ucs_status_t ucs_netif_ioctl(const char *if_name, unsigned long request,
                             struct ifreq *if_req)
{
    ucs_status_t status;
    int fd;

    if (strlen(if_name) >= sizeof(if_req->ifr_name)) {
        ucs_error("interface name \"%s\" is too long (at most %zu "
                  "characters)",
                  if_name, sizeof(if_req->ifr_name) - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    status = ucs_socket_create(AF_INET, SOCK_DGRAM, &fd);
    if (status != UCS_OK) {
        return status;
    }

    strncpy(if_req->ifr_name, if_name, sizeof(if_req->ifr_name) - 1);
    if_req->ifr_name[sizeof(if_req->ifr_name) - 1] = '\0';

    if (ioctl(fd, request, if_req) < 0) {
        status = (errno == ENODEV) ? UCS_ERR_NO_DEVICE : UCS_ERR_IO_ERROR;
        ucs_debug("ioctl(%s, request=0x%lx) failed: %m", if_name, request);
    } else {
        status = UCS_OK;
    }

    close(fd);
    return status;
}

int ucs_netif_is_active(const char *if_name)
{
    struct ifreq ifr;

    memset(&ifr, 0, sizeof(ifr));
    if (ucs_netif_ioctl(if_name, SIOCGIFFLAGS, &ifr) != UCS_OK) {
        return 0;
    }

    return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

/* Find the first address of exactly family @a af on @a if_name. */
static const struct ifaddrs *ucs_netif_find_addr(const struct ifaddrs *list,
                                                 const char *if_name,
                                                 sa_family_t af)
{
    const struct ifaddrs *ifa;

    for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr != NULL) && (ifa->ifa_addr->sa_family == af) &&
            !strcmp(ifa->ifa_name, if_name)) {
            return ifa;
        }
    }
    return NULL;
}

ucs_status_t ucs_netif_get_addr(const char *if_name, sa_family_t af,
                                struct sockaddr_storage *addr,
                                struct sockaddr_storage *netmask)
{
    const struct ifaddrs *ifa = NULL;
    struct ifaddrs *list;
    size_t size;

    if ((af != AF_INET) && (af != AF_INET6) && (af != AF_UNSPEC)) {
        ucs_error("unsupported address family %d; use AF_INET, AF_INET6 or "
                  "AF_UNSPEC",
                  af);
        return UCS_ERR_INVALID_PARAM;
    }

    if (getifaddrs(&list) < 0) {
        ucs_error("getifaddrs() failed: %m");
        return UCS_ERR_IO_ERROR;
    }

    if ((af == AF_INET) || (af == AF_UNSPEC)) {
        ifa = ucs_netif_find_addr(list, if_name, AF_INET);
    }
    if ((ifa == NULL) && ((af == AF_INET6) || (af == AF_UNSPEC))) {
        ifa = ucs_netif_find_addr(list, if_name, AF_INET6);
    }

    if (ifa == NULL) {
        ucs_debug("interface %s has no address of family %d", if_name, af);
        freeifaddrs(list);
        return UCS_ERR_NO_DEVICE;
    }

    ucs_sockaddr_sizeof(ifa->ifa_addr, &size);
    memset(addr, 0, sizeof(*addr));
    memcpy(addr, ifa->ifa_addr, size);
    if (netmask != NULL) {
        memset(netmask, 0, sizeof(*netmask));
        if (ifa->ifa_netmask != NULL) {
            memcpy(netmask, ifa->ifa_netmask, size);
        }
    }

    freeifaddrs(list);
    return UCS_OK;
}
