/*
 * tcp endpoints: connection set-up, the send buffer, the receive path
 * that reassembles messages from the byte stream, and the operations.
 *
 * Send rule: when nothing is queued and the socket is connected, a message
 * goes to the socket at once (one writev); whatever the socket does not
 * take is copied to the ep's send buffer and written when the socket is
 * writable again. A message that does not fit in the free part of the send
 * buffer is refused with UCS_ERR_NO_RESOURCE before anything is written.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp.h"

#include <ucs/debug/log.h>
#include <ucs/sys/sock.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Direct sends gather at most this many pieces: tcp header, user header,
 * and the user's iov entries. */
#define UCT_TCP_EP_MAX_SEND_IOV  64

static const char *uct_tcp_ep_peer_str(const uct_tcp_ep_t *ep, char *buf,
                                       size_t max)
{
    return ucs_sockaddr_str((const struct sockaddr*)&ep->peer_addr, buf,
                            max);
}

/* ------------------------------------------------------------------------
 * Buffers and events
 */

static inline size_t uct_tcp_buf_queued(const uct_tcp_buf_t *b)
{
    return b->length - b->offset;
}

static inline size_t uct_tcp_ep_tx_free(const uct_tcp_ep_t *ep)
{
    return ep->tx.size - uct_tcp_buf_queued(&ep->tx);
}

/* Moves the unconsumed bytes of @a b to its start. */
static void uct_tcp_buf_compact(uct_tcp_buf_t *b)
{
    size_t queued = uct_tcp_buf_queued(b);

    if (b->offset == 0) {
        return;
    }
    if (queued > 0) {
        memmove(b->buf, b->buf + b->offset, queued);
    }
    b->offset = 0;
    b->length = queued;
}

/* Room for @a n more bytes at the end of the send buffer, growing it if
 * @a grow (control messages that must not be refused). */
static char *uct_tcp_ep_tx_reserve(uct_tcp_ep_t *ep, size_t n, int grow)
{
    char *buf;
    size_t size;

    if (ep->tx.length + n > ep->tx.size) {
        uct_tcp_buf_compact(&ep->tx);
    }
    if (ep->tx.length + n > ep->tx.size) {
        if (!grow) {
            return NULL;
        }
        size = ep->tx.length + n;
        buf  = realloc(ep->tx.buf, size);
        if (buf == NULL) {
            ucs_error("tcp ep %p: failed to grow the send buffer to %zu "
                      "bytes", (void*)ep, size);
            return NULL;
        }
        ep->tx.buf  = buf;
        ep->tx.size = size;
    }
    return ep->tx.buf + ep->tx.length;
}

static void uct_tcp_ep_update_events(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    unsigned events        = UCS_EVENT_SET_EVREAD;

    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        (uct_tcp_buf_queued(&ep->tx) > 0)) {
        events |= UCS_EVENT_SET_EVWRITE;
    }
    if ((events != ep->events) && (ep->fd >= 0)) {
        if (ucs_event_set_mod(iface->event_set, ep->fd,
                              (ucs_event_set_types_t)events, ep) == UCS_OK) {
            ep->events = events;
        }
    }
}

int uct_tcp_ep_is_idle(const uct_tcp_ep_t *ep)
{
    if (ep->state == UCT_TCP_EP_FAILED) {
        return 1;
    }
    return (ep->state != UCT_TCP_EP_CONNECTING) &&
           (uct_tcp_buf_queued(&ep->tx) == 0) &&
           ucs_list_is_empty(&ep->get_list);
}

static void uct_tcp_ep_complete_flushes(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_flush_req_t *req, *tmp;

    ucs_list_for_each_safe(req, tmp, &ep->flush_list, list) {
        ucs_list_del(&req->list);
        uct_invoke_completion(req->comp, status);
        free(req);
    }
}

static void uct_tcp_ep_check_flush(uct_tcp_ep_t *ep)
{
    if (!ucs_list_is_empty(&ep->flush_list) && uct_tcp_ep_is_idle(ep)) {
        uct_tcp_ep_complete_flushes(ep, UCS_OK);
    }
}

/* Completes every outstanding GET of @a ep with @a status. */
static void uct_tcp_ep_fail_gets(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_get_op_t *op, *tmp;

    ucs_list_for_each_safe(op, tmp, &ep->get_list, list) {
        ucs_list_del(&op->list);
        if (op->comp != NULL) {
            uct_invoke_completion(op->comp, status);
        }
        free(op);
    }
}

static void uct_tcp_ep_close_socket(uct_tcp_ep_t *ep)
{
    if (ep->fd < 0) {
        return;
    }
    ucs_event_set_del(uct_tcp_ep_iface(ep)->event_set, ep->fd);
    close(ep->fd);
    ep->fd     = -1;
    ep->events = 0;
}

