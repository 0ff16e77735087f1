/*
 * Socket helpers for the tcp transport and for out-of-band address exchange
 * in examples and tests: creation and options, connect/accept, byte
 * streams (non-blocking and blocking), socket address handling, network
 * interfaces.
 *
 * Non-blocking calls return UCS_ERR_NO_PROGRESS when the socket would block,
 * UCS_ERR_CONNECTION_RESET when the peer reset the connection, and
 * UCS_ERR_NOT_CONNECTED when the peer closed it in order. Those three are
 * expected outcomes and are not logged as errors.
 */
#ifndef UCS_SYS_SOCK_H_
#define UCS_SYS_SOCK_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

BEGIN_C_DECLS

struct ifreq;

/** Enough room for any string ucs_sockaddr_str() produces. */
#define UCS_SOCKADDR_STRING_LEN 64

/** Create a socket (close-on-exec); @a fd_p is set only on success.
 *  UCS_ERR_NO_RESOURCE when out of file descriptors. */
ucs_status_t ucs_socket_create(int domain, int type, int *fd_p);

/** setsockopt() that logs failures. */
ucs_status_t ucs_socket_setopt(int fd, int level, int optname,
                               const void *optval, socklen_t optlen);

/** Put @a fd in non-blocking mode. */
ucs_status_t ucs_socket_set_nonblock(int fd);

/**
 * Start connecting @a fd to @a dest_addr. UCS_OK: connected;
 * UCS_INPROGRESS: a non-blocking connect is under way (wait until the socket
 * is writable, then call ucs_socket_connect_nb_get_status());
 * UCS_ERR_UNREACHABLE: refused or no route.
 */
ucs_status_t ucs_socket_connect(int fd, const struct sockaddr *dest_addr);

/**
 * Outcome of a non-blocking connect once the socket became writable: UCS_OK,
 * UCS_INPROGRESS if not finished yet, UCS_ERR_UNREACHABLE if it failed.
 */
ucs_status_t ucs_socket_connect_nb_get_status(int fd);

/**
 * A listening TCP socket (SOCK_STREAM) bound to @a saddr. Port 0 picks a free
 * port; read it back with ucs_socket_getname(). With @a reuse_addr,
 * SO_REUSEADDR is set. UCS_ERR_BUSY if the address is in use (logged as an
 * error unless @a silent_addr_in_use).
 */
ucs_status_t ucs_socket_server_init(const struct sockaddr *saddr, int backlog,
                                    int reuse_addr, int silent_addr_in_use,
                                    int *listen_fd_p);

/**
 * Accept a connection on @a fd (close-on-exec). @a addr and @a length_p
 * may be NULL. UCS_ERR_NO_PROGRESS if none is pending on a non-blocking
 * socket; UCS_ERR_NO_RESOURCE, not logged, when out of file descriptors
 * or socket memory (the connection stays pending).
 */
ucs_status_t ucs_socket_accept(int fd, struct sockaddr *addr,
                               socklen_t *length_p, int *accept_fd_p);

/** Local address of @a fd. */
ucs_status_t ucs_socket_getname(int fd, struct sockaddr_storage *saddr,
                                socklen_t *length_p);

/** Address of the peer of @a fd. */
ucs_status_t ucs_socket_getpeername(int fd, struct sockaddr_storage *saddr,
                                    socklen_t *length_p);

/**
 * Send up to *@a length_p bytes without blocking; *@a length_p becomes the
 * number sent (0 unless UCS_OK).
 */
ucs_status_t ucs_socket_send_nb(int fd, const void *data, size_t *length_p);

/** Like ucs_socket_send_nb(), gathering from @a iov. */
ucs_status_t ucs_socket_sendv_nb(int fd, const struct iovec *iov,
                                 size_t iov_cnt, size_t *length_p);

/**
 * Receive up to *@a length_p bytes without blocking; *@a length_p becomes
 * the number received (0 unless UCS_OK).
 */
ucs_status_t ucs_socket_recv_nb(int fd, void *data, size_t *length_p);

/**
 * Send exactly @a length bytes, waiting for room as needed (works on
 * blocking and non-blocking sockets).
 */
ucs_status_t ucs_socket_send(int fd, const void *data, size_t length);

/**
 * Receive exactly @a length bytes, waiting for them as needed.
 * UCS_ERR_NOT_CONNECTED if the peer closes the connection first.
 */
ucs_status_t ucs_socket_recv(int fd, void *data, size_t length);

/** Size of the structure behind @a addr (AF_INET or AF_INET6). */
ucs_status_t ucs_sockaddr_sizeof(const struct sockaddr *addr,
                                 size_t *size_p);

/** Port of @a addr, in host byte order. */
ucs_status_t ucs_sockaddr_get_port(const struct sockaddr *addr,
                                   uint16_t *port_p);

/** Set the port of @a addr; @a port is in host byte order. */
ucs_status_t ucs_sockaddr_set_port(struct sockaddr *addr, uint16_t port);

/**
 * Pointer to the IP address inside @a addr (struct in_addr or in6_addr),
 * or NULL for other families.
 */
const void *ucs_sockaddr_get_inet_addr(const struct sockaddr *addr);

/** Nonzero if @a addr is the wildcard address (INADDR_ANY, in6addr_any). */
int ucs_sockaddr_is_inaddr_any(const struct sockaddr *addr);

/**
 * Compare family, address and port: 0 if equal, otherwise a consistent
 * ordering. *@a status_p (may be NULL) is UCS_ERR_INVALID_PARAM if a family
 * is not AF_INET/AF_INET6.
 */
int ucs_sockaddr_cmp(const struct sockaddr *sa1, const struct sockaddr *sa2,
                     ucs_status_t *status_p);

/**
 * Write @a addr as "ip:port" ("192.168.1.10:13337", "[fe80::1]:13337") into
 * @a str of @a max bytes and return @a str. Other families give
 * "<family N>".
 */
const char *ucs_sockaddr_str(const struct sockaddr *addr, char *str,
                             size_t max);

/**
 * Build a socket address from a numeric IPv4 or IPv6 string and a port
 * (host byte order). UCS_ERR_INVALID_ADDR if @a ip_str is not an address.
 */
ucs_status_t ucs_sockaddr_from_str(const char *ip_str, uint16_t port,
                                   struct sockaddr_storage *saddr);

/** ioctl() on the interface called @a if_name (SIOCGIFFLAGS, ...). */
ucs_status_t ucs_netif_ioctl(const char *if_name, unsigned long request,
                             struct ifreq *if_req);

/** Nonzero if the interface is up and running. */
int ucs_netif_is_active(const char *if_name);

/**
 * First address of family @a af (AF_INET, AF_INET6, or AF_UNSPEC for IPv4
 * if present, else IPv6) on @a if_name, and its netmask (@a netmask may be
 * NULL). UCS_ERR_NO_DEVICE if the interface has no such address.
 */
ucs_status_t ucs_netif_get_addr(const char *if_name, sa_family_t af,
                                struct sockaddr_storage *addr,
                                struct sockaddr_storage *netmask);

END_C_DECLS

#endif
