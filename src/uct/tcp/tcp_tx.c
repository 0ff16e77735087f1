/*
 * The send queue of tcp endpoints and the active message operations.
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
#include "config.h"
#endif

#include "tcp_ep.h"
#include "tcp_md.h"

#include <ucs/time/time.h>

static void uct_tcp_ep_tx_release(uct_tcp_ep_t *ep, uct_tcp_tx_t *tx,
                                  ucs_status_t status)
{
    ucs_list_del(&tx->list);
    if (tx->is_switch) {
        ep->flags &= ~UCT_TCP_EP_FLAG_SWITCH_QUEUED; /* it went out */
    }
    if (tx->is_buf) {
        ep->tx_queued -= (uint32_t)tx->length;
        uct_tcp_ep_iface(ep)->tx_queued -= tx->length;
    } else {
        --ep->tx_ops;
        if (tx->comp != NULL) {
            uct_invoke_completion(tx->comp, status);
        }
    }
    ucs_mpool_put(tx);
}

void uct_tcp_ep_tx_purge(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_tx_t *tx, *tmp;

    ucs_list_for_each_safe(tx, tmp, &ep->tx_list, list) {
        uct_tcp_ep_tx_release(ep, tx, status);
    }
}

uct_tcp_tx_t *uct_tcp_ep_tx_buf_get(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_tx_t *tx;

    tx = ucs_mpool_get(&iface->tx_mp);
    if (ucs_unlikely(tx == NULL)) {
        ucs_error("tcp ep %p: out of send buffers (%zu bytes each)", (void *)ep,
                  iface->config.tx_buf_size);
        return NULL;
    }
    tx->comp      = NULL;
    tx->rkey      = 0;
    tx->is_buf    = 1;
    tx->is_switch = 0;
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
char *uct_tcp_ep_tx_reserve(uct_tcp_ep_t *ep, size_t n, int user,
                            uct_tcp_tx_t **tx_p)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_tx_t *tx;

    if (ucs_unlikely(n > iface->config.tx_buf_size)) {
        return NULL;
    }
    if (user &&
        ((ep->tx_ops > 0) || (ep->tx_queued + n > iface->config.tx_buf_size))) {
        return NULL;
    }

    if (!ucs_list_is_empty(&ep->tx_list)) {
        tx = ucs_list_tail(&ep->tx_list, uct_tcp_tx_t, list);
        if (tx->is_buf && !tx->is_switch &&
            (tx->length + n <= iface->config.tx_buf_size)) {
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

/* Ends coalescing of @a ep (see uct_tcp_ep_should_defer()). */
void uct_tcp_ep_defer_stop(uct_tcp_ep_t *ep)
{
    if (ep->flags & UCT_TCP_EP_FLAG_DEFERRED) {
        ep->flags &= ~UCT_TCP_EP_FLAG_DEFERRED;
        ucs_list_del(&ep->retry_list);
    }
}

/* Queues an internal message of @a n bytes (header included). */
ucs_status_t uct_tcp_ep_ctrl_send(uct_tcp_ep_t *ep, const void *data, size_t n)
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
    struct iovec *iov = (struct iovec *)tx->data;

    while ((n > 0) && (tx->iov_index < tx->iovcnt)) {
        if (n >= iov[tx->iov_index].iov_len) {
            n -= iov[tx->iov_index].iov_len;
            ++tx->iov_index;
        } else {
            iov[tx->iov_index].iov_base =
                (char *)iov[tx->iov_index].iov_base + n;
            iov[tx->iov_index].iov_len -= n;
            n = 0;
        }
    }
}

/* Completes the flushes that the acknowledgements received so far end,
 * with @a status. */
void uct_tcp_ep_check_flush(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_flush_req_t *req, *tmp;

    ucs_list_for_each_safe(req, tmp, &ep->ext->flush_list, list) {
        if ((int32_t)(ep->ext->acks_received - req->ack_seq) < 0) {
            break;
        }
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, status);
        ucs_mpool_put(req);
    }
}

/*
 * Coalescing: a small message sent less than UCX_TCP_COALESCE_TIME after
 * the previous write of its ep, when that write itself came that soon
 * after the one before (a burst: UCT_TCP_EP_FLAG_BURST), is held in the
 * send buffer, with the ones that follow it, and written by progress once
 * the window has passed (or half the buffer is full, or a flush or event
 * arm asks). An isolated message, and a pair (a rendezvous completion
 * followed by the next request), still leave at once; a stream of small
 * messages costs one system call per window instead of one per message
 * (two more when it starts). Nor is a message
 * held when the iface received one that a peer may wait an answer to
 * since its last send that was not held (iface->rx_asks): eps connected
 * to each other's interface answer on another connection than the one
 * the question came in on. Deferred eps do not
 * ask epoll for EVWRITE: they are on iface->defer_list. From an event arm
 * to the next progress call nothing is held, since the application may
 * send and then sleep on the event fd without progressing again.
 */
static UCS_F_ALWAYS_INLINE int uct_tcp_ep_should_defer(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_time_t now         = ucs_get_time();
    int soon = (now - ep->last_write) < iface->config.coalesce_time;

    if (soon && (ep->flags & UCT_TCP_EP_FLAG_BURST) && !iface->armed &&
        (iface->rx_asks == iface->rx_asks_seen)) {
        return 1;
    }

    ep->flags           = soon ? (ep->flags | UCT_TCP_EP_FLAG_BURST)
                               : (ep->flags & ~UCT_TCP_EP_FLAG_BURST);
    ep->last_write      = now;
    iface->rx_asks_seen = iface->rx_asks;
    return 0;
}

static void uct_tcp_ep_defer_start(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    ep->flags |= UCT_TCP_EP_FLAG_DEFERRED;
    ep->retry_time = ucs_get_time(); /* the oldest held message */
    ucs_list_add_tail(&iface->defer_list, &ep->retry_list);
}

/* Whether the memory a queued GET response is sent from is still
 * registered: the user may deregister it (and unmap it) after the
 * request arrived. The response cannot be cut short once its header
 * announced the length, so the connection is closed instead. */
static int uct_tcp_ep_tx_region_ok(uct_tcp_ep_t *ep, const uct_tcp_tx_t *tx)
{
    const struct iovec *iov = (const struct iovec *)tx->data;
    uct_tcp_iface_t *iface  = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    if ((tx->iov_index >= tx->iovcnt) || (iov[tx->iovcnt - 1].iov_len == 0) ||
        uct_tcp_md_access_check(uct_tcp_md(iface->super.md), tx->rkey,
                                (uintptr_t)iov[tx->iovcnt - 1].iov_base,
                                iov[tx->iovcnt - 1].iov_len,
                                UCT_MD_MEM_ACCESS_REMOTE_GET)) {
        return 1;
    }
    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_RMA_DENIED],
                     "tcp iface %p: the memory of a GET response to %s was "
                     "deregistered before it was sent; closing the "
                     "connection",
                     (void *)iface, uct_tcp_ep_peer_str(ep, str, sizeof(str)));
    return 0;
}