void uct_tcp_ep_free(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    uct_tcp_ep_close_socket(ep);
    uct_pending_queue_purge(&iface->arbiter, &ep->arb_group, NULL, NULL);
    ucs_arbiter_group_cleanup(&ep->arb_group);
    uct_tcp_ep_fail_gets(ep, UCS_ERR_CANCELED);
    uct_tcp_ep_complete_flushes(ep, UCS_ERR_CANCELED);
    ucs_list_del(&ep->list);
    free(ep->tx.buf);
    free(ep->rx.buf);
    free(ep);
}

/*
 * The connection is gone (peer closed or reset it, or sent something
 * invalid). A passive ep is freed; the user's ep is marked failed, its
 * outstanding operations complete with an error and the error handler
 * runs once. The caller must not touch @a ep afterwards.
 */
static void uct_tcp_ep_fail(uct_tcp_ep_t *ep, ucs_status_t status)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    if (ep->passive) {
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
    ep->state     = UCT_TCP_EP_FAILED;
    ep->tx.offset = ep->tx.length = 0;
    ep->rx.offset = ep->rx.length = 0;
    uct_tcp_ep_fail_gets(ep, status);
    uct_tcp_ep_complete_flushes(ep, status);
    uct_iface_handle_ep_err(&iface->super.super, &ep->super.super, status);
}

/* Writes what the send buffer holds. UCS_OK also when the socket took
 * only part (or none) of it; an error status means the connection is
 * broken. */
static ucs_status_t uct_tcp_ep_tx_flush(uct_tcp_ep_t *ep)
{
    size_t length = uct_tcp_buf_queued(&ep->tx);
    ucs_status_t status;

    if (length == 0) {
        return UCS_OK;
    }

    status = ucs_socket_send_nb(ep->fd, ep->tx.buf + ep->tx.offset, &length);
    if (status == UCS_OK) {
        ep->tx.offset += length;
        if (ep->tx.offset == ep->tx.length) {
            ep->tx.offset = ep->tx.length = 0;
        }
    } else if (status != UCS_ERR_NO_PROGRESS) {
        return status;
    }
    return UCS_OK;
}

/* Checks that a message of @a total bytes may be sent now. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_tcp_ep_tx_check(uct_tcp_ep_t *ep, size_t total)
{
    if (ucs_unlikely(ep->state == UCT_TCP_EP_FAILED)) {
        return UCS_ERR_CONNECTION_RESET;
    }
    if (ucs_unlikely(uct_tcp_ep_tx_free(ep) < total)) {
        return UCS_ERR_NO_RESOURCE;
    }
    return UCS_OK;
}

/* Sends a message gathered from @a iov (uct_tcp_ep_tx_check passed for
 * @a total): directly when the socket is free, the unsent tail copied. */
static ucs_status_t uct_tcp_ep_sendv(uct_tcp_ep_t *ep, const struct iovec *iov,
                                     size_t iovcnt, size_t total)
{
    ucs_status_t status;
    size_t sent = 0, i, skip, n;
    char *dest;

    if ((ep->state == UCT_TCP_EP_CONNECTED) &&
        (uct_tcp_buf_queued(&ep->tx) == 0)) {
        sent   = total;
        status = ucs_socket_sendv_nb(ep->fd, iov, iovcnt, &sent);
        if (status == UCS_OK) {
            if (sent == total) {
                return UCS_OK;
            }
        } else if (status == UCS_ERR_NO_PROGRESS) {
            sent = 0;
        } else {
            return UCS_ERR_CONNECTION_RESET; /* progress fails the ep */
        }
    }

    dest = uct_tcp_ep_tx_reserve(ep, total - sent, 0);
    ucs_assert(dest != NULL);
    skip = sent;
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
    ep->tx.length += total - sent;
    uct_tcp_ep_update_events(ep);
    return UCS_OK;
}

/* Appends @a n bytes written at the end of the send buffer and sends them
 * if nothing was queued before. */
static ucs_status_t uct_tcp_ep_tx_commit(uct_tcp_ep_t *ep, size_t n)
{
    int was_empty = (uct_tcp_buf_queued(&ep->tx) == 0);
    ucs_status_t status;

    ep->tx.length += n;
    if (was_empty && (ep->state == UCT_TCP_EP_CONNECTED)) {
        status = uct_tcp_ep_tx_flush(ep);
        if (status != UCS_OK) {
            return UCS_ERR_CONNECTION_RESET; /* progress fails the ep */
        }
    }
    uct_tcp_ep_update_events(ep);
    return UCS_OK;
}

static inline void uct_tcp_hdr_init(uct_tcp_hdr_t *hdr, uint8_t id,
                                    size_t length)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->id     = id;
    hdr->length = (uint32_t)length;
}

