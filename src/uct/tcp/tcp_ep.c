/*
 * tcp endpoints: connection set-up (handshake, retries, CONNECT_TO_EP),
 * the send queue, the receive path that reassembles messages from the
 * byte stream (streaming large PUT and GET data straight to its
 * destination), and the operations.
 *
 * Send rule: when nothing is queued and the socket is connected, a message
 * goes to the socket at once (one send or sendmsg); whatever the socket
 * does not take is copied to a send buffer taken from the interface's pool
 * (or, for a large zero-copy send, kept as a reference to the user's
 * memory) and written when the socket is writable again. Messages issued
 * while something is queued are appended to the same buffer, so a busy
 * socket takes many small messages in one call. An idle endpoint holds no
 * buffer at all.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp.h"

#include <uct/base/uct_vfs.h>
#include <ucs/debug/log.h>
#include <ucs/sys/sock.h>
#include <ucs/time/time.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define UCT_TCP_SEND_FLAGS  (MSG_NOSIGNAL | MSG_DONTWAIT)

static const char *uct_tcp_ep_peer_str(const uct_tcp_ep_t *ep, char *buf,
                                       size_t max)
{
    return ucs_sockaddr_str(&ep->peer_addr.sa, buf, max);
}

/* Status of a failed socket call. */
static ucs_status_t uct_tcp_errno_status(int err)
{
    switch (err) {
    case ETIMEDOUT:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
        return UCS_ERR_UNREACHABLE;
    default:
        return UCS_ERR_CONNECTION_RESET;
    }
}

static inline int uct_tcp_ep_is_internal(const uct_tcp_ep_t *ep)
{
    return ep->flags & UCT_TCP_EP_FLAG_INTERNAL;
}

static inline int uct_tcp_ep_can_send_now(const uct_tcp_ep_t *ep)
{
    return (ep->state == UCT_TCP_EP_CONNECTED) &&
           ucs_list_is_empty(&ep->tx_list);
}

/* ------------------------------------------------------------------------
 * Events
 */

static void uct_tcp_ep_update_events(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    unsigned events;

    if (ep->fd < 0) {
        return;
    }

    events = UCS_EVENT_SET_EVREAD;
    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        (!ucs_list_is_empty(&ep->tx_list) &&
         !(ep->flags & UCT_TCP_EP_FLAG_DEFERRED))) {
        events |= UCS_EVENT_SET_EVWRITE;
    }
    if ((events != ep->events) &&
        (ucs_event_set_mod(iface->event_set, ep->fd,
                           (ucs_event_set_types_t)events, ep) == UCS_OK)) {
        ep->events = events;
    }
}

static ucs_status_t uct_tcp_ep_register(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    ep->events = UCS_EVENT_SET_EVREAD;
    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        !ucs_list_is_empty(&ep->tx_list)) {
        ep->events |= UCS_EVENT_SET_EVWRITE;
    }
    status = ucs_event_set_add(iface->event_set, ep->fd,
                               (ucs_event_set_types_t)ep->events, ep);
    if (status != UCS_OK) {
        ep->events = 0;
    }
    return status;
}

static void uct_tcp_ep_close_socket(uct_tcp_ep_t *ep)
{
    if (ep->fd < 0) {
        return;
    }
    if (ep->events != 0) {
        ucs_event_set_del(uct_tcp_ep_iface(ep)->event_set, ep->fd);
    }
    close(ep->fd);
    ep->fd     = -1;
    ep->events = 0;
}

/* ------------------------------------------------------------------------
 * The send queue
 */

static void uct_tcp_ep_tx_release(uct_tcp_ep_t *ep, uct_tcp_tx_t *tx,
                                  ucs_status_t status)
{
    ucs_list_del(&tx->list);
    if (tx->is_buf) {
        ep->tx_queued                   -= (uint32_t)tx->length;
        uct_tcp_ep_iface(ep)->tx_queued -= tx->length;
    } else {
        --ep->tx_ops;
        if (tx->comp != NULL) {
            uct_invoke_completion(tx->comp, status);
        }
    }
    ucs_mpool_put(tx);
}

static void uct_tcp_ep_tx_purge(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_tx_t *tx, *tmp;

    ucs_list_for_each_safe(tx, tmp, &ep->tx_list, list) {
        uct_tcp_ep_tx_release(ep, tx, status);
    }
}

static uct_tcp_tx_t *uct_tcp_ep_tx_buf_get(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_tx_t *tx;

    tx = ucs_mpool_get(&iface->tx_mp);
    if (ucs_unlikely(tx == NULL)) {
        ucs_error("tcp ep %p: out of send buffers (%zu bytes each)",
                  (void*)ep, iface->config.tx_buf_size);
        return NULL;
    }
    tx->comp      = NULL;
    tx->is_buf    = 1;
    tx->iov_index = 0;
    tx->iovcnt    = 0;
    tx->length    = 0;
    tx->offset    = 0;
    return tx;
}

/* Room for @a n bytes at the end of the send queue: the last buffer if it
 * has room, else a new buffer. @a user: an application send, which is
 * refused (NULL) when the queue already holds a zero-copy send or too
 * many bytes. Internal messages are never refused but for lack of
 * memory. */
static char *uct_tcp_ep_tx_reserve(uct_tcp_ep_t *ep, size_t n, int user,
                                   uct_tcp_tx_t **tx_p)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_tx_t *tx;

    if (ucs_unlikely(n > iface->config.tx_buf_size)) {
        return NULL;
    }
    if (user && ((ep->tx_ops > 0) ||
                 (ep->tx_queued + n > iface->config.tx_buf_size))) {
        return NULL;
    }

    if (!ucs_list_is_empty(&ep->tx_list)) {
        tx = ucs_list_tail(&ep->tx_list, uct_tcp_tx_t, list);
        if (tx->is_buf && (tx->length + n <= iface->config.tx_buf_size)) {
            *tx_p = tx;
            return tx->data + tx->length;
        }
    }

    tx = uct_tcp_ep_tx_buf_get(ep);
    if (tx == NULL) {
        return NULL;
    }
    ucs_list_add_tail(&ep->tx_list, &tx->list);
    *tx_p = tx;
    return tx->data;
}

static inline void uct_tcp_ep_tx_commit(uct_tcp_ep_t *ep, uct_tcp_tx_t *tx,
                                        size_t n)
{
    tx->length                      += n;
    ep->tx_queued                   += (uint32_t)n;
    uct_tcp_ep_iface(ep)->tx_queued += n;
}

static inline void uct_tcp_hdr_init(uct_tcp_hdr_t *hdr, uint8_t id,
                                    size_t length)
{
    hdr->id          = id;
    hdr->reserved[0] = 0;
    hdr->reserved[1] = 0;
    hdr->reserved[2] = 0;
    hdr->length      = (uint32_t)length;
}

/* Writes a header at @a dest, which need not be aligned. */
static inline void uct_tcp_hdr_write(void *dest, uint8_t id, size_t length)
{
    uct_tcp_hdr_t hdr;

    uct_tcp_hdr_init(&hdr, id, length);
    memcpy(dest, &hdr, sizeof(hdr));
}

/* Ends coalescing of @a ep (see uct_tcp_ep_should_defer()). */
static void uct_tcp_ep_defer_stop(uct_tcp_ep_t *ep)
{
    if (ep->flags & UCT_TCP_EP_FLAG_DEFERRED) {
        ep->flags &= ~UCT_TCP_EP_FLAG_DEFERRED;
        ucs_list_del(&ep->retry_list);
    }
}

/* Queues an internal message of @a n bytes (header included). */
static ucs_status_t uct_tcp_ep_ctrl_send(uct_tcp_ep_t *ep, const void *data,
                                         size_t n)
{
    uct_tcp_tx_t *tx;
    char *dest;

    dest = uct_tcp_ep_tx_reserve(ep, n, 0, &tx);
    if (dest == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(dest, data, n);
    uct_tcp_ep_tx_commit(ep, tx, n);
    uct_tcp_ep_defer_stop(ep); /* answers are not held back */
    return UCS_OK;
}

/* Advances the iovecs of a zero-copy send by @a n sent bytes. */
static void uct_tcp_tx_advance(uct_tcp_tx_t *tx, size_t n)
{
    struct iovec *iov = (struct iovec*)tx->data;

    while ((n > 0) && (tx->iov_index < tx->iovcnt)) {
        if (n >= iov[tx->iov_index].iov_len) {
            n -= iov[tx->iov_index].iov_len;
            ++tx->iov_index;
        } else {
            iov[tx->iov_index].iov_base =
                    (char*)iov[tx->iov_index].iov_base + n;
            iov[tx->iov_index].iov_len -= n;
            n                           = 0;
        }
    }
}

/* ------------------------------------------------------------------------
 * Failure
 */

static void uct_tcp_ep_fail_gets(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_get_op_t *op, *tmp;

    ucs_list_for_each_safe(op, tmp, &ep->get_list, list) {
        ucs_list_del(&op->list);
        if (op->comp != NULL) {
            uct_invoke_completion(op->comp, status);
        }
        ucs_mpool_put(op);
    }
}

static void uct_tcp_ep_complete_flushes(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_flush_req_t *req, *tmp;

    ucs_list_for_each_safe(req, tmp, &ep->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, status);
        ucs_mpool_put(req);
    }
}

static void uct_tcp_ep_release_rx(uct_tcp_ep_t *ep)
{
    if (ep->rx != NULL) {
        ucs_mpool_put(ep->rx);
        ep->rx = NULL;
        --uct_tcp_ep_iface(ep)->rx_held;
    }
}

/* Frees an internal ep now, or at the end of the progress pass that may
 * still hold events for it. */
static void uct_tcp_ep_release(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (iface->hot_ep == ep) {
        iface->hot_ep = NULL;
    }
    ucs_list_del(&ep->list);
    if (iface->in_progress) {
        ep->state = UCT_TCP_EP_DESTROYED;
        ucs_list_add_tail(&iface->free_list, &ep->list);
    } else {
        free(ep);
    }
}

