/*
 * The receive path of tcp endpoints: messages are reassembled from the
 * byte stream in a pooled receive buffer, held only while a message is
 * partial; large PUT and GET data is streamed straight to its destination.
 *
 * Everything here is input from a peer. A header is checked before its
 * payload is looked at; a PUT or GET touches memory only inside a live
 * region registered with the key it carries and the right access
 * (tcp_md.h), checked again for every chunk of a streamed PUT; anything
 * else touches nothing, fails the peer's operation and draws one
 * rate-limited warning.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tcp_ep.h"
#include "tcp_md.h"

#include <inttypes.h>

static void uct_tcp_ep_deliver_am(uct_tcp_iface_t *iface, uint8_t id,
                                  char *data, size_t length)
{
    size_t align = iface->super.am_alignment;
    size_t off   = iface->super.am_align_offset;
    char *aligned;

    if ((align > 1) && (((uintptr_t)data + off) % align != 0)) {
        aligned = (char *)ucs_align_up_pow2((uintptr_t)iface->align_buf + off,
                                            align) -
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

/* The contiguous piece of an iov at logical offset @a offset. */
static void uct_tcp_iov_piece(const uct_iov_t *iov, size_t iovcnt,
                              size_t offset, char **ptr_p, size_t *len_p)
{
    size_t i, chunk;

    for (i = 0; i < iovcnt; ++i) {
        if (offset < iov[i].length * iov[i].count) {
            chunk  = offset / iov[i].length;
            offset = offset % iov[i].length;
            *ptr_p = (char *)iov[i].buffer + (chunk * iov[i].stride) + offset;
            *len_p = iov[i].length - offset;
            return;
        }
        offset -= iov[i].length * iov[i].count;
    }
    *ptr_p = NULL;
    *len_p = 0;
}

/* Copies @a n received bytes of a GET response into its destination. */
static void uct_tcp_get_op_fill(uct_tcp_get_op_t *op, const char *src, size_t n)
{
    size_t len;
    char *dst;

    while (n > 0) {
        uct_tcp_iov_piece(op->iov, op->iovcnt, op->offset, &dst, &len);
        len = ucs_min(len, n);
        memcpy(dst, src, len);
        src += len;
        n -= len;
        op->offset += len;
    }
}

static void uct_tcp_ep_get_done(uct_tcp_ep_t *ep, uct_tcp_get_op_t *op,
                                ucs_status_t status)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    ucs_list_del(&op->list);
    ep->ext->get_budget -= uct_tcp_get_reply_cost(op->length);
    if (!ucs_arbiter_group_is_empty(&ep->pending.group) &&
        uct_tcp_ep_has_room(ep)) {
        /* a GET that waited for the budget may go now */
        ucs_arbiter_group_schedule(&iface->arbiter, &ep->pending.group);
    }
    if (op->comp != NULL) {
        uct_invoke_completion(op->comp, status);
    }
    ucs_mpool_put(op);
}

static inline uct_tcp_md_t *uct_tcp_ep_md(uct_tcp_ep_t *ep)
{
    return uct_tcp_md(uct_tcp_ep_iface(ep)->super.md);
}

/* One warning per second per iface for remote accesses we refused. */
static void uct_tcp_ep_rma_denied(uct_tcp_ep_t *ep, const char *op,
                                  uint64_t address, uint64_t length,
                                  uint64_t rkey, const char *why)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    ++iface->rma_refused;
    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_RMA_DENIED],
                     "tcp iface %p: refused a %s of %" PRIu64 " bytes at "
                     "0x%" PRIx64 " (rkey 0x%" PRIx64 ") from %s: %s",
                     (void *)iface, op, length, address, rkey,
                     uct_tcp_ep_peer_str(ep, str, sizeof(str)), why);
}

/* Where a PUT of @a length bytes goes, with the md's lock held (end with
 * uct_tcp_md_access_end()); NULL if it is refused (the data is dropped
 * and the next ACK tells the peer). */
static char *uct_tcp_ep_put_begin(uct_tcp_ep_t *ep,
                                  const uct_tcp_put_hdr_t *put, uint64_t length)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (!iface->config.put_enable) {
        uct_tcp_ep_rma_denied(ep, "PUT", put->remote_addr, length, put->rkey,
                              "PUT is disabled here "
                              "(UCX_TCP_PUT_ENABLE=n)");
    } else if (uct_tcp_md_access_begin(
                   uct_tcp_ep_md(ep), put->rkey, put->remote_addr, length,
                   UCT_MD_MEM_ACCESS_REMOTE_PUT) == UCS_OK) {
        return (char *)(uintptr_t)put->remote_addr;
    } else {
        uct_tcp_ep_rma_denied(ep, "PUT", put->remote_addr, length, put->rkey,
                              "not inside a region registered "
                              "for remote PUT with that key");
    }
    ep->flags |= UCT_TCP_EP_FLAG_PUT_DENIED;
    return NULL;
}