/* ------------------------------------------------------------------------
 * Receive path
 */

static void uct_tcp_ep_protocol_error(uct_tcp_ep_t *ep, const char *what)
{
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_warn("tcp iface %p: %s from %s; closing the connection",
             (void*)uct_tcp_ep_iface(ep), what,
             uct_tcp_ep_peer_str(ep, str, sizeof(str)));
    uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
}

static void uct_tcp_ep_deliver_am(uct_tcp_iface_t *iface, uint8_t id,
                                  char *data, size_t length)
{
    size_t align = iface->super.am_alignment;
    size_t off   = iface->super.am_align_offset;

    if ((align > 1) && (((uintptr_t)data + off) % align != 0)) {
        char *aligned = (char*)ucs_align_up_pow2(
                                (uintptr_t)iface->align_buf + off, align) -
                        off;
        memcpy(aligned, data, length);
        data = aligned;
    }

    if (ucs_unlikely(iface->super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super, UCT_AM_TRACE_TYPE_RECV, id, data,
                           length);
    }
    uct_iface_invoke_am(&iface->super, id, data, (unsigned)length, 0);
}

/* Answers a GET request with the requested bytes. */
static ucs_status_t uct_tcp_ep_get_respond(uct_tcp_ep_t *ep,
                                           const char *payload)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_get_req_t req;
    uct_tcp_hdr_t hdr;
    char *dest;

    memcpy(&req, payload, sizeof(req));
    if (req.length > iface->config.max_msg) {
        uct_tcp_ep_protocol_error(ep, "GET request larger than a segment");
        return UCS_ERR_CONNECTION_RESET;
    }

    dest = uct_tcp_ep_tx_reserve(ep, sizeof(hdr) + req.length, 1);
    if (dest == NULL) {
        uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
        return UCS_ERR_NO_MEMORY;
    }
    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_GET_RESP, req.length);
    memcpy(dest, &hdr, sizeof(hdr));
    memcpy(dest + sizeof(hdr), (const void*)(uintptr_t)req.remote_addr,
           req.length);
    if (uct_tcp_ep_tx_commit(ep, sizeof(hdr) + req.length) != UCS_OK) {
        uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
        return UCS_ERR_CONNECTION_RESET;
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_ep_get_complete(uct_tcp_ep_t *ep,
                                            const char *payload,
                                            size_t length)
{
    uct_tcp_get_op_t *op;

    if (ucs_list_is_empty(&ep->get_list)) {
        uct_tcp_ep_protocol_error(ep, "GET response with no request");
        return UCS_ERR_CONNECTION_RESET;
    }
    op = ucs_list_head(&ep->get_list, uct_tcp_get_op_t, list);
    if (op->length != length) {
        uct_tcp_ep_protocol_error(ep, "GET response of the wrong length");
        return UCS_ERR_CONNECTION_RESET;
    }

    ucs_list_del(&op->list);
    if (op->unpack_cb != NULL) {
        op->unpack_cb(op->arg, payload, length);
    } else {
        uct_iov_from_buffer(op->iov, op->iovcnt, payload);
    }
    if (op->comp != NULL) {
        uct_invoke_completion(op->comp, UCS_OK);
    }
    free(op);
    uct_tcp_ep_check_flush(ep);
    return UCS_OK;
}

/* Handles one complete message. Any status but UCS_OK means the ep was
 * failed (and may be gone). */
static ucs_status_t uct_tcp_ep_dispatch(uct_tcp_ep_t *ep,
                                        const uct_tcp_hdr_t *hdr,
                                        char *payload)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uint64_t remote_addr;

    if (hdr->id < UCT_AM_ID_MAX) {
        uct_tcp_ep_deliver_am(iface, hdr->id, payload, hdr->length);
        return UCS_OK;
    }

    switch (hdr->id) {
    case UCT_TCP_OP_PUT:
        if (hdr->length < sizeof(remote_addr)) {
            uct_tcp_ep_protocol_error(ep, "truncated PUT");
            return UCS_ERR_CONNECTION_RESET;
        }
        memcpy(&remote_addr, payload, sizeof(remote_addr));
        memcpy((void*)(uintptr_t)remote_addr, payload + sizeof(remote_addr),
               hdr->length - sizeof(remote_addr));
        return UCS_OK;
    case UCT_TCP_OP_GET_REQ:
        if (hdr->length != sizeof(uct_tcp_get_req_t)) {
            uct_tcp_ep_protocol_error(ep, "malformed GET request");
            return UCS_ERR_CONNECTION_RESET;
        }
        return uct_tcp_ep_get_respond(ep, payload);
    case UCT_TCP_OP_GET_RESP:
        return uct_tcp_ep_get_complete(ep, payload, hdr->length);
    default:
        uct_tcp_ep_protocol_error(ep, "message with an invalid id");
        return UCS_ERR_CONNECTION_RESET;
    }
}