void uct_tcp_ep_free(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    uct_base_ep_cleanup(&ep->super);
    uct_tcp_ep_close_socket(ep);
    if ((ep->state == UCT_TCP_EP_RETRY_WAIT) ||
        (ep->state == UCT_TCP_EP_ACCEPTED)) {
        ucs_list_del(&ep->retry_list);
    }
    uct_tcp_ep_defer_stop(ep);
    if (ep->flags & UCT_TCP_EP_FLAG_IN_IDS) {
        ucs_ptr_array_remove(&iface->ep_ids, ep->id, NULL);
    }
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_pending_group_cleanup(&ep->pending);
    uct_tcp_ep_tx_purge(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_fail_gets(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_complete_flushes(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_release_rx(ep);
    if (!uct_tcp_ep_is_internal(ep)) {
        --iface->num_user_eps;
    }
    uct_tcp_ep_release(ep);
}

/*
 * The connection is gone (peer closed or reset it, stopped answering, or
 * sent something invalid). An internal ep is freed; the user's ep is
 * marked failed, its outstanding operations complete with @a status and
 * the error handler runs once. Internal eps must not be touched after.
 */
static void uct_tcp_ep_fail(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    if (uct_tcp_ep_is_internal(ep)) {
        ucs_debug("tcp iface %p: connection from %s closed (%s)",
                  (void*)iface, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                  ucs_status_string(status));
        uct_tcp_ep_free(ep);
        return;
    }

    if (ep->state == UCT_TCP_EP_FAILED) {
        return;
    }

    ucs_debug("tcp ep %p: connection to %s lost (%s)", (void*)ep,
              uct_tcp_ep_peer_str(ep, str, sizeof(str)),
              ucs_status_string(status));
    uct_tcp_ep_close_socket(ep);
    if (ep->state == UCT_TCP_EP_RETRY_WAIT) {
        ucs_list_del(&ep->retry_list);
    }
    uct_tcp_ep_defer_stop(ep);
    if (iface->hot_ep == ep) {
        iface->hot_ep = NULL;
    }
    ep->state      = UCT_TCP_EP_FAILED;
    ep->err_status     = (int8_t)status;
    ep->rx_stream_left = 0;
    uct_tcp_ep_release_rx(ep);
    uct_tcp_ep_tx_purge(ep, status);
    uct_tcp_ep_fail_gets(ep, status);
    uct_tcp_ep_complete_flushes(ep, status);
    uct_iface_handle_ep_err(&iface->super.super, &ep->super.super, status);
}

static void uct_tcp_ep_protocol_error(uct_tcp_ep_t *ep, const char *what)
{
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_warn("tcp iface %p: %s from %s; closing the connection",
             (void*)uct_tcp_ep_iface(ep), what,
             uct_tcp_ep_peer_str(ep, str, sizeof(str)));
    uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
}

/* ------------------------------------------------------------------------
 * Writing to the socket
 */

static void uct_tcp_ep_check_flush(uct_tcp_ep_t *ep)
{
    uct_tcp_flush_req_t *req, *tmp;

    ucs_list_for_each_safe(req, tmp, &ep->flush_list, list) {
        if ((int32_t)(ep->acks_received - req->ack_seq) < 0) {
            break;
        }
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, UCS_OK);
        ucs_mpool_put(req);
    }
}

/*
 * Coalescing: a small message sent less than UCX_TCP_COALESCE_TIME after
 * the previous write of its ep is held in the send buffer, with the ones
 * that follow it, and written by progress once the window has passed (or
 * half the buffer is full, or a flush or event arm asks). An isolated
 * message still leaves at once; a stream of small messages costs one
 * system call per window instead of one per message. Deferred eps do not
 * ask epoll for EVWRITE: they are on iface->defer_list. From an event arm
 * to the next progress call nothing is held, since the application may
 * send and then sleep on the event fd without progressing again.
 */
static UCS_F_ALWAYS_INLINE int uct_tcp_ep_should_defer(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_time_t now         = ucs_get_time();

    if (((now - ep->last_write) >= iface->config.coalesce_time) ||
        iface->armed) {
        ep->last_write = now;
        return 0;
    }
    return 1;
}

static void uct_tcp_ep_defer_start(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    ep->flags     |= UCT_TCP_EP_FLAG_DEFERRED;
    ep->retry_time = ucs_get_time(); /* the oldest held message */
    ucs_list_add_tail(&iface->defer_list, &ep->retry_list);
}

/* Writes queued items until the socket is full. UCS_OK also when the
 * socket took only part (or none); an error status is the connection's
 * failure (the caller fails the ep). */
static ucs_status_t uct_tcp_ep_tx_write(uct_tcp_ep_t *ep)
{
    struct iovec *iov;
    uct_tcp_tx_t *tx;
    struct msghdr msg;
    ssize_t ret;

    uct_tcp_ep_defer_stop(ep);
    ep->last_write = ucs_get_time();
    while (!ucs_list_is_empty(&ep->tx_list)) {
        tx = ucs_list_head(&ep->tx_list, uct_tcp_tx_t, list);
        if (tx->is_buf) {
            ret = send(ep->fd, tx->data + tx->offset,
                       tx->length - tx->offset, UCT_TCP_SEND_FLAGS);
            if (ret < 0) {
                break;
            }
            tx->offset += ret;
            if (tx->offset < tx->length) {
                uct_iface_stat_tx_retry(&uct_tcp_ep_iface(ep)->super);
                return UCS_OK;
            }
        } else {
            iov = (struct iovec*)tx->data;
            memset(&msg, 0, sizeof(msg));
            msg.msg_iov    = iov + tx->iov_index;
            msg.msg_iovlen = ucs_min(tx->iovcnt - tx->iov_index,
                                     (uint32_t)UCT_TCP_MAX_SEND_IOV);
            ret = sendmsg(ep->fd, &msg, UCT_TCP_SEND_FLAGS);
            if (ret < 0) {
                break;
            }
            uct_tcp_tx_advance(tx, ret);
            if (tx->iov_index < tx->iovcnt) {
                continue; /* more than one sendmsg worth, or partial */
            }
        }
        uct_tcp_ep_tx_release(ep, tx, UCS_OK);
    }

    if (ucs_list_is_empty(&ep->tx_list)) {
        return UCS_OK;
    }
    if ((errno == EAGAIN) || (errno == EWOULDBLOCK) || (errno == EINTR)) {
        uct_iface_stat_tx_retry(&uct_tcp_ep_iface(ep)->super);
        return UCS_OK;
    }
    return uct_tcp_errno_status(errno);
}

/* Whether an application send of the largest size would be taken now. */
static inline int uct_tcp_ep_has_room(const uct_tcp_ep_t *ep)
{
    const uct_tcp_iface_t *iface =
            uct_tcp_iface(ep->super.super.iface);

    return (ep->tx_ops == 0) &&
           (ep->tx_queued + sizeof(uct_tcp_hdr_t) + iface->config.max_bcopy <=
            iface->config.tx_buf_size);
}

/* The socket is writable (or a connect completed). */
static void uct_tcp_ep_tx_progress(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    status = uct_tcp_ep_tx_write(ep);
    if (status != UCS_OK) {
        uct_tcp_ep_fail(ep, status);
        return;
    }

    uct_tcp_ep_update_events(ep);
    if (!ucs_arbiter_group_is_empty(&ep->pending.group) &&
        uct_tcp_ep_has_room(ep)) {
        ucs_arbiter_group_schedule(&iface->arbiter, &ep->pending.group);
    }
}

/* Writes what was just queued, from an application call: a broken
 * socket is left for progress to find (it reports an error event), so the
 * error handler never runs inside the application's send. */
static void uct_tcp_ep_tx_kick(uct_tcp_ep_t *ep)
{
    if (ep->state == UCT_TCP_EP_CONNECTED) {
        (void)uct_tcp_ep_tx_write(ep);
    }
    uct_tcp_ep_update_events(ep);
}

void uct_tcp_ep_defer_progress(uct_tcp_iface_t *iface, int force)
{
    ucs_time_t now = ucs_get_time();
    uct_tcp_ep_t *ep, *tmp;

    ucs_list_for_each_safe(ep, tmp, &iface->defer_list, retry_list) {
        if (force || ((now - ep->retry_time) >= iface->config.coalesce_time)) {
            uct_tcp_ep_tx_progress(ep);
        }
    }
}

/* After appending to a deferred ep: write now if the buffer is filling. */
static UCS_F_ALWAYS_INLINE void uct_tcp_ep_defer_check(uct_tcp_ep_t *ep)
{
    if ((ep->flags & UCT_TCP_EP_FLAG_DEFERRED) &&
        (ep->tx_queued >= uct_tcp_ep_iface(ep)->config.tx_buf_size / 2)) {
        uct_tcp_ep_tx_kick(ep);
    }
}

/* ------------------------------------------------------------------------
 * Connection set-up
 */

static ucs_status_t uct_tcp_ep_socket_create(uct_tcp_iface_t *iface,
                                             int family, int *fd_p)
{
    int fd;

    fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) {
        if ((errno == EMFILE) || (errno == ENFILE)) {
            ucs_error("tcp iface %s: out of file descriptors (%m); raise "
                      "the limit with 'ulimit -n'", iface->super.dev_name);
            return UCS_ERR_NO_RESOURCE;
        }
        ucs_error("tcp iface %s: socket() failed: %m",
                  iface->super.dev_name);
        return UCS_ERR_IO_ERROR;
    }

    *fd_p = fd;
    return UCS_OK;
}

/* Puts @a n bytes at the head of the send queue, before anything the
 * user sent while there was no connection. */
static ucs_status_t uct_tcp_ep_queue_first(uct_tcp_ep_t *ep, const void *data,
                                           size_t n)
{
    uct_tcp_tx_t *tx;

    tx = uct_tcp_ep_tx_buf_get(ep);
    if (tx == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(tx->data, data, n);
    tx->length                       = n;
    ep->tx_queued                   += (uint32_t)n;
    uct_tcp_ep_iface(ep)->tx_queued += n;
    ucs_list_add_head(&ep->tx_list, &tx->list);
    return UCS_OK;
}

static void uct_tcp_handshake_reply_init(uct_tcp_handshake_reply_t *reply,
                                         uint16_t hs_status)
{
    memset(reply, 0, sizeof(*reply));
    reply->magic   = UCT_TCP_MAGIC;
    reply->version = UCT_TCP_VERSION;
    reply->status  = hs_status;
}

/* Queues the handshake of a connecting ep. */
static ucs_status_t uct_tcp_ep_queue_handshake(uct_tcp_ep_t *ep,
                                               uint8_t conn_type)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_handshake_t hs;
    ucs_status_t status;

    memset(&hs, 0, sizeof(hs));
    hs.magic     = UCT_TCP_MAGIC;
    hs.version   = UCT_TCP_VERSION;
    hs.conn_type = conn_type;
    hs.family    = (uint8_t)iface->listen_addr.sa.sa_family;
    if (iface->listen_addr.sa.sa_family == AF_INET6) {
        hs.listen_port = iface->listen_addr.in6.sin6_port;
        memcpy(hs.listen_addr, &iface->listen_addr.in6.sin6_addr, 16);
    } else {
        hs.listen_port = iface->listen_addr.in.sin_port;
        memcpy(hs.listen_addr, &iface->listen_addr.in.sin_addr, 4);
    }
    if (conn_type == UCT_TCP_CONN_TO_EP) {
        hs.dst_ep_id     = ep->peer_id;
        hs.dst_ep_cookie = ep->peer_cookie;
        hs.src_ep_id     = ep->id;
        hs.src_ep_cookie = ep->cookie;
    }

    status = uct_tcp_ep_queue_first(ep, &hs, sizeof(hs));
    if (status == UCS_OK) {
        ep->flags |= UCT_TCP_EP_FLAG_WAIT_REPLY | UCT_TCP_EP_FLAG_CONNECTOR;
    }
    return status;
}

static ucs_time_t uct_tcp_ep_retry_delay(unsigned attempt)
{
    double delay = 0.01 * (double)(1u << ucs_min(attempt, 7u));

    return ucs_time_from_sec(ucs_min(delay, 1.0));
}

/* Connect failed with @a err: try again later if allowed, else fail. */
static ucs_status_t uct_tcp_ep_connect_failed(uct_tcp_ep_t *ep, int err)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status    = uct_tcp_errno_status(err);
    ucs_time_t now         = ucs_get_time();
    char str[UCS_SOCKADDR_STRING_LEN];

    uct_tcp_ep_close_socket(ep);
    if (((err == ECONNREFUSED) || (err == ETIMEDOUT) ||
         (err == EHOSTUNREACH)) &&
        (ep->conn_retries < iface->config.max_conn_retries) &&
        (now < ep->conn_deadline)) {
        ucs_debug("tcp ep %p: connect to %s failed (%s), retry %u of %u",
                  (void*)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                  strerror(err), ep->conn_retries + 1,
                  iface->config.max_conn_retries);
        ep->retry_time = now + uct_tcp_ep_retry_delay(ep->conn_retries);
        ++ep->conn_retries;
        uct_iface_stat_conn_retry(&iface->super);
        ep->state = UCT_TCP_EP_RETRY_WAIT;
        ucs_list_add_tail(&iface->retry_list, &ep->retry_list);
        return UCS_OK;
    }

    ucs_debug("tcp ep %p: connect to %s failed: %s (after %u retries)",
              (void*)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
              strerror(err), ep->conn_retries);
    return (status == UCS_ERR_CONNECTION_RESET) ? UCS_ERR_UNREACHABLE :
                                                  status;
}