/* Writes queued items until the socket is full. UCS_OK also when the
 * socket took only part (or none); an error status is the connection's
 * failure (the caller fails the ep). */
/* Bytes of @a tx not written yet */
static size_t uct_tcp_tx_left(const uct_tcp_tx_t *tx)
{
    const struct iovec *iov = (const struct iovec *)tx->data;
    size_t left             = 0;
    uint32_t i;

    if (tx->is_buf) {
        return tx->length - tx->offset;
    }
    for (i = tx->iov_index; i < tx->iovcnt; ++i) {
        left += iov[i].iov_len;
    }
    return left;
}

/*
 * The queue's head items as one iovec, up to UCT_TCP_MAX_SEND_IOV entries:
 * several answers or buffers that a receive batch queued go out in one
 * system call. A GET response sent from memory is checked against its
 * region first. Returns the number of entries, or -1 when such a check
 * failed.
 */
static int uct_tcp_ep_tx_gather(uct_tcp_ep_t *ep, struct iovec *vec)
{
    const struct iovec *iov;
    uct_tcp_tx_t *tx;
    uint32_t i;
    int cnt = 0;

    if (ucs_unlikely(ep->state == UCT_TCP_EP_SWITCHING) &&
        !(ep->flags & UCT_TCP_EP_FLAG_SWITCH_QUEUED)) {
        return 0; /* all that is left waits for the SWITCH's answer */
    }
    ucs_list_for_each(tx, &ep->tx_list, list) {
        if (cnt == UCT_TCP_MAX_SEND_IOV) {
            break;
        }
        if (tx->is_buf) {
            vec[cnt].iov_base = tx->data + tx->offset;
            vec[cnt].iov_len  = tx->length - tx->offset;
            ++cnt;
            if (ucs_unlikely(tx->is_switch)) {
                break; /* the rest goes after its answer */
            }
            continue;
        }
        if ((tx->rkey != 0) && !uct_tcp_ep_tx_region_ok(ep, tx)) {
            return -1;
        }
        iov = (const struct iovec *)tx->data;
        for (i = tx->iov_index;
             (i < tx->iovcnt) && (cnt < UCT_TCP_MAX_SEND_IOV); ++i) {
            vec[cnt++] = iov[i];
        }
        if (i < tx->iovcnt) {
            break; /* the rest of this one goes with the next call */
        }
    }
    return cnt;
}