static ucs_status_t uct_tcp_ep_check_handshake(uct_tcp_ep_t *ep)
{
    uct_tcp_handshake_t hs;

    memcpy(&hs, ep->rx.buf + ep->rx.offset, sizeof(hs));
    if (hs.magic != UCT_TCP_MAGIC) {
        uct_tcp_ep_protocol_error(ep, "connection with a wrong magic number "
                                      "(not an openuct tcp peer?)");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (hs.version != UCT_TCP_VERSION) {
        uct_tcp_ep_protocol_error(ep, "connection with an unsupported "
                                      "protocol version");
        return UCS_ERR_CONNECTION_RESET;
    }

    memset(&ep->peer_listen, 0, sizeof(ep->peer_listen));
    ep->peer_listen.sin_family      = AF_INET;
    ep->peer_listen.sin_addr.s_addr = hs.listen_ip;
    ep->peer_listen.sin_port        = hs.listen_port;
    ep->rx.offset                  += sizeof(hs);
    ep->state                       = UCT_TCP_EP_CONNECTED;
    return UCS_OK;
}

/* Reads what the socket has and handles every complete message. Any
 * status but UCS_OK means the ep was failed (and may be gone). */
static ucs_status_t uct_tcp_ep_rx_progress(uct_tcp_ep_t *ep)
{
    size_t max_payload = ep->rx.size - sizeof(uct_tcp_hdr_t);
    ucs_status_t status;
    uct_tcp_hdr_t hdr;
    size_t length;

    uct_tcp_buf_compact(&ep->rx);
    length = ep->rx.size - ep->rx.length;
    status = ucs_socket_recv_nb(ep->fd, ep->rx.buf + ep->rx.length, &length);
    if (status == UCS_ERR_NO_PROGRESS) {
        return UCS_OK;
    } else if (status != UCS_OK) {
        if (uct_tcp_buf_queued(&ep->rx) > 0) {
            uct_tcp_ep_protocol_error(ep, "connection closed in the middle "
                                          "of a message");
        } else {
            uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
        }
        return UCS_ERR_CONNECTION_RESET;
    }
    ep->rx.length += length;

    if (ep->state == UCT_TCP_EP_HANDSHAKE) {
        if (uct_tcp_buf_queued(&ep->rx) < sizeof(uct_tcp_handshake_t)) {
            return UCS_OK;
        }
        status = uct_tcp_ep_check_handshake(ep);
        if (status != UCS_OK) {
            return status;
        }
    }

    while (uct_tcp_buf_queued(&ep->rx) >= sizeof(hdr)) {
        memcpy(&hdr, ep->rx.buf + ep->rx.offset, sizeof(hdr));
        if (hdr.length > max_payload) {
            uct_tcp_ep_protocol_error(ep, "message larger than the receive "
                                          "segment (UCX_TCP_RX_SEG_SIZE)");
            return UCS_ERR_CONNECTION_RESET;
        }
        if (uct_tcp_buf_queued(&ep->rx) < sizeof(hdr) + hdr.length) {
            break;
        }
        ep->rx.offset += sizeof(hdr) + hdr.length;
        status = uct_tcp_ep_dispatch(ep, &hdr, ep->rx.buf + ep->rx.offset -
                                               hdr.length);
        if (status != UCS_OK) {
            return status;
        }
    }

    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Events
 */

static ucs_status_t uct_tcp_ep_tx_progress(uct_tcp_ep_t *ep)
{
    ucs_status_t status;

    if (ep->state == UCT_TCP_EP_CONNECTING) {
        status = ucs_socket_connect_nb_get_status(ep->fd);
        if (status == UCS_INPROGRESS) {
            return UCS_OK;
        } else if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, UCS_ERR_UNREACHABLE);
            return UCS_ERR_UNREACHABLE;
        }
        ep->state = UCT_TCP_EP_CONNECTED;
    }

    if (ep->state != UCT_TCP_EP_FAILED) {
        status = uct_tcp_ep_tx_flush(ep);
        if (status != UCS_OK) {
            uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
            return UCS_ERR_CONNECTION_RESET;
        }
        uct_tcp_ep_update_events(ep);
        uct_tcp_ep_check_flush(ep);
    }
    return UCS_OK;
}