/* Opens the socket and starts a non-blocking connect to peer_addr.
 * UCS_OK also when the attempt was refused and a retry is scheduled. */
static ucs_status_t uct_tcp_ep_connect_start(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    socklen_t addrlen;
    ucs_status_t status;
    int fd, ret;

    status = uct_tcp_ep_socket_create(iface, ep->peer_addr.sa.sa_family,
                                      &fd);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_iface_set_sockopts(iface, fd, 1);
    if (status != UCS_OK) {
        close(fd);
        return status;
    }

    addrlen = (ep->peer_addr.sa.sa_family == AF_INET6) ?
                      sizeof(struct sockaddr_in6) :
                      sizeof(struct sockaddr_in);
    ep->fd  = fd;
    ret     = connect(fd, &ep->peer_addr.sa, addrlen);
    if (ret == 0) {
        ep->state = UCT_TCP_EP_CONNECTED;
    } else if (errno == EINPROGRESS) {
        ep->state = UCT_TCP_EP_CONNECTING;
    } else {
        return uct_tcp_ep_connect_failed(ep, errno);
    }

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        close(fd);
        ep->fd = -1;
        return status;
    }

    uct_tcp_ep_tx_kick(ep);
    return UCS_OK;
}

/* A non-blocking connect finished. */
static void uct_tcp_ep_connect_progress(uct_tcp_ep_t *ep)
{
    socklen_t len = sizeof(int);
    ucs_status_t status;
    int err       = 0;

    if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
        err = errno;
    }
    if (err == EINPROGRESS) {
        return;
    }
    if (err != 0) {
        status = uct_tcp_ep_connect_failed(ep, err);
        if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, status);
        }
        return;
    }

    ep->state = UCT_TCP_EP_CONNECTED;
    uct_tcp_ep_tx_progress(ep);
}

void uct_tcp_ep_retry_progress(uct_tcp_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_ep_t *ep, *tmp;
    ucs_status_t status;

    ucs_list_for_each_safe(ep, tmp, &iface->retry_list, retry_list) {
        if (now < ep->retry_time) {
            continue;
        }
        if (ep->state == UCT_TCP_EP_ACCEPTED) {
            ucs_warn("tcp iface %p: no handshake from %s within "
                     "UCX_TCP_CONN_TIMEOUT; closing the connection",
                     (void*)iface, uct_tcp_ep_peer_str(ep, str, sizeof(str)));
            uct_tcp_ep_free(ep);
            continue;
        }
        ucs_list_del(&ep->retry_list);
        ep->state = UCT_TCP_EP_CONNECTING;
        status    = uct_tcp_ep_connect_start(ep);
        if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, status);
        }
    }
}

/* ------------------------------------------------------------------------
 * Handshake
 */

static void uct_tcp_ep_send_reply_now(int fd, uint16_t hs_status)
{
    uct_tcp_handshake_reply_t reply;
    ssize_t ret;

    uct_tcp_handshake_reply_init(&reply, hs_status);
    /* Best effort: the connection is closed right after */
    ret = send(fd, &reply, sizeof(reply), UCT_TCP_SEND_FLAGS);
    (void)ret;
}

/* Refuses the connection of an internal ep: reply, one warning, close. */
static void uct_tcp_ep_refuse(uct_tcp_ep_t *ep, uint16_t hs_status,
                              const char *why)
{
    char str[UCS_SOCKADDR_STRING_LEN];

    if (hs_status != UCT_TCP_HS_ACCEPTED) {
        uct_tcp_ep_send_reply_now(ep->fd, hs_status);
    }
    ucs_warn("tcp iface %p: refused the connection from %s: %s",
             (void*)uct_tcp_ep_iface(ep),
             uct_tcp_ep_peer_str(ep, str, sizeof(str)), why);
    uct_tcp_ep_free(ep);
}

static ucs_status_t uct_tcp_ep_queue_reply(uct_tcp_ep_t *ep)
{
    uct_tcp_handshake_reply_t reply;

    uct_tcp_handshake_reply_init(&reply, UCT_TCP_HS_ACCEPTED);
    return uct_tcp_ep_queue_first(ep, &reply, sizeof(reply));
}

/* Moves the accepted socket of internal @a ep to the user's @a target. */
static uct_tcp_ep_t *uct_tcp_ep_attach(uct_tcp_ep_t *ep, uct_tcp_ep_t *target,
                                       const uct_tcp_handshake_t *hs)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (uct_tcp_ep_queue_reply(target) != UCS_OK) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "out of memory");
        return NULL;
    }
    if (ucs_event_set_mod(iface->event_set, ep->fd,
                          (ucs_event_set_types_t)ep->events,
                          target) != UCS_OK) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "event set error");
        return NULL;
    }

    target->fd          = ep->fd;
    target->events      = ep->events;
    target->rx          = ep->rx;
    target->peer_addr   = ep->peer_addr;
    target->peer_id     = hs->src_ep_id;
    target->peer_cookie = hs->src_ep_cookie;
    target->state       = UCT_TCP_EP_CONNECTED;
    ep->fd              = -1;
    ep->events          = 0;
    ep->rx              = NULL;
    uct_tcp_ep_free(ep);

    uct_tcp_ep_update_events(target); /* the reply goes out when writable */
    return target;
}

/* Magic and version, the part every protocol version shares */
#define UCT_TCP_HS_PREFIX_LEN \
    (sizeof(uint64_t) + sizeof(uint16_t))

static int uct_tcp_handshake_prefix_ok(const char *data)
{
    uint64_t magic;
    uint16_t version;

    memcpy(&magic, data, sizeof(magic));
    memcpy(&version, data + sizeof(magic), sizeof(version));
    return (magic == UCT_TCP_MAGIC) && (version == UCT_TCP_VERSION);
}

/* Checks the handshake at the head of @a ep's receive buffer (at least
 * its prefix when that is wrong). Returns the
 * ep that owns the connection from now on, or NULL if it was refused. */
static uct_tcp_ep_t *uct_tcp_ep_handle_handshake(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_handshake_t hs;
    uct_tcp_ep_t *target;
    char why[128];
    void *value;

    memset(&hs, 0, sizeof(hs));
    memcpy(&hs, ep->rx->data + ep->rx->offset,
           ucs_min(sizeof(hs), ep->rx->length - ep->rx->offset));
    if (hs.magic != UCT_TCP_MAGIC) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_ACCEPTED,
                          "wrong magic number (not an openuct tcp peer?)");
        return NULL;
    }
    if (hs.version != UCT_TCP_VERSION) {
        snprintf(why, sizeof(why), "it speaks protocol version %u, this "
                 "side version %u", hs.version, UCT_TCP_VERSION);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_BAD_VERSION, why);
        return NULL;
    }
    ep->rx->offset += sizeof(hs);

    if (hs.conn_type == UCT_TCP_CONN_TO_IFACE) {
        if (uct_tcp_ep_queue_reply(ep) != UCS_OK) {
            uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "out of memory");
            return NULL;
        }
        ucs_list_del(&ep->retry_list); /* no handshake timeout now */
        ep->state = UCT_TCP_EP_CONNECTED;
        uct_tcp_ep_update_events(ep); /* the reply goes out when writable */
        return ep;
    }

    if (hs.conn_type != UCT_TCP_CONN_TO_EP) {
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, "unknown connection type");
        return NULL;
    }

    if (!ucs_ptr_array_lookup(&iface->ep_ids, hs.dst_ep_id, &value) ||
        (((uct_tcp_ep_t*)value)->cookie != hs.dst_ep_cookie)) {
        snprintf(why, sizeof(why), "no endpoint %u (cookie 0x%x) here; "
                 "was it destroyed?", hs.dst_ep_id, hs.dst_ep_cookie);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_NO_EP, why);
        return NULL;
    }
    target = value;
    if ((target->state != UCT_TCP_EP_WAIT_PEER) ||
        (target->flags & UCT_TCP_EP_FLAG_CONNECTOR)) {
        snprintf(why, sizeof(why), "endpoint %u already has a connection",
                 hs.dst_ep_id);
        uct_tcp_ep_refuse(ep, UCT_TCP_HS_DUPLICATE, why);
        return NULL;
    }
    return uct_tcp_ep_attach(ep, target, &hs);
}

