/**
 * @file
 * Socket helpers for the tcp transport and for out-of-band address exchange
 * in examples and tests: creation and options, connect/accept, byte
 * streams (non-blocking and blocking), socket address handling, network
 * interfaces.
 *
 * Non-blocking calls return UCS_ERR_NO_PROGRESS when the socket would block,
 * UCS_ERR_CONNECTION_RESET when the peer reset the connection, and
 * UCS_ERR_NOT_CONNECTED when the peer closed it in order. Those three are
 * expected outcomes and are not logged as errors. UCS_ERR_IO_ERROR means an
 * unexpected system call failure, logged as an error.
 *
 * The functions keep no state: they are thread-safe as long as one socket
 * is not read (or written) by two threads at once.
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

struct ifreq; /* <net/if.h>, needed only by ucs_netif_ioctl() callers */

/** Enough room for any string ucs_sockaddr_str() produces. */
#define UCS_SOCKADDR_STRING_LEN 64

/**
 * Create a socket (close-on-exec). The caller owns the descriptor.
 *
 * @param [in]  domain  AF_INET, AF_INET6, AF_UNIX...
 * @param [in]  type    SOCK_STREAM, SOCK_DGRAM...
 * @param [out] fd_p    The socket, set only on success.
 *
 * @return UCS_OK; UCS_ERR_NO_RESOURCE when out of file descriptors;
 *         UCS_ERR_IO_ERROR otherwise.
 */
ucs_status_t ucs_socket_create(int domain, int type, int *fd_p);

/**
 * setsockopt() that logs failures.
 *
 * @param [in] fd       Socket.
 * @param [in] level    Option level (SOL_SOCKET, IPPROTO_TCP...).
 * @param [in] optname  Option.
 * @param [in] optval   Value.
 * @param [in] optlen   Size of the value.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_setopt(int fd, int level, int optname,
                               const void *optval, socklen_t optlen);

/**
 * Put @a fd in non-blocking mode.
 *
 * @param [in] fd  File descriptor.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR (see ucs_sys_fcntl_modfl()).
 */
ucs_status_t ucs_socket_set_nonblock(int fd);

/**
 * Start connecting @a fd to @a dest_addr.
 *
 * @param [in] fd         Socket.
 * @param [in] dest_addr  AF_INET or AF_INET6 destination.
 *
 * @return UCS_OK: connected; UCS_INPROGRESS: a non-blocking connect is
 *         under way (wait until the socket is writable, then call
 *         ucs_socket_connect_nb_get_status()); UCS_ERR_UNREACHABLE: refused,
 *         no route, timed out or no local address; UCS_ERR_INVALID_PARAM for
 *         another address family; UCS_ERR_IO_ERROR for other failures.
 */
ucs_status_t ucs_socket_connect(int fd, const struct sockaddr *dest_addr);

/**
 * Outcome of a non-blocking connect once the socket became writable.
 *
 * @param [in] fd  Socket given to ucs_socket_connect().
 *
 * @return UCS_OK, UCS_INPROGRESS if not finished yet, UCS_ERR_UNREACHABLE
 *         if the peer refused or could not be reached, UCS_ERR_IO_ERROR for
 *         other failures.
 */
ucs_status_t ucs_socket_connect_nb_get_status(int fd);