void uct_tcp_ep_handle_events(uct_tcp_ep_t *ep, ucs_event_set_types_t events)
{
    if ((events & (UCS_EVENT_SET_EVWRITE | UCS_EVENT_SET_EVERR)) &&
        ((ep->state == UCT_TCP_EP_CONNECTING) ||
         (uct_tcp_buf_queued(&ep->tx) > 0))) {
        if (uct_tcp_ep_tx_progress(ep) != UCS_OK) {
            return;
        }
    }

    if ((events & (UCS_EVENT_SET_EVREAD | UCS_EVENT_SET_EVERR)) &&
        (ep->state != UCT_TCP_EP_CONNECTING) &&
        (ep->state != UCT_TCP_EP_FAILED)) {
        uct_tcp_ep_rx_progress(ep);
    }
}

/* ------------------------------------------------------------------------
 * Creation
 */

static uct_tcp_ep_t *uct_tcp_ep_alloc(uct_tcp_iface_t *iface, int fd,
                                      int passive)
{
    uct_tcp_ep_t *ep;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("tcp iface %p: failed to allocate an endpoint",
                  (void*)iface);
        return NULL;
    }

    ep->tx.size = 2 * iface->config.tx_seg_size;
    ep->tx.buf  = malloc(ep->tx.size);
    ep->rx.size = iface->config.rx_seg_size;
    ep->rx.buf  = malloc(ep->rx.size);
    if ((ep->tx.buf == NULL) || (ep->rx.buf == NULL)) {
        ucs_error("tcp iface %p: failed to allocate endpoint buffers "
                  "(UCX_TCP_TX_SEG_SIZE=%zu, UCX_TCP_RX_SEG_SIZE=%zu)",
                  (void*)iface, iface->config.tx_seg_size,
                  iface->config.rx_seg_size);
        free(ep->tx.buf);
        free(ep->rx.buf);
        free(ep);
        return NULL;
    }

    uct_base_ep_init(&ep->super, &iface->super);
    ep->fd      = fd;
    ep->passive = passive;
    ucs_arbiter_group_init(&ep->arb_group);
    ucs_list_head_init(&ep->get_list);
    ucs_list_head_init(&ep->flush_list);
    return ep;
}

static ucs_status_t uct_tcp_ep_register(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    ep->events = UCS_EVENT_SET_EVREAD;
    if ((ep->state == UCT_TCP_EP_CONNECTING) ||
        (uct_tcp_buf_queued(&ep->tx) > 0)) {
        ep->events |= UCS_EVENT_SET_EVWRITE;
    }
    status = ucs_event_set_add(iface->event_set, ep->fd,
                               (ucs_event_set_types_t)ep->events, ep);
    if (status != UCS_OK) {
        ep->events = 0;
        return status;
    }
    ucs_list_add_tail(&iface->ep_list, &ep->list);
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_accept(uct_tcp_iface_t *iface, int fd,
                               const struct sockaddr_in *peer)
{
    uct_tcp_ep_t *ep;
    ucs_status_t status;

    ep = uct_tcp_ep_alloc(iface, fd, 1);
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->state     = UCT_TCP_EP_HANDSHAKE;
    ep->peer_addr = *peer;

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        ep->fd = -1; /* the caller closes it */
        free(ep->tx.buf);
        free(ep->rx.buf);
        free(ep);
        return status;
    }
    return UCS_OK;
}

ucs_status_t uct_tcp_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_tcp_iface_t *iface = uct_tcp_iface(params->iface);
    uct_tcp_handshake_t hs;
    struct sockaddr_in dest;
    ucs_status_t status;
    uct_tcp_ep_t *ep;
    char *buf;
    int fd;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) ||
        !(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->dev_addr == NULL) || (params->iface_addr == NULL)) {
        ucs_error("tcp: uct_ep_create needs dev_addr and iface_addr "
                  "(UCT_EP_PARAM_FIELD_DEV_ADDR | _IFACE_ADDR): the "
                  "transport connects to interfaces");
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&dest, 0, sizeof(dest));
    dest.sin_family = AF_INET;
    memcpy(&dest.sin_addr, params->dev_addr, sizeof(uct_tcp_device_addr_t));
    memcpy(&dest.sin_port, params->iface_addr, sizeof(uct_tcp_iface_addr_t));

    status = ucs_socket_create(AF_INET, SOCK_STREAM, &fd);
    if (status != UCS_OK) {
        if (errno == EMFILE || errno == ENFILE) {
            ucs_error("tcp: out of file descriptors; raise the limit "
                      "(ulimit -n)");
            return UCS_ERR_NO_RESOURCE;
        }
        return status;
    }

    status = uct_tcp_iface_set_sockopts(iface, fd);
    if (status != UCS_OK) {
        goto err_close;
    }

    ep = uct_tcp_ep_alloc(iface, fd, 0);
    if (ep == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_close;
    }
    ep->peer_addr = dest;

    status = ucs_socket_connect(fd, (const struct sockaddr*)&dest);
    if (status == UCS_OK) {
        ep->state = UCT_TCP_EP_CONNECTED;
    } else if (status == UCS_INPROGRESS) {
        ep->state = UCT_TCP_EP_CONNECTING;
    } else {
        goto err_free;
    }

    memset(&hs, 0, sizeof(hs));
    hs.magic       = UCT_TCP_MAGIC;
    hs.version     = UCT_TCP_VERSION;
    hs.listen_ip   = iface->listen_addr.sin_addr.s_addr;
    hs.listen_port = iface->listen_addr.sin_port;
    buf            = uct_tcp_ep_tx_reserve(ep, sizeof(hs), 0);
    memcpy(buf, &hs, sizeof(hs));
    ep->tx.length += sizeof(hs);

    status = uct_tcp_ep_register(ep);
    if (status != UCS_OK) {
        goto err_free;
    }

    if (ep->state == UCT_TCP_EP_CONNECTED) {
        /* Handshake out now, so the peer can see messages without this
         * side progressing */
        if (uct_tcp_ep_tx_flush(ep) == UCS_OK) {
            uct_tcp_ep_update_events(ep);
        }
    }

    *ep_p = &ep->super.super;
    return UCS_OK;