static const char *uct_tcp_hs_status_str(uint16_t status)
{
    switch (status) {
    case UCT_TCP_HS_BAD_VERSION:
        return "protocol version mismatch";
    case UCT_TCP_HS_NO_EP:
        return "no such endpoint";
    case UCT_TCP_HS_DUPLICATE:
        return "endpoint already connected";
    default:
        return "unknown reason";
    }
}

/* The peer's answer to our handshake. UCS_OK: go on. */
static ucs_status_t uct_tcp_ep_handle_reply(uct_tcp_ep_t *ep)
{
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_handshake_reply_t reply;

    memcpy(&reply, ep->rx->data + ep->rx->offset, sizeof(reply));
    if (reply.magic != UCT_TCP_MAGIC) {
        uct_tcp_ep_protocol_error(ep, "handshake reply with a wrong magic "
                                      "number (not an openuct tcp peer?)");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (reply.status != UCT_TCP_HS_ACCEPTED) {
        ucs_warn("tcp ep %p: %s refused the connection: %s (its protocol "
                 "version %u, ours %u)", (void*)ep,
                 uct_tcp_ep_peer_str(ep, str, sizeof(str)),
                 uct_tcp_hs_status_str(reply.status), reply.version,
                 UCT_TCP_VERSION);
        uct_tcp_ep_fail(ep, UCS_ERR_UNREACHABLE);
        return UCS_ERR_UNREACHABLE;
    }
    ep->rx->offset += sizeof(reply);
    ep->flags      &= ~UCT_TCP_EP_FLAG_WAIT_REPLY;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Receive path
 */

static void uct_tcp_ep_deliver_am(uct_tcp_iface_t *iface, uint8_t id,
                                  char *data, size_t length)
{
    size_t align = iface->super.am_alignment;
    size_t off   = iface->super.am_align_offset;
    char *aligned;

    if ((align > 1) && (((uintptr_t)data + off) % align != 0)) {
        aligned = (char*)ucs_align_up_pow2((uintptr_t)iface->align_buf + off,
                                           align) - off;
        memcpy(aligned, data, length);
        data = aligned;
    }

    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, id, data,
                           length);
    }
    uct_iface_invoke_am(&iface->super, id, data, (unsigned)length, 0);
}

/* The contiguous piece of an iov at logical offset @a offset. */
static void uct_tcp_iov_piece(const uct_iov_t *iov, size_t iovcnt,
                              size_t offset, char **ptr_p, size_t *len_p)
{
    size_t i, chunk;

    for (i = 0; i < iovcnt; ++i) {
        if (offset < iov[i].length * iov[i].count) {
            chunk  = offset / iov[i].length;
            offset = offset % iov[i].length;
            *ptr_p = (char*)iov[i].buffer + (chunk * iov[i].stride) + offset;
            *len_p = iov[i].length - offset;
            return;
        }
        offset -= iov[i].length * iov[i].count;
    }
    *ptr_p = NULL;
    *len_p = 0;
}

/* Copies @a n received bytes of a GET response into its destination. */
static void uct_tcp_get_op_fill(uct_tcp_get_op_t *op, const char *src,
                                size_t n)
{
    size_t len;
    char *dst;

    while (n > 0) {
        uct_tcp_iov_piece(op->iov, op->iovcnt, op->offset, &dst, &len);
        len = ucs_min(len, n);
        memcpy(dst, src, len);
        src        += len;
        n          -= len;
        op->offset += len;
    }
}

static void uct_tcp_ep_get_done(uct_tcp_ep_t *ep, uct_tcp_get_op_t *op)
{
    ucs_list_del(&op->list);
    if (op->comp != NULL) {
        uct_invoke_completion(op->comp, UCS_OK);
    }
    ucs_mpool_put(op);
}

/* Answers a GET request: small ones copied, large ones sent from memory. */
static ucs_status_t uct_tcp_ep_get_respond(uct_tcp_ep_t *ep,
                                           const char *payload)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_req_t req;
    uct_tcp_hdr_t *hdr;
    struct iovec *iov;
    uct_tcp_tx_t *tx;
    char *dest;

    memcpy(&req, payload, sizeof(req));
    uct_tcp_ep_defer_stop(ep); /* answers are not held back */
    if (req.length > UCT_TCP_MAX_STREAM_MSG) {
        uct_tcp_ep_protocol_error(ep, "GET request larger than 4 GB");
        return UCS_ERR_CONNECTION_RESET;
    }

    if (req.length + sizeof(*hdr) <= iface->config.tx_buf_size / 2) {
        dest = uct_tcp_ep_tx_reserve(ep, sizeof(*hdr) + req.length, 0, &tx);
        if (dest == NULL) {
            goto err_nomem;
        }
        uct_tcp_hdr_write(dest, UCT_TCP_OP_GET_RESP,
                         req.length);
        memcpy(dest + sizeof(*hdr), (const void*)(uintptr_t)req.remote_addr,
               req.length);
        uct_tcp_ep_tx_commit(ep, tx, sizeof(*hdr) + req.length);
        return UCS_OK;
    }

    tx = ucs_mpool_get(&iface->op_mp);
    if (tx == NULL) {
        goto err_nomem;
    }
    iov            = (struct iovec*)tx->data;
    hdr            = (uct_tcp_hdr_t*)(iov + 2);
    tx->comp       = NULL;
    tx->is_buf     = 0;
    tx->iov_index  = 0;
    tx->iovcnt     = 2;
    tx->length     = 0;
    tx->offset     = 0;
    uct_tcp_hdr_init(hdr, UCT_TCP_OP_GET_RESP, req.length);
    iov[0].iov_base = hdr;
    iov[0].iov_len  = sizeof(*hdr);
    iov[1].iov_base = (void*)(uintptr_t)req.remote_addr;
    iov[1].iov_len  = req.length;
    ucs_list_add_tail(&ep->tx_list, &tx->list);
    ++ep->tx_ops;
    return UCS_OK;

err_nomem:
    ucs_error("tcp ep %p: no memory to answer a GET", (void*)ep);
    uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
    return UCS_ERR_NO_MEMORY;
}

/* Handles the message at the head of the receive buffer, if complete (or
 * starts streaming it). UCS_OK: handled, go on; UCS_ERR_NO_PROGRESS:
 * needs more bytes; another status: the ep was failed (and may be gone).
 */
static ucs_status_t uct_tcp_ep_rx_message(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_rx_t *rx       = ep->rx;
    size_t avail           = rx->length - rx->offset;
    uct_tcp_get_op_t *op;
    uint64_t remote_addr;
    uct_tcp_hdr_t hdr;
    char *payload;
    size_t n;

    if (avail < sizeof(hdr)) {
        return UCS_ERR_NO_PROGRESS;
    }
    memcpy(&hdr, rx->data + rx->offset, sizeof(hdr));
    payload = rx->data + rx->offset + sizeof(hdr);
    avail  -= sizeof(hdr);

    if (hdr.id < UCT_AM_ID_MAX) {
        if (hdr.length > iface->config.max_am) {
            uct_tcp_ep_protocol_error(ep, "active message larger than the "
                                          "receive segment "
                                          "(UCX_TCP_RX_SEG_SIZE)");
            return UCS_ERR_CONNECTION_RESET;
        }
        if (avail < hdr.length) {
            return UCS_ERR_NO_PROGRESS;
        }
        rx->offset += sizeof(hdr) + hdr.length;
        uct_tcp_ep_deliver_am(iface, hdr.id, payload, hdr.length);
        return UCS_OK;
    }

    switch (hdr.id) {
    case UCT_TCP_OP_PUT:
        if (hdr.length < sizeof(remote_addr)) {
            uct_tcp_ep_protocol_error(ep, "truncated PUT");
            return UCS_ERR_CONNECTION_RESET;
        }
        if (avail < sizeof(remote_addr)) {
            return UCS_ERR_NO_PROGRESS;
        }
        memcpy(&remote_addr, payload, sizeof(remote_addr));
        n = ucs_min(avail, (size_t)hdr.length) - sizeof(remote_addr);
        memcpy((void*)(uintptr_t)remote_addr, payload + sizeof(remote_addr),
               n);
        rx->offset += sizeof(hdr) + sizeof(remote_addr) + n;
        if (n < hdr.length - sizeof(remote_addr)) {
            ep->rx_stream_id   = UCT_TCP_OP_PUT;
            ep->rx_stream_dest = (char*)(uintptr_t)remote_addr + n;
            ep->rx_stream_left = hdr.length - sizeof(remote_addr) - n;
        }
        return UCS_OK;
    case UCT_TCP_OP_GET_REQ:
        if (hdr.length != sizeof(uct_tcp_get_req_t)) {
            uct_tcp_ep_protocol_error(ep, "malformed GET request");
            return UCS_ERR_CONNECTION_RESET;
        }
        if (avail < hdr.length) {
            return UCS_ERR_NO_PROGRESS;
        }
        rx->offset += sizeof(hdr) + hdr.length;
        return uct_tcp_ep_get_respond(ep, payload);
    case UCT_TCP_OP_GET_RESP:
        if (ucs_list_is_empty(&ep->get_list)) {
            uct_tcp_ep_protocol_error(ep, "GET response with no request");
            return UCS_ERR_CONNECTION_RESET;
        }
        op = ucs_list_head(&ep->get_list, uct_tcp_get_op_t, list);
        if (op->length != hdr.length) {
            uct_tcp_ep_protocol_error(ep, "GET response of the wrong "
                                          "length");
            return UCS_ERR_CONNECTION_RESET;
        }
        if (op->unpack_cb != NULL) {
            /* bcopy: bounded by the segment, delivered whole */
            if (avail < hdr.length) {
                return UCS_ERR_NO_PROGRESS;
            }
            rx->offset += sizeof(hdr) + hdr.length;
            op->unpack_cb(op->arg, payload, hdr.length);
            uct_tcp_ep_get_done(ep, op);
            return UCS_OK;
        }
        n = ucs_min(avail, (size_t)hdr.length);
        uct_tcp_get_op_fill(op, payload, n);
        rx->offset += sizeof(hdr) + n;
        if (n < hdr.length) {
            ep->rx_stream_id   = UCT_TCP_OP_GET_RESP;
            ep->rx_stream_left = hdr.length - n;
        } else {
            uct_tcp_ep_get_done(ep, op);
        }
        return UCS_OK;
    case UCT_TCP_OP_ACK_REQ:
    case UCT_TCP_OP_ACK:
        if (hdr.length != 0) {
            uct_tcp_ep_protocol_error(ep, "malformed acknowledgement");
            return UCS_ERR_CONNECTION_RESET;
        }
        rx->offset += sizeof(hdr);
        if (hdr.id == UCT_TCP_OP_ACK) {
            ++ep->acks_received;
            uct_tcp_ep_check_flush(ep);
            return UCS_OK;
        }
        uct_tcp_hdr_init(&hdr, UCT_TCP_OP_ACK, 0);
        if (uct_tcp_ep_ctrl_send(ep, &hdr, sizeof(hdr)) != UCS_OK) {
            uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
            return UCS_ERR_NO_MEMORY;
        }
        return UCS_OK;
    default:
        uct_tcp_ep_protocol_error(ep, "message with an invalid id");
        return UCS_ERR_CONNECTION_RESET;
    }
}