/* @a n bytes of the queue's head went out: advances and releases the
 * items they cover. Returns 1 when the last item written is done. */
static int uct_tcp_ep_tx_consume(uct_tcp_ep_t *ep, size_t n)
{
    uct_tcp_tx_t *tx;
    size_t left;

    while (!ucs_list_is_empty(&ep->tx_list)) {
        tx   = ucs_list_head(&ep->tx_list, uct_tcp_tx_t, list);
        left = uct_tcp_tx_left(tx);
        if (n < left) {
            if (tx->is_buf) {
                tx->offset += n;
            } else {
                uct_tcp_tx_advance(tx, n);
            }
            return 0;
        }
        n -= left;
        if (!tx->is_buf) {
            uct_tcp_tx_advance(tx, left);
        }
        uct_tcp_ep_tx_release(ep, tx, UCS_OK);
        if (n == 0) {
            return 1;
        }
    }
    return 1;
}

/* Writes queued items until the socket is full, several per system call.
 * UCS_OK also when the socket took only part (or none); an error status
 * is the connection's failure (the caller fails the ep). */
static ucs_status_t uct_tcp_ep_tx_write(uct_tcp_ep_t *ep)
{
    struct iovec vec[UCT_TCP_MAX_SEND_IOV];
    struct msghdr msg;
    size_t total;
    ssize_t ret;
    int cnt, i;

    uct_tcp_ep_defer_stop(ep);
    ep->last_write = ucs_get_time();
    while (!ucs_list_is_empty(&ep->tx_list)) {
        cnt = uct_tcp_ep_tx_gather(ep, vec);
        if (cnt < 0) {
            return UCS_ERR_CONNECTION_RESET;
        } else if (cnt == 0) {
            return UCS_OK; /* held until a switch ends */
        }
        total = 0;
        for (i = 0; i < cnt; ++i) {
            total += vec[i].iov_len;
        }
        if (total == 0) {
            uct_tcp_ep_tx_consume(ep, 0); /* empty items */
            continue;
        }
        if (cnt == 1) {
            ret = send(ep->fd, vec[0].iov_base, vec[0].iov_len,
                       UCT_TCP_SEND_FLAGS);
        } else {
            memset(&msg, 0, sizeof(msg));
            msg.msg_iov    = vec;
            msg.msg_iovlen = cnt;
            ret            = sendmsg(ep->fd, &msg, UCT_TCP_SEND_FLAGS);
        }
        if (ret < 0) {
            break;
        }
        uct_tcp_ep_tx_consume(ep, ret);
        if ((size_t)ret < total) {
            uct_iface_stat_tx_retry(&uct_tcp_ep_iface(ep)->super);
            return UCS_OK; /* the socket is full */
        }
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

/* The socket is writable (or a connect completed). */
void uct_tcp_ep_tx_progress(uct_tcp_ep_t *ep)
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
    if (ucs_unlikely(ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED) &&
        !uct_tcp_ep_rx_over_budget(ep)) {
        uct_tcp_ep_rx_resume(ep); /* last: it may fail the ep */
    }
}

/* Writes what was just queued, from an application call: a broken
 * socket is left for progress to find (it reports an error event), so the
 * error handler never runs inside the application's send. */
void uct_tcp_ep_tx_kick(uct_tcp_ep_t *ep)
{
    if (uct_tcp_ep_can_write(ep)) {
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

/* Counts an application send of AM @a id that returned @a status: its
 * @a length bytes (as the receiver's handler sees them) when it was taken,
 * else the refusal or the failure. Returns @a status. */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_tcp_ep_am_sent(uct_tcp_ep_t *ep,
                                                           uint8_t id,
                                                           size_t length,
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
        memcpy(dest, (const char *)iov[i].iov_base + skip, n);
        dest += n;
        skip = 0;
    }
}

/* Writes a whole message directly; returns bytes sent or -1 with errno. */
static ssize_t uct_tcp_ep_send_direct(uct_tcp_ep_t *ep, const struct iovec *iov,
                                      size_t iovcnt, size_t total)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char buf[UCT_TCP_SENDV_THRESH_MAX];
    struct msghdr msg;

    if (total <= iface->config.sendv_thresh) {
        uct_tcp_iovec_copy(buf, iov, iovcnt, 0);
        return send(ep->fd, buf, total, UCT_TCP_SEND_FLAGS);
    }

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = (struct iovec *)iov;
    msg.msg_iovlen = iovcnt;
    return sendmsg(ep->fd, &msg, UCT_TCP_SEND_FLAGS);
}

/* Queues the part of a message of @a total bytes gathered from @a iov
 * that the socket did not take (the first @a sent bytes); @a defer: it is
 * held back for coalescing. */
static ucs_status_t uct_tcp_ep_send_rest(uct_tcp_ep_t *ep,
                                         const struct iovec *iov, size_t iovcnt,
                                         size_t total, size_t sent, int defer)
{
    uct_tcp_tx_t *tx;
    char *dest;

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

/* What a direct send of a whole message that returned @a ret leaves to
 * do: queue the rest (all of it when the socket was full), or report a
 * broken socket (progress then finds it and fails the ep). */
static ucs_status_t uct_tcp_ep_send_partial(uct_tcp_ep_t *ep,
                                            const struct iovec *iov,
                                            size_t iovcnt, size_t total,
                                            ssize_t ret)
{
    if ((ret < 0) && (errno != EAGAIN) && (errno != EINTR)) {
        return UCS_ERR_CONNECTION_RESET;
    }
    uct_iface_stat_tx_retry(&uct_tcp_ep_iface(ep)->super);
    return uct_tcp_ep_send_rest(ep, iov, iovcnt, total,
                                (ret > 0) ? (size_t)ret : 0, 0);
}

/* Sends a message of @a total bytes gathered from @a iov, copying what
 * the socket does not take. */
ucs_status_t uct_tcp_ep_sendv(uct_tcp_ep_t *ep, const struct iovec *iov,
                              size_t iovcnt, size_t total)
{
    ucs_status_t status;
    ssize_t ret;

    if (ucs_likely(uct_tcp_ep_can_send_now(ep))) {
        if (uct_tcp_ep_should_defer(ep)) {
            return uct_tcp_ep_send_rest(ep, iov, iovcnt, total, 0, 1);
        }
        ret = uct_tcp_ep_send_direct(ep, iov, iovcnt, total);
        if (ucs_likely((size_t)ret == total)) {
            return UCS_OK;
        }
        return uct_tcp_ep_send_partial(ep, iov, iovcnt, total, ret);
    }

    status = uct_tcp_ep_check_state(ep);
    if (status != UCS_OK) {
        return status;
    }
    return uct_tcp_ep_send_rest(ep, iov, iovcnt, total, 0, 0);
}

ucs_status_t uct_tcp_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    size_t total           = sizeof(uct_tcp_hdr_t) + sizeof(header) + length;
    char buf[UCT_TCP_AM_SHORT_INLINE];
    struct iovec iov[3];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;
    ssize_t ret;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short", length,
                                    iface->config.max_bcopy - sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    if (ucs_likely((total <= sizeof(buf)) && uct_tcp_ep_can_send_now(ep)) &&
        !uct_tcp_ep_should_defer(ep)) {
        /* the usual case: the message is built here and sent whole */
        uct_tcp_hdr_write(buf, id, sizeof(header) + length, 0);
        memcpy(buf + sizeof(uct_tcp_hdr_t), &header, sizeof(header));
        if (length > 0) { /* a header-only message may pass NULL */
            memcpy(buf + sizeof(uct_tcp_hdr_t) + sizeof(header), payload,
                   length);
        }
        ret = send(ep->fd, buf, total, UCT_TCP_SEND_FLAGS);
        if (ucs_likely((size_t)ret == total)) {
            return uct_tcp_ep_am_sent(ep, id, sizeof(header) + length, UCS_OK);
        }
        iov[0].iov_base = buf;
        iov[0].iov_len  = total;
        status          = uct_tcp_ep_send_partial(ep, iov, 1, total, ret);
        return uct_tcp_ep_am_sent(ep, id, sizeof(header) + length, status);
    }

    uct_tcp_hdr_init(&hdr, id, sizeof(header) + length, 0);
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &header;
    iov[1].iov_len  = sizeof(header);
    iov[2].iov_base = (void *)payload;
    iov[2].iov_len  = length;
    status          = uct_tcp_ep_sendv(ep, iov, (length > 0) ? 3 : 2, total);
    return uct_tcp_ep_am_sent(ep, id, sizeof(header) + length, status);
}

/*
 * Zero-copy send of hdr + @a prefix + @a iov. What the socket does not
 * take at once is copied when it fits in the send buffer (UCS_OK), else
 * kept as a reference to the user's memory (UCS_INPROGRESS, @a comp runs
 * when the socket took the last byte).
 */
ucs_status_t uct_tcp_ep_send_zcopy(uct_tcp_ep_t *ep, uint8_t id,
                                   const void *prefix, size_t prefix_len,
                                   const uct_iov_t *uiov, size_t iovcnt,
                                   uct_completion_t *comp)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    struct iovec vec[UCT_TCP_MAX_SEND_IOV];
    size_t payload_len = 0, cnt = 0, sent = 0, total, i;
    int defer = 0;
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

    uct_tcp_hdr_init(&hdr, id, prefix_len + payload_len, 0);
    vec[cnt].iov_base  = &hdr;
    vec[cnt++].iov_len = sizeof(hdr);
    if (prefix_len > 0) {
        vec[cnt].iov_base  = (void *)prefix;
        vec[cnt++].iov_len = prefix_len;
    }
    for (i = 0; i < iovcnt; ++i) {
        for (c = 0; (c < uiov[i].count) && (uiov[i].length > 0); ++c) {
            if (cnt == UCT_TCP_MAX_SEND_IOV) {
                ucs_error("tcp ep %p: zcopy iov has more than %d pieces; "
                          "use fewer, larger entries",
                          (void *)ep, UCT_TCP_MAX_SEND_IOV - 2);
                return UCS_ERR_UNSUPPORTED;
            }
            vec[cnt].iov_base  = (char *)uiov[i].buffer + c * uiov[i].stride;
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
        if ((sent == 0) &&
            (ep->tx_queued + total - sent > iface->config.tx_buf_size)) {
            return UCS_ERR_NO_RESOURCE;
        }
    }

    tx = ucs_mpool_get(&iface->op_mp);
    if (tx == NULL) {
        ucs_error("tcp ep %p: out of memory for a zcopy send", (void *)ep);
        return (sent > 0) ? UCS_ERR_NO_MEMORY : UCS_ERR_NO_RESOURCE;
    }
    op_iov        = (struct iovec *)tx->data;
    tx->comp      = comp;
    tx->rkey      = 0;
    tx->is_buf    = 0;
    tx->iov_index = 0;
    tx->iovcnt    = (uint32_t)cnt;
    tx->length    = 0;
    tx->offset    = 0;
    /* the header and prefix live in the op, after the iovecs */
    dest = (char *)(op_iov + UCT_TCP_MAX_SEND_IOV);
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
                                    iface->config.max_bcopy - sizeof(uint64_t));
    if (status != UCS_OK) {
        return status;
    }
    /* short: the message is small enough to always be copied if needed */
    status = uct_tcp_ep_send_zcopy(ep, id, NULL, 0, iov, iovcnt, NULL);
    return uct_tcp_ep_am_sent(ep, id, length,
                              (status == UCS_INPROGRESS) ? UCS_OK : status);
}

/* Packs a message of unknown length into a send buffer and sends it. */
ssize_t uct_tcp_ep_send_packed(uct_tcp_ep_t *ep, uint8_t id, const void *prefix,
                               size_t prefix_len, uct_pack_callback_t pack_cb,
                               void *arg, const char *what)
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

    uct_tcp_hdr_write(dest, id, prefix_len + length, 0);
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

ucs_status_t uct_tcp_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                 unsigned header_length, const uct_iov_t *iov,
                                 size_t iovcnt, unsigned flags,
                                 uct_completion_t *comp)
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
    status =
        uct_tcp_ep_send_zcopy(ep, id, header, header_length, iov, iovcnt, comp);
    return uct_tcp_ep_am_sent(ep, id, length, status);
}