/**
 * A listening TCP socket (SOCK_STREAM) bound to @a saddr. Port 0 picks a free
 * port; read it back with ucs_socket_getname(). With @a reuse_addr,
 * SO_REUSEADDR is set.
 *
 * @param [in]  saddr              AF_INET or AF_INET6 address to bind.
 * @param [in]  backlog            listen() backlog.
 * @param [in]  reuse_addr         Nonzero to set SO_REUSEADDR.
 * @param [in]  silent_addr_in_use Log "address in use" at debug level.
 * @param [out] listen_fd_p        The socket, set only on success; owned by
 *                                 the caller.
 *
 * @return UCS_OK; UCS_ERR_BUSY if the address is in use (logged as an
 *         error unless @a silent_addr_in_use); UCS_ERR_INVALID_ADDR if it
 *         cannot be bound otherwise; UCS_ERR_INVALID_PARAM for another
 *         family; a status of ucs_socket_create(); UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_server_init(const struct sockaddr *saddr, int backlog,
                                    int reuse_addr, int silent_addr_in_use,
                                    int *listen_fd_p);

/**
 * Accept a connection on @a fd (close-on-exec).
 *
 * @param [in]     fd           Listening socket.
 * @param [out]    addr         Peer address; may be NULL.
 * @param [in,out] length_p     Size of @a addr, then of the address; may be
 *                              NULL.
 * @param [out]    accept_fd_p  The new socket, set only on success; owned by
 *                              the caller.
 *
 * @return UCS_OK; UCS_ERR_NO_PROGRESS if none is pending on a non-blocking
 *         socket; UCS_ERR_NO_RESOURCE, not logged, when out of file
 *         descriptors or socket memory (the connection stays pending);
 *         UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_accept(int fd, struct sockaddr *addr,
                               socklen_t *length_p, int *accept_fd_p);

/**
 * Local address of @a fd.
 *
 * @param [in]  fd        Socket.
 * @param [out] saddr     The address.
 * @param [out] length_p  Its length.
 *
 * @return UCS_OK, or UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_getname(int fd, struct sockaddr_storage *saddr,
                                socklen_t *length_p);

/**
 * Address of the peer of @a fd.
 *
 * @param [in]  fd        Connected socket.
 * @param [out] saddr     The address.
 * @param [out] length_p  Its length.
 *
 * @return UCS_OK, UCS_ERR_NOT_CONNECTED, or UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_getpeername(int fd, struct sockaddr_storage *saddr,
                                    socklen_t *length_p);

/**
 * Send up to *@a length_p bytes without blocking (MSG_NOSIGNAL: a closed
 * peer gives a status, not SIGPIPE).
 *
 * @param [in]     fd        Socket.
 * @param [in]     data      Bytes to send.
 * @param [in,out] length_p  Bytes to send; becomes the number sent (0
 *                           unless UCS_OK).
 *
 * @return UCS_OK (possibly a partial send), UCS_ERR_NO_PROGRESS,
 *         UCS_ERR_CONNECTION_RESET, UCS_ERR_NOT_CONNECTED,
 *         UCS_ERR_ENDPOINT_TIMEOUT (the kernel timed the connection out), or
 *         UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_send_nb(int fd, const void *data, size_t *length_p);

/**
 * Like ucs_socket_send_nb(), gathering from @a iov.
 *
 * @param [in]  fd        Socket.
 * @param [in]  iov       Buffers to send, in order.
 * @param [in]  iov_cnt   Number of entries of @a iov.
 * @param [out] length_p  Number of bytes sent (0 unless UCS_OK).
 *
 * @return The statuses of ucs_socket_send_nb().
 */
ucs_status_t ucs_socket_sendv_nb(int fd, const struct iovec *iov,
                                 size_t iov_cnt, size_t *length_p);

/**
 * Receive up to *@a length_p bytes without blocking.
 *
 * @param [in]     fd        Socket.
 * @param [out]    data      Receives the bytes.
 * @param [in,out] length_p  Room in @a data; becomes the number received
 *                           (0 unless UCS_OK).
 *
 * @return UCS_OK, UCS_ERR_NO_PROGRESS, UCS_ERR_NOT_CONNECTED (orderly
 *         close), UCS_ERR_CONNECTION_RESET, UCS_ERR_ENDPOINT_TIMEOUT, or
 *         UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_socket_recv_nb(int fd, void *data, size_t *length_p);

/**
 * Send exactly @a length bytes, waiting for room as needed (works on
 * blocking and non-blocking sockets). Blocks the calling thread.
 *
 * @param [in] fd      Socket.
 * @param [in] data    Bytes to send.
 * @param [in] length  Number of bytes.
 *
 * @return UCS_OK, or the first failure of ucs_socket_send_nb() other than
 *         UCS_ERR_NO_PROGRESS (or UCS_ERR_IO_ERROR if poll() fails).
 */
ucs_status_t ucs_socket_send(int fd, const void *data, size_t length);

/**
 * Receive exactly @a length bytes, waiting for them as needed. Blocks the
 * calling thread.
 *
 * @param [in]  fd      Socket.
 * @param [out] data    Receives the bytes.
 * @param [in]  length  Number of bytes.
 *
 * @return UCS_OK; UCS_ERR_NOT_CONNECTED if the peer closes the connection
 *         first; another failure of ucs_socket_recv_nb().
 */
ucs_status_t ucs_socket_recv(int fd, void *data, size_t length);

/**
 * Size of the structure behind @a addr.
 *
 * @param [in]  addr    Socket address.
 * @param [out] size_p  sizeof(struct sockaddr_in) or sockaddr_in6.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM if the family is not AF_INET
 *         or AF_INET6.
 */