/* Handles every complete message in the receive buffer. Returns the ep
 * that owns the connection afterwards, NULL if it failed. */
static uct_tcp_ep_t *uct_tcp_ep_rx_parse(uct_tcp_ep_t *ep)
{
    ucs_status_t status;
    size_t avail;

    if (ep->state == UCT_TCP_EP_ACCEPTED) {
        avail = ep->rx->length - ep->rx->offset;
        if ((avail < UCT_TCP_HS_PREFIX_LEN) ||
            ((avail < sizeof(uct_tcp_handshake_t)) &&
             uct_tcp_handshake_prefix_ok(ep->rx->data + ep->rx->offset))) {
            /* a peer of another version (or not ours at all) is refused
             * as soon as the prefix shows it, whatever it sends next */
            return ep;
        }
        ep = uct_tcp_ep_handle_handshake(ep);
        if (ep == NULL) {
            return NULL;
        }
    }

    if (ep->flags & UCT_TCP_EP_FLAG_WAIT_REPLY) {
        if (ep->rx->length - ep->rx->offset <
            sizeof(uct_tcp_handshake_reply_t)) {
            return ep;
        }
        if (uct_tcp_ep_handle_reply(ep) != UCS_OK) {
            return NULL;
        }
    }

    while (ep->rx_stream_left == 0) {
        status = uct_tcp_ep_rx_message(ep);
        if (status == UCS_ERR_NO_PROGRESS) {
            break;
        } else if (status != UCS_OK) {
            return NULL;
        }
    }
    return ep;
}

/* Receives the rest of a large PUT or GET response straight into its
 * destination. */
static void uct_tcp_ep_rx_stream(uct_tcp_ep_t *ep)
{
    uct_tcp_get_op_t *op = NULL;
    size_t len;
    ssize_t ret;
    char *dest;

    if (ep->rx_stream_id == UCT_TCP_OP_PUT) {
        dest = ep->rx_stream_dest;
        len  = ep->rx_stream_left;
    } else {
        op = ucs_list_head(&ep->get_list, uct_tcp_get_op_t, list);
        uct_tcp_iov_piece(op->iov, op->iovcnt, op->offset, &dest, &len);
        len = ucs_min(len, ep->rx_stream_left);
    }

    ret = recv(ep->fd, dest, ucs_min(len, (size_t)INT32_MAX), 0);
    if (ret <= 0) {
        if ((ret < 0) && ((errno == EAGAIN) || (errno == EINTR))) {
            return;
        }
        if (ret == 0) {
            uct_tcp_ep_protocol_error(ep, "connection closed in the middle "
                                          "of a message");
        } else {
            uct_tcp_ep_fail(ep, uct_tcp_errno_status(errno));
        }
        return;
    }

    ep->rx_stream_left -= ret;
    if (op == NULL) {
        ep->rx_stream_dest += ret;
    } else {
        op->offset += ret;
        if (ep->rx_stream_left == 0) {
            uct_tcp_ep_get_done(ep, op);
        }
    }
}

unsigned uct_tcp_ep_rx_progress(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_rx_t *rx;
    size_t queued;
    ssize_t ret;

    if (ep->rx_stream_left > 0) {
        uct_tcp_ep_rx_stream(ep);
        return 1;
    }

    rx = ep->rx;
    if (rx == NULL) {
        rx = ucs_mpool_get(&iface->rx_mp);
        if (rx == NULL) {
            ucs_error("tcp ep %p: out of receive buffers", (void*)ep);
            return 0; /* level-triggered: retried on the next progress */
        }
        rx->offset = rx->length = 0;
        ep->rx     = rx;
        ++iface->rx_held;
    } else if (rx->offset > 0) {
        queued = rx->length - rx->offset;
        memmove(rx->data, rx->data + rx->offset, queued);
        rx->offset = 0;
        rx->length = queued;
    }

    ret = recv(ep->fd, rx->data + rx->length,
               iface->config.rx_seg_size - rx->length, 0);
    if (ret <= 0) {
        if ((ret < 0) && ((errno == EAGAIN) || (errno == EINTR))) {
            ret = 0;
            goto out;
        }
        if ((ret == 0) && (rx->length > rx->offset)) {
            uct_tcp_ep_protocol_error(ep, "connection closed in the middle "
                                          "of a message");
        } else if ((ret == 0) && (ep->state == UCT_TCP_EP_ACCEPTED)) {
            uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
        } else {
            uct_tcp_ep_fail(ep, (ret == 0) ? UCS_ERR_CONNECTION_RESET :
                                             uct_tcp_errno_status(errno));
        }
        return 1;
    }
    rx->length += ret;

    ep = uct_tcp_ep_rx_parse(ep);
    if (ep == NULL) {
        return 1;
    }
    /* polled directly by the next progress calls */
    iface->hot_ep = ep;

out:
    if ((ep->rx != NULL) && (ep->rx->offset == ep->rx->length)) {
        uct_tcp_ep_release_rx(ep);
    }
    if (!ucs_list_is_empty(&ep->tx_list) && (ep->fd >= 0) &&
        !(ep->events & UCS_EVENT_SET_EVWRITE) &&
        !(ep->flags & UCT_TCP_EP_FLAG_DEFERRED)) {
        /* answers (ACK, GET data) queued by what was received */
        uct_tcp_ep_tx_progress(ep);
    }
    return ret > 0;
}

void uct_tcp_ep_handle_events(uct_tcp_ep_t *ep, ucs_event_set_types_t events)
{
    if (ep->state == UCT_TCP_EP_DESTROYED) {
        return;
    }

    if (ep->state == UCT_TCP_EP_CONNECTING) {
        if (events & (UCS_EVENT_SET_EVWRITE | UCS_EVENT_SET_EVERR)) {
            uct_tcp_ep_connect_progress(ep);
        }
        return;
    }

    if ((events & (UCS_EVENT_SET_EVWRITE | UCS_EVENT_SET_EVERR)) &&
        !ucs_list_is_empty(&ep->tx_list)) {
        uct_tcp_ep_tx_progress(ep);
        if ((ep->state == UCT_TCP_EP_FAILED) ||
            (ep->state == UCT_TCP_EP_DESTROYED)) {
            return;
        }
    }

    if (events & (UCS_EVENT_SET_EVREAD | UCS_EVENT_SET_EVERR)) {
        uct_tcp_ep_rx_progress(ep);
    }
}

/* ------------------------------------------------------------------------
 * Creation
 */

static uct_tcp_ep_t *uct_tcp_ep_alloc(uct_tcp_iface_t *iface)
{
    uct_tcp_ep_t *ep;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("tcp iface %p: failed to allocate an endpoint",
                  (void*)iface);
        return NULL;
    }

    uct_base_ep_init(&ep->super, &iface->super);
    ep->fd = -1;
    ucs_list_head_init(&ep->tx_list);
    uct_pending_group_init(&ep->pending);
    ucs_list_head_init(&ep->get_list);
    ucs_list_head_init(&ep->flush_list);
    ucs_list_add_tail(&iface->ep_list, &ep->list);
    return ep;
}

ucs_status_t uct_tcp_ep_accept(uct_tcp_iface_t *iface, int fd,
                               const uct_tcp_sockaddr_t *peer)
{
    uct_tcp_ep_t *ep;
    ucs_status_t status;

    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->flags      = UCT_TCP_EP_FLAG_INTERNAL;
    ep->state      = UCT_TCP_EP_ACCEPTED;
    ep->peer_addr  = *peer;
    ep->fd         = fd;
    /* a peer that never sends its handshake is dropped after this */
    ep->retry_time = ucs_get_time() + iface->config.conn_timeout;
    ucs_list_add_tail(&iface->retry_list, &ep->retry_list);

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        ep->fd = -1; /* the caller closes it */
        uct_tcp_ep_free(ep);
        return status;
    }
    return UCS_OK;
}