/* Answers a GET request: small ones copied now, large ones sent from the
 * registered memory (checked again before every write), a refused one
 * with an empty, denied response. */
static ucs_status_t uct_tcp_ep_get_respond(uct_tcp_ep_t *ep,
                                           const uct_tcp_get_req_t *req)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_md_t *md       = uct_tcp_ep_md(ep);
    uct_tcp_hdr_t *hdr;
    struct iovec *iov;
    uct_tcp_tx_t *tx;
    char *dest;

    uct_tcp_ep_defer_stop(ep); /* answers are not held back */
    if (req->length > UCT_TCP_MAX_STREAM_MSG) {
        uct_tcp_ep_protocol_error(ep, "GET request larger than 4 GB");
        return UCS_ERR_CONNECTION_RESET;
    }

    if (uct_tcp_md_access_begin(md, req->rkey, req->remote_addr, req->length,
                                UCT_MD_MEM_ACCESS_REMOTE_GET) != UCS_OK) {
        uct_tcp_ep_rma_denied(ep, "GET", req->remote_addr, req->length,
                              req->rkey,
                              "not inside a region registered "
                              "for remote GET with that key");
        dest = uct_tcp_ep_tx_reserve(ep, sizeof(*hdr), 0, &tx);
        if (dest == NULL) {
            goto err_nomem;
        }
        uct_tcp_hdr_write(dest, UCT_TCP_OP_GET_RESP, 0,
                          UCT_TCP_HDR_FLAG_DENIED);
        uct_tcp_ep_tx_commit(ep, tx, sizeof(*hdr));
        return UCS_OK;
    }

    if (req->length <= UCT_TCP_GET_COPY_MAX) {
        dest = uct_tcp_ep_tx_reserve(ep, sizeof(*hdr) + req->length, 0, &tx);
        if (dest == NULL) {
            uct_tcp_md_access_end(md);
            goto err_nomem;
        }
        uct_tcp_hdr_write(dest, UCT_TCP_OP_GET_RESP, req->length, 0);
        memcpy(dest + sizeof(*hdr), (const void *)(uintptr_t)req->remote_addr,
               req->length);
        uct_tcp_md_access_end(md);
        uct_tcp_ep_tx_commit(ep, tx, sizeof(*hdr) + req->length);
        return UCS_OK;
    }
    uct_tcp_md_access_end(md);

    tx = ucs_mpool_get(&iface->op_mp);
    if (tx == NULL) {
        goto err_nomem;
    }
    iov           = (struct iovec *)tx->data;
    hdr           = (uct_tcp_hdr_t *)(iov + 2);
    tx->comp      = NULL;
    tx->rkey      = req->rkey;
    tx->is_buf    = 0;
    tx->iov_index = 0;
    tx->iovcnt    = 2;
    tx->length    = 0;
    tx->offset    = 0;
    uct_tcp_hdr_init(hdr, UCT_TCP_OP_GET_RESP, req->length, 0);
    iov[0].iov_base = hdr;
    iov[0].iov_len  = sizeof(*hdr);
    iov[1].iov_base = (void *)(uintptr_t)req->remote_addr;
    iov[1].iov_len  = req->length;
    ucs_list_add_tail(&ep->tx_list, &tx->list);
    ++ep->tx_ops;
    return UCS_OK;

err_nomem:
    ucs_error_limited(&iface->log_limit[UCT_TCP_LOG_PROTOCOL],
                      "tcp ep %p: no memory to answer a GET", (void *)ep);
    uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
    return UCS_ERR_NO_MEMORY;
}

/*
 * Handlers of one message type each. @a payload points at the @a avail
 * bytes that follow the header in the receive buffer. UCS_OK: handled
 * (rx->offset moved past what was used), go on; UCS_ERR_NO_PROGRESS:
 * needs more bytes; another status: the ep was failed (and may be gone).
 */
typedef ucs_status_t (*uct_tcp_rx_msg_func_t)(uct_tcp_ep_t *ep,
                                              const uct_tcp_hdr_t *hdr,
                                              char *payload, size_t avail);