err_free:
    ep->fd = -1;
    free(ep->tx.buf);
    free(ep->rx.buf);
    free(ep);
err_close:
    close(fd);
    return status;
}

void uct_tcp_ep_destroy(uct_ep_h tl_ep)
{
    uct_tcp_ep_free(uct_tcp_ep(tl_ep));
}

/* ------------------------------------------------------------------------
 * Active messages
 */

ucs_status_t uct_tcp_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                 const void *payload, unsigned length)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    size_t total           = sizeof(uct_tcp_hdr_t) + sizeof(header) + length;
    struct iovec iov[3];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short", length,
                                    iface->config.max_msg - sizeof(header));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_tcp_ep_tx_check(ep, total);
    if (status != UCS_OK) {
        return status;
    }

    uct_tcp_hdr_init(&hdr, id, sizeof(header) + length);
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &header;
    iov[1].iov_len  = sizeof(header);
    iov[2].iov_base = (void*)payload;
    iov[2].iov_len  = length;
    return uct_tcp_ep_sendv(ep, iov, (length > 0) ? 3 : 2, total);
}

/* Builds hdr + (user header) + iov payload in the send buffer. */
static ucs_status_t uct_tcp_ep_send_copy(uct_tcp_ep_t *ep, uint8_t id,
                                         const void *prefix, size_t prefix_len,
                                         const uct_iov_t *iov, size_t iovcnt,
                                         size_t payload_len)
{
    size_t length = prefix_len + payload_len;
    uct_tcp_hdr_t hdr;
    ucs_status_t status;
    char *dest;

    status = uct_tcp_ep_tx_check(ep, sizeof(hdr) + length);
    if (status != UCS_OK) {
        return status;
    }

    dest = uct_tcp_ep_tx_reserve(ep, sizeof(hdr) + length, 0);
    ucs_assert(dest != NULL);
    uct_tcp_hdr_init(&hdr, id, length);
    memcpy(dest, &hdr, sizeof(hdr));
    if (prefix_len > 0) {
        memcpy(dest + sizeof(hdr), prefix, prefix_len);
    }
    uct_iov_to_buffer(iov, iovcnt, dest + sizeof(hdr) + prefix_len);
    return uct_tcp_ep_tx_commit(ep, sizeof(hdr) + length);
}

/* Sends hdr + prefix + iov: gathered straight from the user's buffers
 * when every entry is contiguous, else copied. */
static ucs_status_t uct_tcp_ep_send_iov(uct_tcp_ep_t *ep, uint8_t id,
                                        const void *prefix, size_t prefix_len,
                                        const uct_iov_t *iov, size_t iovcnt)
{
    struct iovec vec[UCT_TCP_EP_MAX_SEND_IOV];
    size_t payload_len = 0, i, cnt = 0;
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    for (i = 0; i < iovcnt; ++i) {
        payload_len += iov[i].length * iov[i].count;
    }

    if (iovcnt + 2 > UCT_TCP_EP_MAX_SEND_IOV) {
        return uct_tcp_ep_send_copy(ep, id, prefix, prefix_len, iov, iovcnt,
                                    payload_len);
    }
    for (i = 0; i < iovcnt; ++i) {
        if (iov[i].count > 1) {
            return uct_tcp_ep_send_copy(ep, id, prefix, prefix_len, iov,
                                        iovcnt, payload_len);
        }
    }

    status = uct_tcp_ep_tx_check(ep, sizeof(hdr) + prefix_len + payload_len);
    if (status != UCS_OK) {
        return status;
    }

    uct_tcp_hdr_init(&hdr, id, prefix_len + payload_len);
    vec[cnt].iov_base   = &hdr;
    vec[cnt++].iov_len  = sizeof(hdr);
    if (prefix_len > 0) {
        vec[cnt].iov_base  = (void*)prefix;
        vec[cnt++].iov_len = prefix_len;
    }
    for (i = 0; i < iovcnt; ++i) {
        if ((iov[i].count == 0) || (iov[i].length == 0)) {
            continue;
        }
        vec[cnt].iov_base  = iov[i].buffer;
        vec[cnt++].iov_len = iov[i].length;
    }
    return uct_tcp_ep_sendv(ep, vec, cnt,
                            sizeof(hdr) + prefix_len + payload_len);
}