ucs_status_t ucs_sockaddr_sizeof(const struct sockaddr *addr, size_t *size_p);

/**
 * Port of @a addr.
 *
 * @param [in]  addr    AF_INET or AF_INET6 address.
 * @param [out] port_p  The port, in host byte order.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another family.
 */
ucs_status_t ucs_sockaddr_get_port(const struct sockaddr *addr,
                                   uint16_t *port_p);

/**
 * Set the port of @a addr.
 *
 * @param [in,out] addr  AF_INET or AF_INET6 address.
 * @param [in]     port  The port, in host byte order.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another family.
 */
ucs_status_t ucs_sockaddr_set_port(struct sockaddr *addr, uint16_t port);

/**
 * The IP address inside @a addr.
 *
 * @param [in] addr  Socket address.
 *
 * @return Pointer into @a addr (struct in_addr or in6_addr), or NULL for
 *         other families.
 */
const void *ucs_sockaddr_get_inet_addr(const struct sockaddr *addr);

/**
 * Tell whether @a addr is the wildcard address.
 *
 * @param [in] addr  Socket address.
 *
 * @return Nonzero for INADDR_ANY or in6addr_any, 0 otherwise (also for
 *         other families).
 */
int ucs_sockaddr_is_inaddr_any(const struct sockaddr *addr);

/**
 * Compare family, address and port.
 *
 * @param [in]  sa1       First address.
 * @param [in]  sa2       Second address.
 * @param [out] status_p  May be NULL; UCS_ERR_INVALID_PARAM if a family is
 *                        not AF_INET/AF_INET6, UCS_OK otherwise.
 *
 * @return 0 if equal, otherwise a consistent ordering (negative or
 *         positive).
 */
int ucs_sockaddr_cmp(const struct sockaddr *sa1, const struct sockaddr *sa2,
                     ucs_status_t *status_p);

/**
 * Write @a addr as "ip:port" ("192.168.1.10:13337", "[fe80::1]:13337").
 * Other families give "<family N>".
 *
 * @param [in]  addr  Socket address.
 * @param [out] str   Buffer, UCS_SOCKADDR_STRING_LEN bytes is enough.
 * @param [in]  max   Size of @a str.
 *
 * @return @a str.
 */
const char *ucs_sockaddr_str(const struct sockaddr *addr, char *str,
                             size_t max);

/**
 * Build a socket address from a numeric IPv4 or IPv6 string and a port.
 *
 * @param [in]  ip_str  "192.168.1.10", "fe80::1"... (no host names).
 * @param [in]  port    Port, in host byte order.
 * @param [out] saddr   The address.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_ADDR if @a ip_str is not an address.
 */
ucs_status_t ucs_sockaddr_from_str(const char *ip_str, uint16_t port,
                                   struct sockaddr_storage *saddr);

/**
 * ioctl() on the interface called @a if_name, through a temporary socket.
 *
 * @param [in]     if_name  Interface name.
 * @param [in]     request  SIOCGIFFLAGS, SIOCGIFADDR...
 * @param [in,out] if_req   Request; its name is filled in here.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if the name is too long;
 *         UCS_ERR_NO_DEVICE if there is no such interface; a status of
 *         ucs_socket_create(); UCS_ERR_IO_ERROR.
 */
ucs_status_t ucs_netif_ioctl(const char *if_name, unsigned long request,
                             struct ifreq *if_req);

/**
 * Tell whether an interface is up and running.
 *
 * @param [in] if_name  Interface name.
 *
 * @return Nonzero if IFF_UP and IFF_RUNNING are set, 0 otherwise or if it
 *         does not exist.
 */
int ucs_netif_is_active(const char *if_name);

/**
 * First address of family @a af on @a if_name, and its netmask.
 *
 * @param [in]  if_name  Interface name.
 * @param [in]  af       AF_INET, AF_INET6, or AF_UNSPEC for IPv4 if present,
 *                       else IPv6.
 * @param [out] addr     The address.
 * @param [out] netmask  Its netmask; may be NULL.
 *
 * @return UCS_OK; UCS_ERR_NO_DEVICE if the interface has no such address;
 *         UCS_ERR_INVALID_PARAM for another family; UCS_ERR_IO_ERROR if the
 *         interfaces cannot be listed.
 */
ucs_status_t ucs_netif_get_addr(const char *if_name, sa_family_t af,
                                struct sockaddr_storage *addr,
                                struct sockaddr_storage *netmask);

END_C_DECLS

#endif