/* Fills a socket address from a device address and a port. */
static ucs_status_t uct_tcp_sockaddr_from_dev(const uct_device_addr_t *dev,
                                              uint16_t port_nbo,
                                              uct_tcp_sockaddr_t *sa)
{
    const uct_tcp_device_addr_t *addr = (const uct_tcp_device_addr_t*)dev;

    memset(sa, 0, sizeof(*sa));
    if (addr->family == AF_INET) {
        sa->in.sin_family = AF_INET;
        sa->in.sin_port   = port_nbo;
        memcpy(&sa->in.sin_addr, addr->addr, 4);
    } else if (addr->family == AF_INET6) {
        sa->in6.sin6_family = AF_INET6;
        sa->in6.sin6_port   = port_nbo;
        memcpy(&sa->in6.sin6_addr, addr->addr, 16);
    } else {
        ucs_error("tcp: device address of unknown family %u; is it a tcp "
                  "address?", addr->family);
        return UCS_ERR_INVALID_ADDR;
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_ep_create_to_iface(uct_tcp_iface_t *iface,
                                               const uct_ep_params_t *params,
                                               uct_ep_h *ep_p)
{
    uct_tcp_iface_addr_t port;
    uct_tcp_ep_t *ep;
    ucs_status_t status;

    memcpy(&port, params->iface_addr, sizeof(port));
    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ++iface->num_user_eps;

    status = uct_tcp_sockaddr_from_dev(params->dev_addr, port,
                                       &ep->peer_addr);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_tcp_ep_queue_handshake(ep, UCT_TCP_CONN_TO_IFACE);
    if (status != UCS_OK) {
        goto err_free;
    }

    ep->state         = UCT_TCP_EP_CONNECTING;
    ep->conn_deadline = ucs_get_time() + iface->config.conn_timeout;
    status         = uct_tcp_ep_connect_start(ep);
    if (status != UCS_OK) {
        goto err_free;
    }

    *ep_p = &ep->super.super;
    return UCS_OK;

err_free:
    uct_tcp_ep_free(ep);
    return status;
}

/* An ep to be connected with uct_ep_connect_to_ep(). */
static ucs_status_t uct_tcp_ep_create_for_ep(uct_tcp_iface_t *iface,
                                             uct_ep_h *ep_p)
{
    uct_tcp_ep_t *ep;
    ucs_status_t status;
    unsigned id;

    ep = uct_tcp_ep_alloc(iface);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ++iface->num_user_eps;

    status = ucs_ptr_array_insert(&iface->ep_ids, ep, &id);
    if (status != UCS_OK) {
        uct_tcp_ep_free(ep);
        return status;
    }
    ep->id     = id;
    ep->cookie = iface->cookie++;
    ep->flags |= UCT_TCP_EP_FLAG_TO_EP | UCT_TCP_EP_FLAG_IN_IDS;
    ep->state  = UCT_TCP_EP_WAIT_PEER;
    *ep_p      = &ep->super.super;
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(params->iface);
    int has_dev   = (params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) &&
                    (params->dev_addr != NULL);
    int has_iface = (params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) &&
                    (params->iface_addr != NULL);

    if (has_dev && has_iface) {
        return uct_tcp_ep_create_to_iface(iface, params, ep_p);
    } else if (!has_dev && !has_iface) {
        return uct_tcp_ep_create_for_ep(iface, ep_p);
    }

    ucs_error("tcp: uct_ep_create needs both dev_addr and iface_addr (to "
              "connect to an interface) or neither (to connect with "
              "uct_ep_connect_to_ep)");
    return UCS_ERR_INVALID_PARAM;
}

void uct_tcp_ep_destroy(uct_ep_h tl_ep)
{
    uct_tcp_ep_free(uct_tcp_ep(tl_ep));
}

ucs_status_t uct_tcp_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_addr_t ep_addr;

    if (!(ep->flags & UCT_TCP_EP_FLAG_TO_EP)) {
        ucs_error("tcp ep %p: only an endpoint created without a peer "
                  "address has an endpoint address", (void*)ep);
        return UCS_ERR_INVALID_PARAM;
    }
    ep_addr.port   = (iface->listen_addr.sa.sa_family == AF_INET6) ?
                             iface->listen_addr.in6.sin6_port :
                             iface->listen_addr.in.sin_port;
    ep_addr.ep_id  = ep->id;
    ep_addr.cookie = ep->cookie;
    memcpy(addr, &ep_addr, sizeof(ep_addr));
    return UCS_OK;
}

/* Orders two (address, port, ep id) triples: the smaller one connects. */
static int uct_tcp_ep_is_connector(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    const uct_tcp_sockaddr_t *local = &iface->listen_addr;
    const uct_tcp_sockaddr_t *peer  = &ep->peer_addr;
    int cmp;

    /* both sides see the same two triples, so they agree */
    cmp = ucs_sockaddr_cmp(&local->sa, &peer->sa, NULL);
    if (cmp != 0) {
        return cmp < 0;
    }
    return ep->id < ep->peer_id;
}

ucs_status_t uct_tcp_ep_connect_to_ep(uct_ep_h tl_ep,
                                      const uct_device_addr_t *dev_addr,
                                      const uct_ep_addr_t *ep_addr)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_ep_addr_t addr;
    ucs_status_t status;

    if (!(ep->flags & UCT_TCP_EP_FLAG_TO_EP) ||
        (ep->flags & UCT_TCP_EP_FLAG_PEER_KNOWN)) {
        ucs_error("tcp ep %p: uct_ep_connect_to_ep needs an endpoint "
                  "created without a peer address, connected once",
                  (void*)ep);
        return UCS_ERR_INVALID_PARAM;
    }

    memcpy(&addr, ep_addr, sizeof(addr));
    if (ep->state != UCT_TCP_EP_WAIT_PEER) {
        /* the peer connected first: the connection exists */
        ep->flags |= UCT_TCP_EP_FLAG_PEER_KNOWN;
        return UCS_OK;
    }

    status = uct_tcp_sockaddr_from_dev(dev_addr, addr.port, &ep->peer_addr);
    if (status != UCS_OK) {
        return status;
    }
    ep->peer_id     = addr.ep_id;
    ep->peer_cookie = addr.cookie;
    ep->flags      |= UCT_TCP_EP_FLAG_PEER_KNOWN;

    if (!uct_tcp_ep_is_connector(ep)) {
        return UCS_OK; /* the peer connects to us */
    }

    status = uct_tcp_ep_queue_handshake(ep, UCT_TCP_CONN_TO_EP);
    if (status != UCS_OK) {
        return status;
    }
    ep->state         = UCT_TCP_EP_CONNECTING;
    ep->conn_deadline = ucs_get_time() + iface->config.conn_timeout;
    return uct_tcp_ep_connect_start(ep);
}

/* ------------------------------------------------------------------------
 * Sending
 */

/* Counts an application send of AM @a id that returned @a status: its
 * @a length bytes (as the receiver's handler sees them) when it was taken,
 * else the refusal or the failure. Returns @a status. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_tcp_ep_am_sent(uct_tcp_ep_t *ep, uint8_t id, size_t length,
                   ucs_status_t status)
{
    uct_base_iface_t *iface = &uct_tcp_ep_iface(ep)->super;

    if (ucs_likely(!UCS_STATUS_IS_ERR(status))) {
        uct_iface_stat_am_tx(iface, id, length);
    } else {
        uct_iface_stat_tx_error(iface, status);
    }
    return status;
}

/* The same for a PUT of @a length bytes */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_tcp_ep_put_sent(uct_tcp_ep_t *ep, size_t length, ucs_status_t status)
{
    uct_base_iface_t *iface = &uct_tcp_ep_iface(ep)->super;

    if (ucs_likely(!UCS_STATUS_IS_ERR(status))) {
        uct_iface_stat_put(iface, length);
    } else {
        uct_iface_stat_tx_error(iface, status);
    }
    return status;
}

/* The same for a GET of @a length bytes */
static ucs_status_t uct_tcp_ep_get_sent(uct_tcp_ep_t *ep, size_t length,
                                        ucs_status_t status)
{
    uct_base_iface_t *iface = &uct_tcp_ep_iface(ep)->super;

    if (!UCS_STATUS_IS_ERR(status)) {
        uct_iface_stat_get(iface, length);
    } else {
        uct_iface_stat_tx_error(iface, status);
    }
    return status;
}

/* Checks that an application send may be queued. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_tcp_ep_check_state(const uct_tcp_ep_t *ep)
{
    if (ucs_unlikely(ep->state == UCT_TCP_EP_FAILED)) {
        return (ucs_status_t)ep->err_status;
    }
    return UCS_OK;
}

/* Copies the part of @a iov after the first @a skip bytes to @a dest. */
static void uct_tcp_iovec_copy(char *dest, const struct iovec *iov,
                               size_t iovcnt, size_t skip)
{
    size_t i, n;

    for (i = 0; i < iovcnt; ++i) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        n = iov[i].iov_len - skip;
        memcpy(dest, (const char*)iov[i].iov_base + skip, n);
        dest += n;
        skip  = 0;
    }
}

/* Writes a whole message directly; returns bytes sent or -1 with errno. */
static ssize_t uct_tcp_ep_send_direct(uct_tcp_ep_t *ep,
                                      const struct iovec *iov, size_t iovcnt,
                                      size_t total)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char buf[UCT_TCP_SENDV_THRESH_MAX];
    struct msghdr msg;

    if (total <= iface->config.sendv_thresh) {
        uct_tcp_iovec_copy(buf, iov, iovcnt, 0);
        return send(ep->fd, buf, total, UCT_TCP_SEND_FLAGS);
    }

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = (struct iovec*)iov;
    msg.msg_iovlen = iovcnt;
    return sendmsg(ep->fd, &msg, UCT_TCP_SEND_FLAGS);
}

/* Sends a message of @a total bytes gathered from @a iov, copying what
 * the socket does not take. */
static ucs_status_t uct_tcp_ep_sendv(uct_tcp_ep_t *ep, const struct iovec *iov,
                                     size_t iovcnt, size_t total)
{
    size_t sent = 0;
    uct_tcp_tx_t *tx;
    ssize_t ret;
    char *dest;

    int defer = 0;

    if (ucs_likely(uct_tcp_ep_can_send_now(ep))) {
        defer = uct_tcp_ep_should_defer(ep);
        if (!defer) {
            ret = uct_tcp_ep_send_direct(ep, iov, iovcnt, total);
            if (ucs_likely((size_t)ret == total)) {
                return UCS_OK;
            } else if (ret >= 0) {
                sent = ret;
            } else if ((errno != EAGAIN) && (errno != EINTR)) {
                /* progress sees the broken socket and fails the ep */
                return UCS_ERR_CONNECTION_RESET;
            }
            uct_iface_stat_tx_retry(&uct_tcp_ep_iface(ep)->super);
        }
    } else {
        ucs_status_t status = uct_tcp_ep_check_state(ep);
        if (status != UCS_OK) {
            return status;
        }
    }

    dest = uct_tcp_ep_tx_reserve(ep, total - sent, 1, &tx);
    if (dest == NULL) {
        if (sent > 0) {
            /* part of the message is out: the rest must follow */
            dest = uct_tcp_ep_tx_reserve(ep, total - sent, 0, &tx);
        }
        if (dest == NULL) {
            return (sent > 0) ? UCS_ERR_NO_MEMORY : UCS_ERR_NO_RESOURCE;
        }
    }
    uct_tcp_iovec_copy(dest, iov, iovcnt, sent);
    uct_tcp_ep_tx_commit(ep, tx, total - sent);
    if (defer) {
        uct_tcp_ep_defer_start(ep);
    } else {
        uct_tcp_ep_defer_check(ep);
        uct_tcp_ep_update_events(ep);
    }
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    struct iovec iov[3];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short", length,
                                    iface->config.max_bcopy -
                                    sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_tcp_hdr_init(&hdr, id, sizeof(header) + length);
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &header;
    iov[1].iov_len  = sizeof(header);
    iov[2].iov_base = (void*)payload;
    iov[2].iov_len  = length;
    status = uct_tcp_ep_sendv(ep, iov, (length > 0) ? 3 : 2,
                              sizeof(hdr) + sizeof(header) + length);
    return uct_tcp_ep_am_sent(ep, id, sizeof(header) + length, status);
}