ucs_status_t uct_tcp_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                     const uct_iov_t *iov, size_t iovcnt)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    status = uct_iface_check_am_id(&iface->super, id);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_iovcnt(&iface->super, "am_short_iov", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_short_iov",
                                    uct_iov_total_length(iov, iovcnt),
                                    iface->config.max_msg - sizeof(uint64_t));
    if (status != UCS_OK) {
        return status;
    }
    return uct_tcp_ep_send_iov(ep, id, NULL, 0, iov, iovcnt);
}

/* Packs a message of unknown length: needs room for the largest one. */
static ssize_t uct_tcp_ep_send_packed(uct_tcp_ep_t *ep, uint8_t id,
                                      const void *prefix, size_t prefix_len,
                                      uct_pack_callback_t pack_cb, void *arg,
                                      const char *what)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    size_t max             = iface->config.max_msg - prefix_len;
    uct_tcp_hdr_t hdr;
    ucs_status_t status;
    size_t length;
    char *dest;

    status = uct_tcp_ep_tx_check(ep, iface->config.tx_seg_size);
    if (status != UCS_OK) {
        return status;
    }

    dest = uct_tcp_ep_tx_reserve(ep, iface->config.tx_seg_size, 0);
    ucs_assert(dest != NULL);
    length = pack_cb(dest + sizeof(hdr) + prefix_len, arg);
    if (ucs_unlikely(length > max)) {
        return uct_iface_invalid_length(&iface->super, what, length, max);
    }

    uct_tcp_hdr_init(&hdr, id, prefix_len + length);
    memcpy(dest, &hdr, sizeof(hdr));
    if (prefix_len > 0) {
        memcpy(dest + sizeof(hdr), prefix, prefix_len);
    }
    status = uct_tcp_ep_tx_commit(ep, sizeof(hdr) + prefix_len + length);
    if (status != UCS_OK) {
        return status;
    }
    return length;
}

ssize_t uct_tcp_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                            uct_pack_callback_t pack_cb, void *arg,
                            unsigned flags)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    ucs_status_t status;

    status = uct_iface_check_am_id(&uct_tcp_ep_iface(ep)->super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    return uct_tcp_ep_send_packed(ep, id, NULL, 0, pack_cb, arg,
                                  "am_bcopy packed");
}

ucs_status_t uct_tcp_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                 const void *header, unsigned header_length,
                                 const uct_iov_t *iov, size_t iovcnt,
                                 unsigned flags, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

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
                                    header_length, iface->config.max_msg);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "am_zcopy",
                                    header_length +
                                    uct_iov_total_length(iov, iovcnt),
                                    iface->config.max_msg);
    if (status != UCS_OK) {
        return status;
    }
    /* Whatever the socket does not take at once is copied, so the user's
     * buffers are free when this returns: the operation is complete. */
    return uct_tcp_ep_send_iov(ep, id, header, header_length, iov, iovcnt);
}

/* ------------------------------------------------------------------------
 * RMA: the rkey carries nothing; the remote address travels in the PUT
 * and GET messages.
 */

ucs_status_t uct_tcp_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                  unsigned length, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    size_t total = sizeof(uct_tcp_hdr_t) + sizeof(remote_addr) + length;
    struct iovec iov[3];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super, "put_short", length,
                                    iface->config.max_msg -
                                    sizeof(remote_addr));
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_tcp_ep_tx_check(ep, total);
    if (status != UCS_OK) {
        return status;
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_PUT, sizeof(remote_addr) + length);
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &remote_addr;
    iov[1].iov_len  = sizeof(remote_addr);
    iov[2].iov_base = (void*)buffer;
    iov[2].iov_len  = length;
    return uct_tcp_ep_sendv(ep, iov, (length > 0) ? 3 : 2, total);
}

ssize_t uct_tcp_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                             void *arg, uint64_t remote_addr,
                             uct_rkey_t rkey)
{
    return uct_tcp_ep_send_packed(uct_tcp_ep(tl_ep), UCT_TCP_OP_PUT,
                                  &remote_addr, sizeof(remote_addr), pack_cb,
                                  arg, "put_bcopy packed");
}