static ucs_status_t uct_tcp_ep_rx_am(uct_tcp_ep_t *ep, const uct_tcp_hdr_t *hdr,
                                     char *payload, size_t avail)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);

    if (hdr->length > iface->config.max_am) {
        uct_tcp_ep_protocol_error(ep, "active message larger than the "
                                      "receive segment "
                                      "(UCX_TCP_RX_SEG_SIZE)");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (avail < hdr->length) {
        return UCS_ERR_NO_PROGRESS;
    }
    ep->rx->offset += sizeof(*hdr) + hdr->length;
    uct_tcp_ep_deliver_am(iface, hdr->id, payload, hdr->length);
    return UCS_OK;
}

static ucs_status_t uct_tcp_ep_rx_put(uct_tcp_ep_t *ep,
                                      const uct_tcp_hdr_t *hdr, char *payload,
                                      size_t avail)
{
    uct_tcp_put_hdr_t put;
    size_t length, n;
    char *dest;

    if (hdr->length < sizeof(put)) {
        uct_tcp_ep_protocol_error(ep, "truncated PUT");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (avail < sizeof(put)) {
        return UCS_ERR_NO_PROGRESS;
    }
    memcpy(&put, payload, sizeof(put));
    length = hdr->length - sizeof(put);
    n      = ucs_min(avail - sizeof(put), length);

    dest = uct_tcp_ep_put_begin(ep, &put, length);
    if (dest != NULL) {
        memcpy(dest, payload + sizeof(put), n);
        uct_tcp_md_access_end(uct_tcp_ep_md(ep));
    }
    ep->rx->offset += sizeof(*hdr) + sizeof(put) + n;
    if (n < length) {
        if (uct_tcp_ep_ext_get(ep) == NULL) {
            uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
            return UCS_ERR_CONNECTION_RESET;
        }
        ep->rx_stream_id        = UCT_TCP_OP_PUT;
        ep->ext->rx_stream_dest = (dest != NULL) ? dest + n : NULL;
        ep->ext->rx_stream_left = length - n;
        ep->ext->rx_stream_key  = put.rkey;
        ep->ext->rx_stream_time = ucs_get_time();
    }
    return UCS_OK;
}

/* Whether GETs other than the oldest are outstanding on @a ep */
static UCS_F_ALWAYS_INLINE int uct_tcp_ep_gets_behind(const uct_tcp_ep_t *ep)
{
    const ucs_list_link_t *list;

    if (ep->ext == NULL) {
        return 0;
    }
    list = &ep->ext->get_list;
    return !ucs_list_is_empty(list) && (list->next->next != list);
}

static ucs_status_t uct_tcp_ep_rx_get_req(uct_tcp_ep_t *ep,
                                          const uct_tcp_hdr_t *hdr,
                                          char *payload, size_t avail)
{
    uct_tcp_get_req_t req;

    if (hdr->length != sizeof(req)) {
        uct_tcp_ep_protocol_error(ep, "malformed GET request");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (avail < sizeof(req)) {
        return UCS_ERR_NO_PROGRESS;
    }
    memcpy(&req, payload, sizeof(req));
    ep->rx->offset += sizeof(*hdr) + sizeof(req);
    return uct_tcp_ep_get_respond(ep, &req);
}

static ucs_status_t uct_tcp_ep_rx_get_resp(uct_tcp_ep_t *ep,
                                           const uct_tcp_hdr_t *hdr,
                                           char *payload, size_t avail)
{
    uct_tcp_get_op_t *op;
    size_t n;

    if ((ep->ext == NULL) || ucs_list_is_empty(&ep->ext->get_list)) {
        uct_tcp_ep_protocol_error(ep, "GET response with no request");
        return UCS_ERR_CONNECTION_RESET;
    }
    op = ucs_list_head(&ep->ext->get_list, uct_tcp_get_op_t, list);

    if (hdr->flags & UCT_TCP_HDR_FLAG_DENIED) {
        if (hdr->length != 0) {
            uct_tcp_ep_protocol_error(ep, "refused GET response with data");
            return UCS_ERR_CONNECTION_RESET;
        }
        ep->rx->offset += sizeof(*hdr);
        ++uct_tcp_ep_iface(ep)->rma_denied;
        uct_tcp_ep_get_done(ep, op, UCS_ERR_INVALID_ADDR);
        return UCS_OK;
    }

    if (op->length != hdr->length) {
        uct_tcp_ep_protocol_error(ep, "GET response of the wrong length");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (op->unpack_cb != NULL) {
        /* bcopy: bounded by the segment, delivered whole */
        if (avail < hdr->length) {
            return UCS_ERR_NO_PROGRESS;
        }
        ep->rx->offset += sizeof(*hdr) + hdr->length;
        op->unpack_cb(op->arg, payload, hdr->length);
        uct_tcp_ep_get_done(ep, op, UCS_OK);
        return UCS_OK;
    }

    n = ucs_min(avail, (size_t)hdr->length);
    uct_tcp_get_op_fill(op, payload, n);
    ep->rx->offset += sizeof(*hdr) + n;
    if (n < hdr->length) {
        ep->rx_stream_id        = UCT_TCP_OP_GET_RESP;
        ep->ext->rx_stream_left = hdr->length - n;
        ep->ext->rx_stream_time = ucs_get_time();
    } else {
        uct_tcp_ep_get_done(ep, op, UCS_OK);
    }
    return UCS_OK;
}

static ucs_status_t uct_tcp_ep_rx_ack_req(uct_tcp_ep_t *ep,
                                          const uct_tcp_hdr_t *hdr,
                                          char *payload, size_t avail)
{
    uct_tcp_hdr_t ack;

    if (hdr->length != 0) {
        uct_tcp_ep_protocol_error(ep, "malformed acknowledgement request");
        return UCS_ERR_CONNECTION_RESET;
    }
    ep->rx->offset += sizeof(*hdr);
    uct_tcp_hdr_init(
        &ack, UCT_TCP_OP_ACK, 0,
        (ep->flags & UCT_TCP_EP_FLAG_PUT_DENIED) ? UCT_TCP_HDR_FLAG_DENIED : 0);
    if (uct_tcp_ep_ctrl_send(ep, &ack, sizeof(ack)) != UCS_OK) {
        uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
        return UCS_ERR_NO_MEMORY;
    }
    ep->flags &= ~UCT_TCP_EP_FLAG_PUT_DENIED;
    return UCS_OK;
}

static ucs_status_t uct_tcp_ep_rx_ack(uct_tcp_ep_t *ep,
                                      const uct_tcp_hdr_t *hdr, char *payload,
                                      size_t avail)
{
    if (hdr->length != 0) {
        uct_tcp_ep_protocol_error(ep, "malformed acknowledgement");
        return UCS_ERR_CONNECTION_RESET;
    }
    if (uct_tcp_ep_is_flushed(ep)) {
        /* it would complete a flush before the peer handled the data */
        uct_tcp_ep_protocol_error(ep, "acknowledgement that was not asked "
                                      "for");
        return UCS_ERR_CONNECTION_RESET;
    }
    ep->rx->offset += sizeof(*hdr);
    ++ep->ext->acks_received;
    if (hdr->flags & UCT_TCP_HDR_FLAG_DENIED) {
        ++uct_tcp_ep_iface(ep)->rma_denied;
        uct_tcp_ep_check_flush(ep, UCS_ERR_INVALID_ADDR);
    } else {
        uct_tcp_ep_check_flush(ep, UCS_OK);
    }
    return UCS_OK;
}

static const struct {
    uct_tcp_rx_msg_func_t func;
    uint8_t flags; /* header flags it may carry */
} uct_tcp_rx_ops[UCT_TCP_OP_LAST - UCT_TCP_OP_PUT] = {
    [UCT_TCP_OP_PUT - UCT_TCP_OP_PUT]     = {uct_tcp_ep_rx_put, 0},
    [UCT_TCP_OP_GET_REQ - UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_get_req, 0},
    [UCT_TCP_OP_GET_RESP -
        UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_get_resp, UCT_TCP_HDR_FLAG_DENIED},
    [UCT_TCP_OP_ACK_REQ - UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_ack_req, 0},
    [UCT_TCP_OP_ACK -
        UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_ack, UCT_TCP_HDR_FLAG_DENIED},
    [UCT_TCP_OP_SWITCH - UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_switch, 0},
    [UCT_TCP_OP_SWITCH_ACK -
        UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_switch_ack, UCT_TCP_HDR_FLAG_DENIED},
    [UCT_TCP_OP_UNPAIR - UCT_TCP_OP_PUT] = {uct_tcp_ep_rx_unpair, 0}};

/* Handles the message at the head of the receive buffer, if complete (or
 * starts streaming it); see uct_tcp_rx_msg_func_t for the result. */
static ucs_status_t uct_tcp_ep_rx_message(uct_tcp_ep_t *ep)
{
    uct_tcp_rx_t *rx = ep->rx;
    size_t avail     = rx->length - rx->offset;
    uct_tcp_hdr_t hdr;
    unsigned op;

    if (avail < sizeof(hdr)) {
        return UCS_ERR_NO_PROGRESS;
    }
    memcpy(&hdr, rx->data + rx->offset, sizeof(hdr));

    /*
     * The peer may be waiting for an answer to anything but an ACK or a GET
     * response (answers themselves): what the ep sends next, from the
     * handler or after it, is not held back for coalescing, nor is what it
     * holds already. A ping-pong would otherwise run at the pace of
     * UCX_TCP_COALESCE_TIME whenever its round trip is shorter. The
     * response to the last outstanding GET counts as such a message too
     * (one GET at a time is a ping-pong); while more are outstanding, new
     * requests coalesce, so a stream of GETs costs the peer one receive
     * and one send per window instead of one per GET.
     */
    if ((hdr.id != UCT_TCP_OP_ACK) &&
        ((hdr.id != UCT_TCP_OP_GET_RESP) || !uct_tcp_ep_gets_behind(ep))) {
        ep->last_write = 0;
        ++uct_tcp_ep_iface(ep)->rx_asks; /* the answer may leave on
                                            another ep to that peer */
    }

    if (hdr.id < UCT_AM_ID_MAX) {
        if (ucs_unlikely((hdr.flags != 0) || (hdr.reserved != 0))) {
            goto err_hdr;
        }
        return uct_tcp_ep_rx_am(ep, &hdr, rx->data + rx->offset + sizeof(hdr),
                                avail - sizeof(hdr));
    }

    op = (unsigned)hdr.id - UCT_TCP_OP_PUT;
    if ((hdr.id < UCT_TCP_OP_PUT) || (hdr.id >= UCT_TCP_OP_LAST)) {
        uct_tcp_ep_protocol_error(ep, "message with an invalid id");
        return UCS_ERR_CONNECTION_RESET;
    }
    if ((hdr.flags & ~uct_tcp_rx_ops[op].flags) || (hdr.reserved != 0)) {
        goto err_hdr;
    }
    return uct_tcp_rx_ops[op].func(
        ep, &hdr, rx->data + rx->offset + sizeof(hdr), avail - sizeof(hdr));

err_hdr:
    uct_tcp_ep_protocol_error(ep, "message header with unknown flags or "
                                  "a reserved field set");
    return UCS_ERR_CONNECTION_RESET;
}

/* Receive handler of a connected ep: every complete message in the
 * buffer, until a large one starts streaming. Returns @a ep, or NULL if
 * it failed. */
/* The peer asked for more replies than a compliant one can: stop reading
 * it until our send queue drains (uct_tcp_ep_rx_resume()); it is dropped
 * if that takes longer than UCX_TCP_PEER_TIMEOUT. */
static void uct_tcp_ep_rx_stop(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_debug("tcp ep %p: %s is over its reply budget (%u bytes queued); "
              "not reading it until they drain",
              (void *)ep, uct_tcp_ep_peer_str(ep, str, sizeof(str)),
              ep->tx_queued);
    uct_tcp_ep_defer_stop(ep); /* retry_list is ours now */
    ep->flags |= UCT_TCP_EP_FLAG_RX_STOPPED;
    ep->retry_time = ucs_get_time() + iface->config.peer_timeout;
    ucs_list_add_tail(&iface->retry_list, &ep->retry_list);
    if (iface->hot_ep == ep) {
        iface->hot_ep = NULL;
    }
    uct_tcp_ep_update_events(ep);
}

static uct_tcp_ep_t *uct_tcp_ep_rx_messages(uct_tcp_ep_t *ep)
{
    ucs_status_t status;

    while (ep->rx_stream_id == 0) {
        if (ucs_unlikely(uct_tcp_ep_rx_over_budget(ep))) {
            uct_tcp_ep_rx_stop(ep);
            break;
        }
        status = uct_tcp_ep_rx_message(ep);
        if (status == UCS_ERR_NO_PROGRESS) {
            break;
        } else if (status != UCS_OK) {
            return NULL;
        }
    }
    return ep;
}

/* The receive handler of each phase (uct_tcp_ep_t::rx_phase) */
static uct_tcp_ep_t *(*const uct_tcp_rx_handlers[UCT_TCP_RX_LAST])(
    uct_tcp_ep_t *ep) = {[UCT_TCP_RX_MESSAGES]  = uct_tcp_ep_rx_messages,
                         [UCT_TCP_RX_HANDSHAKE] = uct_tcp_ep_rx_handshake,
                         [UCT_TCP_RX_REPLY]     = uct_tcp_ep_rx_reply};

/* Handles what the receive buffer holds. A handler that ends its phase
 * (a handshake, a reply) hands the rest to the next one. Returns the ep
 * that owns the connection afterwards, NULL if it failed. */
static uct_tcp_ep_t *uct_tcp_ep_rx_parse(uct_tcp_ep_t *ep)
{
    uint8_t phase;

    if (ucs_likely(ep->rx_phase == UCT_TCP_RX_MESSAGES)) {
        return uct_tcp_ep_rx_messages(ep); /* the last phase */
    }
    do {
        phase = ep->rx_phase;
        ep    = uct_tcp_rx_handlers[phase](ep);
    } while ((ep != NULL) && (ep->rx_phase != phase));
    return ep;
}

/* The region of a streamed PUT went away: the rest is dropped. */
static void uct_tcp_ep_rx_put_denied(uct_tcp_ep_t *ep, char *dest)
{
    uct_tcp_ep_rma_denied(ep, "PUT", (uintptr_t)dest, ep->ext->rx_stream_left,
                          ep->ext->rx_stream_key,
                          "its region was deregistered "
                          "while the data arrived");
    ep->flags |= UCT_TCP_EP_FLAG_PUT_DENIED;
    ep->ext->rx_stream_dest = NULL;
}

/* Where the next streamed bytes go: @a ep's PUT target, with the md's
 * lock held (until the recv() into it is over, so a deregistration waits
 * for it), if its region still covers the rest; else NULL: the bytes are
 * dropped. */
static char *uct_tcp_ep_rx_put_dest(uct_tcp_ep_t *ep)
{
    char *dest = ep->ext->rx_stream_dest;

    if ((dest != NULL) &&
        (uct_tcp_md_access_begin(uct_tcp_ep_md(ep), ep->ext->rx_stream_key,
                                 (uintptr_t)dest, ep->ext->rx_stream_left,
                                 UCT_MD_MEM_ACCESS_REMOTE_PUT) != UCS_OK)) {
        uct_tcp_ep_rx_put_denied(ep, dest);
        dest = NULL;
    }
    return dest;
}

/* Receives the rest of a large PUT or GET response straight into its
 * destination. */
static void uct_tcp_ep_rx_stream(uct_tcp_ep_t *ep)
{
    uct_tcp_get_op_t *op = NULL;
    int locked           = 0;
    char scratch[4096];
    size_t len;
    ssize_t ret;
    char *dest;

    if (ep->rx_stream_id == UCT_TCP_OP_PUT) {
        dest = uct_tcp_ep_rx_put_dest(ep);
        len  = ep->ext->rx_stream_left;
        if (dest == NULL) {
            dest = scratch;
            len  = ucs_min(len, sizeof(scratch));
        } else {
            locked = 1;
        }
    } else {
        op = ucs_list_head(&ep->ext->get_list, uct_tcp_get_op_t, list);
        uct_tcp_iov_piece(op->iov, op->iovcnt, op->offset, &dest, &len);
        len = ucs_min(len, ep->ext->rx_stream_left);
    }

    ret = recv(ep->fd, dest, ucs_min(len, (size_t)INT32_MAX), 0);
    if (locked) {
        uct_tcp_md_access_end(uct_tcp_ep_md(ep));
    }
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

    ep->ext->rx_stream_left -= ret;
    ep->ext->rx_stream_time = ucs_get_time();
    if (ep->ext->rx_stream_left == 0) {
        ep->rx_stream_id = 0;
    }
    if (op == NULL) {
        if (ep->ext->rx_stream_dest != NULL) {
            ep->ext->rx_stream_dest += ret;
        }
    } else {
        op->offset += ret;
        if (ep->rx_stream_id == 0) {
            uct_tcp_ep_get_done(ep, op, UCS_OK);
        }
    }
}

/* Sends the answers (ACK, GET data) that what was received queued,
 * unless the socket is waited for or the ep holds its writes. */
static UCS_F_ALWAYS_INLINE void uct_tcp_ep_rx_answer(uct_tcp_ep_t *ep)
{
    if (!ucs_list_is_empty(&ep->tx_list) && (ep->fd >= 0) &&
        !(ep->events & UCS_EVENT_SET_EVWRITE) &&
        !(ep->flags & UCT_TCP_EP_FLAG_DEFERRED)) {
        uct_tcp_ep_tx_progress(ep);
    }
}

/* recv() on a connected ep returned @a ret <= 0 with @a errno (@a
 * partial: after part of a message): the connection is over (or failed),
 * unless the call just found nothing (then 0). */
static unsigned uct_tcp_ep_rx_error(uct_tcp_ep_t *ep, ssize_t ret, int partial)
{
    if ((ret < 0) && ((errno == EAGAIN) || (errno == EINTR))) {
        uct_tcp_ep_rx_answer(ep);
        return 0;
    }
    if ((ret == 0) && partial) {
        uct_tcp_ep_protocol_error(ep, "connection closed in the middle "
                                      "of a message");
    } else if ((ret == 0) && (ep->state == UCT_TCP_EP_ACCEPTED)) {
        uct_tcp_ep_fail(ep, UCS_ERR_CONNECTION_RESET);
    } else {
        uct_tcp_ep_fail(ep, (ret == 0) ? UCS_ERR_CONNECTION_RESET
                                       : uct_tcp_errno_status(errno));
    }
    return 1;
}

/* Out of receive buffers: the peer is dropped. */
static void uct_tcp_ep_rx_no_buffer(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    char str[UCS_SOCKADDR_STRING_LEN];

    ucs_warn_limited(&iface->log_limit[UCT_TCP_LOG_PROTOCOL],
                     "tcp iface %p: out of receive buffers "
                     "(UCX_TCP_MAX_BUFS=%u); closing the connection of %s",
                     (void *)iface, iface->config.max_bufs,
                     uct_tcp_ep_peer_str(ep, str, sizeof(str)));
    uct_tcp_ep_fail(ep, UCS_ERR_NO_MEMORY);
}

/* @a ep takes the iface's spare buffer @a rx, into which @a n bytes were
 * just read. */
static UCS_F_ALWAYS_INLINE void uct_tcp_ep_rx_take(uct_tcp_iface_t *iface,
                                                   uct_tcp_ep_t *ep,
                                                   uct_tcp_rx_t *rx, size_t n)
{
    iface->rx_spare = NULL;
    rx->offset      = 0;
    rx->length      = n;
    ep->rx          = rx;
    ++iface->rx_held;
}

/* @a ep handled everything its receive buffer held: the buffer becomes
 * the iface's spare (or returns to the pool if there is one already). */
static UCS_F_ALWAYS_INLINE void uct_tcp_ep_rx_done(uct_tcp_iface_t *iface,
                                                   uct_tcp_ep_t *ep)
{
    if (ucs_unlikely(ep->rx->peer != NULL)) {
        uct_tcp_rx_unhold(ep->rx);
    }
    if (iface->rx_spare == NULL) {
        iface->rx_spare = ep->rx;
    } else {
        ucs_mpool_put(ep->rx);
    }
    ep->rx = NULL;
    --iface->rx_held;
}

/* After a read: handles what the receive buffer holds (@a fresh: the
 * buffer was taken for this read). Returns 1. */
static unsigned uct_tcp_ep_rx_handle(uct_tcp_iface_t *iface, uct_tcp_ep_t *ep,
                                     int fresh)
{
    uct_tcp_rx_t *rx;

    ep = uct_tcp_ep_rx_parse(ep);
    if (ep == NULL) {
        return 1;
    }
    rx = ep->rx;
    if (rx != NULL) {
        if (rx->offset == rx->length) {
            uct_tcp_ep_rx_done(iface, ep);
        } else {
            if (fresh || (rx->offset > 0)) {
                /* held for a partial message: since when */
                rx->since = ucs_get_time();
            }
            if (rx->peer != NULL) {
                uct_tcp_rx_touch(rx);
            } else if (!uct_tcp_ep_rx_hold(ep)) {
                return 1; /* the pool had no room even for this */
            }
        }
    }
    if (!(ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        /* polled directly by the next progress calls */
        iface->hot_ep = ep;
    }
    if (ucs_unlikely(ep->flags & UCT_TCP_EP_FLAG_DEFERRED) &&
        (ep->last_write == 0)) {
        /* what is held goes with the answers (uct_tcp_ep_rx_message()) */
        uct_tcp_ep_tx_progress(ep); /* may fail the ep: last */
    } else {
        uct_tcp_ep_rx_answer(ep);
    }
    return 1;
}

/* The general case of uct_tcp_ep_rx_progress(): a message is partial or
 * streaming, the peer is stopped, the spare buffer is missing, or a
 * recv() failed. */
static UCS_F_NOINLINE unsigned uct_tcp_ep_rx_progress_slow(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_rx_t *rx;
    size_t queued;
    ssize_t ret;

    if (ucs_unlikely(ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED)) {
        return 0;
    }
    if (ep->rx_stream_id != 0) {
        uct_tcp_ep_rx_stream(ep);
        return 1;
    }

    rx = ep->rx;
    if (rx == NULL) {
        rx = iface->rx_spare;
        if (rx == NULL) {
            rx = ucs_mpool_get(&iface->rx_mp);
            if (rx == NULL) {
                uct_tcp_ep_rx_no_buffer(ep);
                return 1;
            }
            iface->rx_spare = rx;
        }
        ret = recv(ep->fd, rx->data, iface->config.rx_seg_size, 0);
        if (ret <= 0) {
            return uct_tcp_ep_rx_error(ep, ret, 0);
        }
        uct_tcp_ep_rx_take(iface, ep, rx, ret);
        return uct_tcp_ep_rx_handle(iface, ep, 1);
    }

    if (rx->offset > 0) {
        queued = rx->length - rx->offset;
        memmove(rx->data, rx->data + rx->offset, queued);
        rx->offset = 0;
        rx->length = queued;
    }
    ret = recv(ep->fd, rx->data + rx->length,
               iface->config.rx_seg_size - rx->length, 0);
    if (ret <= 0) {
        return uct_tcp_ep_rx_error(ep, ret, rx->length > 0);
    }
    rx->length += ret;
    return uct_tcp_ep_rx_handle(iface, ep, 0);
}

/*
 * An ep with nothing partial reads into the iface's spare receive buffer,
 * which it keeps only if a message is left incomplete: a poll that finds
 * nothing and a read that ends on a message boundary (the usual case)
 * take nothing from the pool and read no clock. One recv() takes all the
 * socket holds, up to a segment, however many messages that is.
 */
unsigned uct_tcp_ep_rx_progress(uct_tcp_ep_t *ep)
{
    uct_tcp_iface_t *iface = uct_tcp_ep_iface(ep);
    uct_tcp_rx_t *rx       = iface->rx_spare;
    ssize_t ret;

    if (ucs_unlikely((ep->rx != NULL) || (rx == NULL) ||
                     (ep->rx_stream_id != 0) ||
                     (ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED))) {
        return uct_tcp_ep_rx_progress_slow(ep);
    }

    ret = recv(ep->fd, rx->data, iface->config.rx_seg_size, 0);
    if (ucs_likely(ret > 0)) {
        uct_tcp_ep_rx_take(iface, ep, rx, ret);
        return uct_tcp_ep_rx_handle(iface, ep, 1);
    } else if ((ret < 0) && (errno == EAGAIN) &&
               ucs_list_is_empty(&ep->tx_list)) {
        return 0; /* nothing came, nothing to answer */
    }
    return uct_tcp_ep_rx_error(ep, ret, 0);
}

/* The send queue drained below the reply budget: read the peer again,
 * starting with what the receive buffer kept. */
void uct_tcp_ep_rx_resume(uct_tcp_ep_t *ep)
{
    ep->flags &= ~UCT_TCP_EP_FLAG_RX_STOPPED;
    ucs_list_del(&ep->retry_list);
    uct_tcp_ep_update_events(ep);
    if (ep->rx == NULL) {
        return;
    }

    ep = uct_tcp_ep_rx_parse(ep);
    if ((ep != NULL) && (ep->rx != NULL) &&
        (ep->rx->offset == ep->rx->length)) {
        uct_tcp_ep_release_rx(ep);
    }
}

/* Whether what @a ep receives has stopped for longer than the peer
 * timeout: a message partly in the receive buffer that did not complete,
 * or a streamed PUT or GET response whose bytes stopped coming, whatever
 * length it announced. A peer that we stopped reading is not to blame. */
static int uct_tcp_ep_rx_is_stale(const uct_tcp_ep_t *ep, ucs_time_t since,
                                  ucs_time_t now)
{
    const uct_tcp_iface_t *iface = uct_tcp_iface(ep->super.super.iface);

    return ((ep->state == UCT_TCP_EP_CONNECTED) ||
            (ep->state == UCT_TCP_EP_SWITCHING)) &&
           !(ep->flags & UCT_TCP_EP_FLAG_RX_STOPPED) &&
           ((now - since) > iface->config.peer_timeout);
}

/* Drops the connections whose partly received message has not completed,
 * or whose streamed message has not moved, for UCX_TCP_PEER_TIMEOUT: a
 * peer cannot hold a receive buffer, or a stream, forever. */
void uct_tcp_iface_rx_check_stale(uct_tcp_iface_t *iface, ucs_time_t now)
{
    uct_tcp_ep_ext_t *ext, *text;
    uct_tcp_ep_t *ep, *tmp;

    /* dropping an ep takes only that ep off these lists */
    if (iface->rx_held > 0) {
        ucs_list_for_each_safe(ep, tmp, &iface->ep_list, list) {
            if ((ep->rx != NULL) && (ep->rx->length > ep->rx->offset) &&
                uct_tcp_ep_rx_is_stale(ep, ep->rx->since, now)) {
                uct_tcp_ep_protocol_error(ep, "message left incomplete for "
                                              "longer than "
                                              "UCX_TCP_PEER_TIMEOUT");
            }
        }
    }

    ucs_list_for_each_safe(ext, text, &iface->ext_list, list) {
        if ((ext->ep->rx_stream_id != 0) &&
            uct_tcp_ep_rx_is_stale(ext->ep, ext->rx_stream_time, now)) {
            uct_tcp_ep_protocol_error(ext->ep, "streamed message stalled for "
                                               "longer than "
                                               "UCX_TCP_PEER_TIMEOUT");
        }
    }
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