/*
 * Zero-copy send of hdr + @a prefix + @a iov. What the socket does not
 * take at once is copied when it fits in the send buffer (UCS_OK), else
 * kept as a reference to the user's memory (UCS_INPROGRESS, @a comp runs
 * when the socket took the last byte).
 */
static ucs_status_t uct_tcp_ep_send_zcopy(uct_tcp_ep_t *ep, uint8_t id,
                                          const void *prefix,
                                          size_t prefix_len,
                                          const uct_iov_t *uiov,
                                          size_t iovcnt,
                                          uct_completion_t *comp)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    struct iovec vec[UCT_TCP_MAX_SEND_IOV];
    size_t payload_len = 0, cnt = 0, sent = 0, total, i;
    int defer          = 0;
    struct iovec *op_iov;
    uct_tcp_hdr_t hdr;
    ucs_status_t status;
    uct_tcp_tx_t *tx;
    unsigned c;
    ssize_t ret;
    char *dest;

    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (ep->tx_ops >= UCT_TCP_EP_MAX_ZCOPY_OPS) {
        return UCS_ERR_NO_RESOURCE;
    }

    for (i = 0; i < iovcnt; ++i) {
        payload_len += uiov[i].length * uiov[i].count;
    }
    total = sizeof(hdr) + prefix_len + payload_len;

    uct_tcp_hdr_init(&hdr, id, prefix_len + payload_len);
    vec[cnt].iov_base  = &hdr;
    vec[cnt++].iov_len = sizeof(hdr);
    if (prefix_len > 0) {
        vec[cnt].iov_base  = (void*)prefix;
        vec[cnt++].iov_len = prefix_len;
    }
    for (i = 0; i < iovcnt; ++i) {
        for (c = 0; (c < uiov[i].count) && (uiov[i].length > 0); ++c) {
            if (cnt == UCT_TCP_MAX_SEND_IOV) {
                ucs_error("tcp ep %p: zcopy iov has more than %d pieces; "
                          "use fewer, larger entries", (void*)ep,
                          UCT_TCP_MAX_SEND_IOV - 2);
                return UCS_ERR_UNSUPPORTED;
            }
            vec[cnt].iov_base  = (char*)uiov[i].buffer + c * uiov[i].stride;
            vec[cnt++].iov_len = uiov[i].length;
        }
    }

    if (uct_tcp_ep_can_send_now(ep)) {
        /* a small message is copied and held like a short one */
        defer = (total <= iface->config.tx_buf_size / 4) &&
                uct_tcp_ep_should_defer(ep);
        if (!defer) {
            ret = uct_tcp_ep_send_direct(ep, vec, cnt, total);
            if ((size_t)ret == total) {
                return UCS_OK;
            } else if (ret >= 0) {
                sent = ret;
            } else if ((errno != EAGAIN) && (errno != EINTR)) {
                return UCS_ERR_CONNECTION_RESET;
            }
            uct_iface_stat_tx_retry(&iface->super);
        }
    }

    /* A small tail is copied: the user's buffers are free now */
    if (total - sent <= iface->config.tx_buf_size / 2) {
        dest = uct_tcp_ep_tx_reserve(ep, total - sent, sent == 0, &tx);
        if (dest != NULL) {
            uct_tcp_iovec_copy(dest, vec, cnt, sent);
            uct_tcp_ep_tx_commit(ep, tx, total - sent);
            if (defer) {
                uct_tcp_ep_defer_start(ep);
            } else {
                uct_tcp_ep_defer_check(ep);
                uct_tcp_ep_update_events(ep);
            }
            return UCS_OK;
        }
        if ((sent == 0) && (ep->tx_queued + total - sent >
                            iface->config.tx_buf_size)) {
            return UCS_ERR_NO_RESOURCE;
        }
    }

    tx = ucs_mpool_get(&iface->op_mp);
    if (tx == NULL) {
        ucs_error("tcp ep %p: out of memory for a zcopy send", (void*)ep);
        return (sent > 0) ? UCS_ERR_NO_MEMORY : UCS_ERR_NO_RESOURCE;
    }
    op_iov        = (struct iovec*)tx->data;
    tx->comp      = comp;
    tx->is_buf    = 0;
    tx->iov_index = 0;
    tx->iovcnt    = (uint32_t)cnt;
    tx->length    = 0;
    tx->offset    = 0;
    /* the header and prefix live in the op, after the iovecs */
    dest = (char*)(op_iov + UCT_TCP_MAX_SEND_IOV);
    memcpy(dest, &hdr, sizeof(hdr));
    memcpy(op_iov, vec, sizeof(*vec) * cnt);
    op_iov[0].iov_base = dest;
    if (prefix_len > 0) {
        memcpy(dest + sizeof(hdr), prefix, prefix_len);
        op_iov[1].iov_base = dest + sizeof(hdr);
    }
    uct_tcp_tx_advance(tx, sent);
    ucs_list_add_tail(&ep->tx_list, &tx->list);
    ++ep->tx_ops;
    uct_tcp_ep_update_events(ep);
    return UCS_INPROGRESS;
}

ucs_status_t uct_tcp_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                     const uct_iov_t *iov, size_t iovcnt)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_am_id(&iface->super, id);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_short_iov", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "am_short_iov", length,
                                    iface->config.max_bcopy -
                                    sizeof(uint64_t));
    if (status != UCS_OK) {
        return status;
    }
    /* short: the message is small enough to always be copied if needed */
    status = uct_tcp_ep_send_zcopy(ep, id, NULL, 0, iov, iovcnt, NULL);
    return uct_tcp_ep_am_sent(ep, id, length,
                              (status == UCS_INPROGRESS) ? UCS_OK : status);
}

/* Packs a message of unknown length into a send buffer and sends it. */
static ssize_t uct_tcp_ep_send_packed(uct_tcp_ep_t *ep, uint8_t id,
                                      const void *prefix, size_t prefix_len,
                                      uct_pack_callback_t pack_cb, void *arg,
                                      const char *what)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    size_t max             = iface->config.max_bcopy - prefix_len;
    size_t room            = sizeof(uct_tcp_hdr_t) + iface->config.max_bcopy;
    int was_empty          = ucs_list_is_empty(&ep->tx_list);
    uct_tcp_tx_t *tx;
    ucs_status_t status;
    size_t length;
    char *dest;

    status = uct_tcp_ep_check_state(ep);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    dest = uct_tcp_ep_tx_reserve(ep, room, 1, &tx);
    if (dest == NULL) {
        return UCS_ERR_NO_RESOURCE;
    }

    length = pack_cb(dest + sizeof(uct_tcp_hdr_t) + prefix_len, arg);
    if (ucs_unlikely(length > max)) {
        if (tx->length == 0) {
            uct_tcp_ep_tx_release(ep, tx, UCS_OK);
        }
        return uct_iface_invalid_length(&iface->super, what, length, max);
    }

    uct_tcp_hdr_write(dest, id, prefix_len + length);
    if (prefix_len > 0) {
        memcpy(dest + sizeof(uct_tcp_hdr_t), prefix, prefix_len);
    }
    uct_tcp_ep_tx_commit(ep, tx, sizeof(uct_tcp_hdr_t) + prefix_len + length);
    if (!was_empty) {
        uct_tcp_ep_defer_check(ep);
        uct_tcp_ep_update_events(ep);
    } else if ((ep->state == UCT_TCP_EP_CONNECTED) &&
               uct_tcp_ep_should_defer(ep)) {
        uct_tcp_ep_defer_start(ep);
    } else {
        uct_tcp_ep_tx_kick(ep);
    }
    return length;
}

ssize_t uct_tcp_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                            uct_pack_callback_t pack_cb, void *arg,
                            unsigned flags)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    ucs_status_t status;
    ssize_t ret;

    status = uct_iface_check_am_id(&uct_tcp_ep_iface(ep)->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    ret = uct_tcp_ep_send_packed(ep, id, NULL, 0, pack_cb, arg,
                                 "am_bcopy packed");
    if (ucs_likely(ret >= 0)) {
        uct_tcp_ep_am_sent(ep, id, ret, UCS_OK);
    } else {
        uct_tcp_ep_am_sent(ep, id, 0, (ucs_status_t)ret);
    }
    return ret;
}

ucs_status_t uct_tcp_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                 const void *header, unsigned header_length,
                                 const uct_iov_t *iov, size_t iovcnt,
                                 unsigned flags, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_am_id(&iface->super, id);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_zcopy header",
                                    header_length, iface->config.max_hdr);
    if (status != UCS_OK) {
        return status;
    }
    length = header_length + uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "am_zcopy", length,
                                    iface->config.max_am);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_send_zcopy(ep, id, header, header_length, iov, iovcnt,
                                   comp);
    return uct_tcp_ep_am_sent(ep, id, length, status);
}

/* ------------------------------------------------------------------------
 * RMA: the rkey carries nothing; the remote address travels in the PUT
 * and GET messages. PUTs are acknowledged only when a flush asks.
 */

ucs_status_t uct_tcp_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    struct iovec iov[3];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "put_short", length,
                                    iface->config.max_bcopy -
                                    sizeof(remote_addr));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_PUT, sizeof(remote_addr) + length);
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &remote_addr;
    iov[1].iov_len  = sizeof(remote_addr);
    iov[2].iov_base = (void*)buffer;
    iov[2].iov_len  = length;
    status = uct_tcp_ep_sendv(ep, iov, (length > 0) ? 3 : 2,
                              sizeof(hdr) + sizeof(remote_addr) + length);
    if (ucs_likely(status == UCS_OK)) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
    }
    return uct_tcp_ep_put_sent(ep, length, status);
}

ssize_t uct_tcp_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr,
                             uct_rkey_t rkey)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    ssize_t ret;

    ret = uct_tcp_ep_send_packed(ep, UCT_TCP_OP_PUT, &remote_addr,
                                 sizeof(remote_addr), pack_cb, arg,
                                 "put_bcopy packed");
    if (ret >= 0) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
        uct_tcp_ep_put_sent(ep, ret, UCS_OK);
    } else {
        uct_tcp_ep_put_sent(ep, 0, (ucs_status_t)ret);
    }
    return ret;
}

