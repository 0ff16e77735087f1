/*
 * The receive path of tcp endpoints: messages are reassembled from the
 * byte stream in a pooled receive buffer, held only while a message is
 * partial; large PUT and GET data is streamed straight to its destination.
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "tcp_ep.h"

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