ucs_status_t uct_tcp_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                  size_t iovcnt, uint64_t remote_addr,
                                  uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    ucs_status_t status;

    status = uct_iface_check_iovcnt(&iface->super, "put_zcopy", iovcnt,
                                    iface->config.max_iov);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_iface_check_length(&iface->super, "put_zcopy",
                                    uct_iov_total_length(iov, iovcnt),
                                    iface->config.max_msg -
                                    sizeof(remote_addr));
    if (status != UCS_OK) {
        return status;
    }
    return uct_tcp_ep_send_iov(ep, UCT_TCP_OP_PUT, &remote_addr,
                               sizeof(remote_addr), iov, iovcnt);
}

/* Sends a GET request; the response completes @a op in order. */
static ucs_status_t uct_tcp_ep_get_post(uct_tcp_ep_t *ep, uct_tcp_get_op_t *op,
                                        uint64_t remote_addr)
{
    uct_tcp_get_req_t req;
    struct iovec iov[2];
    uct_tcp_hdr_t hdr;
    ucs_status_t status;

    status = uct_tcp_ep_tx_check(ep, sizeof(hdr) + sizeof(req));
    if (status != UCS_OK) {
        free(op);
        return status;
    }

    uct_tcp_hdr_init(&hdr, UCT_TCP_OP_GET_REQ, sizeof(req));
    req.remote_addr = remote_addr;
    req.length      = op->length;
    iov[0].iov_base = &hdr;
    iov[0].iov_len  = sizeof(hdr);
    iov[1].iov_base = &req;
    iov[1].iov_len  = sizeof(req);
    status = uct_tcp_ep_sendv(ep, iov, 2, sizeof(hdr) + sizeof(req));
    if (status != UCS_OK) {
        free(op);
        return status;
    }

    ucs_list_add_tail(&ep->get_list, &op->list);
    return UCS_INPROGRESS;
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
                                    iface->config.max_msg);
    if (status != UCS_OK) {
        return status;
    }

    op = malloc(sizeof(*op));
    if (op == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    op->length    = length;
    op->unpack_cb = unpack_cb;
    op->arg       = arg;
    op->iovcnt    = 0;
    op->comp      = comp;
    return uct_tcp_ep_get_post(ep, op, remote_addr);
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
                                    iface->config.max_msg);
    if (status != UCS_OK) {
        return status;
    }

    op = malloc(sizeof(*op) + sizeof(*iov) * iovcnt);
    if (op == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    op->length    = length;
    op->unpack_cb = NULL;
    op->arg       = NULL;
    op->iovcnt    = iovcnt;
    op->comp      = comp;
    memcpy(op->iov, iov, sizeof(*iov) * iovcnt);
    return uct_tcp_ep_get_post(ep, op, remote_addr);
}

/* ------------------------------------------------------------------------
 * Pending and flush
 */

ucs_status_t uct_tcp_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                    unsigned flags)
{
    uct_tcp_ep_t *ep       = uct_tcp_ep(tl_ep);
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    /* Room for the largest message: any send would succeed now */
    if ((ep->state != UCT_TCP_EP_FAILED) &&
        (uct_tcp_ep_tx_free(ep) >= iface->config.tx_seg_size)) {
        return UCS_ERR_BUSY;
    }
    uct_pending_req_push(&iface->arbiter, &ep->arb_group, req);
    return UCS_OK;
}

void uct_tcp_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                              void *arg)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);

    uct_pending_queue_purge(&uct_tcp_ep_iface(ep)->arbiter, &ep->arb_group,
                            cb, arg);
}

/* Local flush: done when the socket has taken every byte and every GET
 * has its answer. The peer does not acknowledge yet. */
ucs_status_t uct_tcp_ep_flush(uct_ep_h tl_ep, unsigned flags,
                              uct_completion_t *comp)
{
    uct_tcp_ep_t *ep = uct_tcp_ep(tl_ep);
    uct_tcp_flush_req_t *req;

    if (ep->state == UCT_TCP_EP_FAILED) {
        return UCS_ERR_CONNECTION_RESET;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        uct_pending_queue_purge(&uct_tcp_ep_iface(ep)->arbiter,
                                &ep->arb_group, NULL, NULL);
    }
    if (uct_tcp_ep_is_idle(ep)) {
        return UCS_OK;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS;
    }

    req = malloc(sizeof(*req));
    if (req == NULL) {
        ucs_error("tcp ep %p: failed to allocate a flush request",
                  (void*)ep);
        return UCS_ERR_NO_MEMORY;
    }
    req->comp = comp;
    ucs_list_add_tail(&ep->flush_list, &req->list);
    return UCS_INPROGRESS;
}