ucs_status_t uct_tcp_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_iovcnt(&iface->super, "put_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "put_zcopy", length,
                                    UCT_TCP_MAX_STREAM_MSG -
                                    sizeof(remote_addr));
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_send_zcopy(ep, UCT_TCP_OP_PUT, &remote_addr,
                                   sizeof(remote_addr), iov, iovcnt, comp);
    if (!UCS_STATUS_IS_ERR(status)) {
        ep->flags |= UCT_TCP_EP_FLAG_PUT_UNACKED;
    }
    return uct_tcp_ep_put_sent(ep, length, status);
}

/* Sends a GET request; the response completes @a op in order. */
static ucs_status_t uct_tcp_ep_get_post(uct_tcp_ep_t *ep, uct_tcp_get_op_t *op,
                                        uint64_t remote_addr)
{
    struct {
        uct_tcp_hdr_t     hdr;
        uct_tcp_get_req_t req;
    } msg;
    struct iovec iov;
    ucs_status_t status;

    uct_tcp_hdr_init(&msg.hdr, UCT_TCP_OP_GET_REQ, sizeof(msg.req));
    msg.req.remote_addr = remote_addr;
    msg.req.length      = op->length;
    iov.iov_base        = &msg;
    iov.iov_len         = sizeof(msg);
    status = uct_tcp_ep_sendv(ep, &iov, 1, sizeof(msg));
    if (status != UCS_OK) {
        ucs_mpool_put(op);
        return status;
    }

    ucs_list_add_tail(&ep->get_list, &op->list);
    return UCS_INPROGRESS;
}

static uct_tcp_get_op_t *uct_tcp_ep_get_op_alloc(uct_tcp_ep_t *ep)
{
    uct_tcp_get_op_t *op;

    op = ucs_mpool_get(&uct_tcp_ep_iface(ep)->op_mp);
    if (op == NULL) {
        ucs_error("tcp ep %p: out of memory for a GET", (void*)ep);
    }
    return op;
}

ucs_status_t uct_tcp_ep_get_bcopy(uct_ep_h tl_ep,
                                  uct_unpack_callback_t unpack_cb, void *arg,
                                  size_t length, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_op_t *op;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "get_bcopy", length,
                                    iface->config.max_am);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return uct_tcp_ep_get_sent(ep, length, status);
    }

    op = uct_tcp_ep_get_op_alloc(ep);
    if (op == NULL) {
        return uct_tcp_ep_get_sent(ep, length, UCS_ERR_NO_MEMORY);
    }
    op->length    = length;
    op->offset    = 0;
    op->unpack_cb = unpack_cb;
    op->arg       = arg;
    op->iovcnt    = 0;
    op->comp      = comp;
    return uct_tcp_ep_get_sent(ep, length,
                               uct_tcp_ep_get_post(ep, op, remote_addr));
}

ucs_status_t uct_tcp_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_op_t *op;
    ucs_status_t status;
    size_t length;

    status = uct_iface_check_iovcnt(&iface->super, "get_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    length = uct_iov_total_length(iov, iovcnt);
    status = uct_iface_check_length(&iface->super, "get_zcopy", length,
                                    UCT_TCP_MAX_STREAM_MSG);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return uct_tcp_ep_get_sent(ep, length, status);
    }

    op = uct_tcp_ep_get_op_alloc(ep);
    if (op == NULL) {
        return uct_tcp_ep_get_sent(ep, length, UCS_ERR_NO_MEMORY);
    }
    op->length    = length;
    op->offset    = 0;
    op->unpack_cb = NULL;
    op->arg       = NULL;
    op->iovcnt    = iovcnt;
    op->comp      = comp;
    memcpy(op->iov, iov, sizeof(*iov) * iovcnt);
    if (length == 0) {
        /* nothing to fetch; still ordered after what was sent before */
        op->iovcnt = 0;
    }
    return uct_tcp_ep_get_sent(ep, length,
                               uct_tcp_ep_get_post(ep, op, remote_addr));
}

/* ------------------------------------------------------------------------
 * Pending, flush and fence
 */

ucs_status_t uct_tcp_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    /* Room for the largest message: any send would succeed now */
    if ((ep->state != UCT_TCP_EP_FAILED) && uct_tcp_ep_has_room(ep)) {
        return UCS_ERR_BUSY;
    }
    /* Scheduled on the arbiter when the socket drains (tx progress) */
    uct_pending_group_add(&ep->pending, req);
    return UCS_OK;
}

void uct_tcp_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    uct_pending_group_purge(&uct_tcp_ep_iface(ep)->arbiter, &ep->pending, cb,
                            arg);
}

/* Whether a flush of @a ep must wait for the peer: something is queued,
 * PUTs were not acknowledged, a GET is out, or the connection is not up
 * yet. */
static int uct_tcp_ep_flush_needs_ack(const uct_tcp_ep_t *ep)
{
    return (ep->flags & UCT_TCP_EP_FLAG_PUT_UNACKED) ||
           !ucs_list_is_empty(&ep->tx_list) ||
           !ucs_list_is_empty(&ep->get_list) ||
           (ep->state != UCT_TCP_EP_CONNECTED);
}

/* Asks the peer to acknowledge what was sent so far, if needed. */
ucs_status_t uct_tcp_ep_flush_request_ack(uct_tcp_ep_t *ep)
{
    int kick = ucs_list_is_empty(&ep->tx_list) ||
               (ep->flags & UCT_TCP_EP_FLAG_DEFERRED);
    uct_tcp_hdr_t hdr;

    if (!uct_tcp_ep_flush_needs_ack(ep)) {
        return UCS_OK;
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_ACK_REQ, 0);
    if (uct_tcp_ep_ctrl_send(ep, &hdr, sizeof(hdr)) != UCS_OK) {
        return UCS_ERR_NO_MEMORY;
    }
    ++ep->ack_reqs_sent;
    ep->flags &= ~UCT_TCP_EP_FLAG_PUT_UNACKED;
    if (kick) {
        uct_tcp_ep_tx_kick(ep); /* a flush does not wait for coalescing */
    }
    uct_tcp_ep_update_events(ep);
    return UCS_OK;
}

int uct_tcp_ep_is_flushed(const uct_tcp_ep_t *ep)
{
    return (ep->state == UCT_TCP_EP_FAILED) ||
           (ep->acks_received == ep->ack_reqs_sent);
}

ucs_status_t uct_tcp_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    uct_tcp_flush_req_t *req;
    ucs_status_t status;

    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        uct_pending_group_purge(&uct_tcp_ep_iface(ep)->arbiter,
                                &ep->pending, NULL, NULL);
    }

    status = uct_tcp_ep_flush_request_ack(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (ep->acks_received == ep->ack_reqs_sent) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    req = ucs_mpool_get(&uct_tcp_ep_iface(ep)->op_mp);
    if (req == NULL) {
        ucs_error("tcp ep %p: failed to allocate a flush request",
                  (void*)ep);
        return UCS_ERR_NO_MEMORY;
    }
    req->comp    = comp;
    req->ack_seq = ep->ack_reqs_sent;
    ucs_list_add_tail(&ep->flush_list, &req->list);
    return UCS_INPROGRESS;
}

/* The stream is ordered and the peer handles messages in order, GETs
 * included: nothing can pass what was issued before. */
ucs_status_t uct_tcp_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    return uct_tcp_ep_check_state(uct_tcp_ep(tl_ep));
}

/* ------------------------------------------------------------------------
 * Object tree: what an operator needs to see of a connection, in five
 * files (each tree entry costs memory, and there may be 10k eps). Each file
 * reads plain fields; the peer address may change while it is read (a
 * connection being attached), which at worst shows a garbled address once.
 */

static const char *uct_tcp_ep_state_names[] = {
    [UCT_TCP_EP_CONNECTING] = "connecting",
    [UCT_TCP_EP_RETRY_WAIT] = "retry_wait",
    [UCT_TCP_EP_WAIT_PEER]  = "wait_peer",
    [UCT_TCP_EP_ACCEPTED]   = "accepted",
    [UCT_TCP_EP_CONNECTED]  = "connected",
    [UCT_TCP_EP_FAILED]     = "failed",
    [UCT_TCP_EP_DESTROYED]  = "destroyed"
};

static void uct_tcp_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;
    char str[UCS_SOCKADDR_STRING_LEN];
    uct_tcp_sockaddr_t peer;

    memcpy(&peer, &ep->peer_addr, sizeof(peer));
    if ((peer.sa.sa_family != AF_INET) && (peer.sa.sa_family != AF_INET6)) {
        ucs_string_buffer_appendf(strb, "unknown (waiting for "
                                  "uct_ep_connect_to_ep)\n");
        return;
    }
    /* an internal ep serves a connection a peer opened to this iface */
    ucs_string_buffer_appendf(strb, "%s%s\n",
                              ucs_sockaddr_str(&peer.sa, str, sizeof(str)),
                              uct_tcp_ep_is_internal(ep) ? " (accepted)" :
                                                           "");
}

static void uct_tcp_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                      void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;
    uint8_t state          = ep->state;

    ucs_string_buffer_appendf(strb, "%s\n",
                              (state < ucs_static_array_size(
                                               uct_tcp_ep_state_names)) ?
                              uct_tcp_ep_state_names[state] : "unknown");
}

/* Copied bytes waiting in send buffers, and zero-copy sends waiting */
static void uct_tcp_ep_vfs_show_tx_queue(void *obj, ucs_string_buffer_t *strb,
                                         void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;

    ucs_string_buffer_appendf(strb, "bytes %u\nzcopy_sends %u\n",
                              ep->tx_queued, ep->tx_ops);
}

static void uct_tcp_ep_vfs_show_last_error(void *obj,
                                           ucs_string_buffer_t *strb,
                                           void *arg_ptr, uint64_t arg_u64)
{
    const uct_tcp_ep_t *ep = obj;

    uct_vfs_append_status(strb, (ucs_status_t)ep->err_status);
}

void uct_tcp_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_tx_queue, NULL, 0, "tx_queue");
    uct_vfs_add_uint(ep, &ep->pending.count, sizeof(ep->pending.count),
                     "pending");
    uct_vfs_add_file(ep, uct_tcp_ep_vfs_show_last_error, NULL, 0,
                     "last_error");
}
