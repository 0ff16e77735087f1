/*
 * ud_verbs send operations: active messages and PUTs. Each takes a send
 * descriptor, builds the packet in it, numbers it and posts it; the
 * descriptor stays on the endpoint until the peer acknowledges it. And
 * the interface's array of acknowledgements owed, and its passes.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud.h"

#include <ucs/time/time.h>

#include <stdlib.h>
#include <string.h>

/* Why @a ep cannot send now: its failure, or UCS_ERR_NO_RESOURCE */
static ucs_status_t uct_ud_ep_tx_busy(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        return (ucs_status_t)ep->status;
    }
    if ((ep->tx.resend != ep->tx.psn) && (iface->tx.available > 1)) {
        uct_ud_ep_resend(iface, ep);
    }
    uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
    return UCS_ERR_NO_RESOURCE;
}

/* A descriptor for a new packet of @a ep, or NULL with the status */
static UCS_F_ALWAYS_INLINE uct_ud_send_desc_t *
uct_ud_ep_tx_desc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                  ucs_status_t *status_p)
{
    uct_ud_send_desc_t *desc;

    if (ucs_unlikely(!uct_ud_ep_can_send(iface, ep))) {
        *status_p = uct_ud_ep_tx_busy(iface, ep);
        return NULL;
    }
    desc = ucs_mpool_get(&iface->tx_mp);
    if (ucs_unlikely(desc == NULL)) {
        uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
        *status_p = UCS_ERR_NO_RESOURCE;
        return NULL;
    }
    desc->comp   = NULL;
    desc->flags  = 0;
    desc->iovcnt = 0;
    return desc;
}

/* Numbers the packet in @a desc (@a length bytes with the header), posts
 * it and keeps it until acknowledged */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_ud_ep_send_new(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                   uct_ud_send_desc_t *desc, uint8_t type, size_t length)
{
    uint16_t psn = ep->tx.psn;
    ucs_status_t status;

    /* half the window used: ask for an acknowledgement, once until one
     * comes. A user completion waits for this packet's: it is asked for
     * once the ep stops sending such packets (uct_ud_iface_send_acks()),
     * so that a stream asks once per burst, not once per packet (asking
     * on the packet itself cost a solicited event and an ACK per message
     * whenever the peer acknowledged faster than the user sent) */
    if (!(ep->rx_flags & UCT_UD_EP_TX_ACK_REQ_SENT) &&
        ((uint16_t)(psn - ep->tx.acked) > iface->config.tx_window / 2)) {
        type |= UCT_UD_PKT_FLAG_ACK_REQ;
        ep->rx_flags |= UCT_UD_EP_TX_ACK_REQ_SENT;
        ep->flags &= (uint16_t) ~(UCT_UD_EP_FLAG_COMP_UNASKED |
                                  UCT_UD_EP_FLAG_COMP_RECENT);
    } else if (desc->comp != NULL) {
        if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
            type |= UCT_UD_PKT_FLAG_ACK_REQ; /* goes with the CREP */
        } else {
            ep->flags |=
                UCT_UD_EP_FLAG_COMP_UNASKED | UCT_UD_EP_FLAG_COMP_RECENT;
            uct_ud_iface_queue_ack(iface, ep);
        }
    }
    uct_ud_ep_fill_hdr(iface, ep, uct_ud_desc_hdr(desc), type, psn);
    desc->psn    = psn;
    desc->length = (uint16_t)length;
    if (ucs_likely(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        status = uct_ud_ep_post_desc(iface, ep, desc, 0);
        if (ucs_unlikely(status != UCS_OK)) {
            ucs_mpool_put(desc);
            return status;
        }
    } else {
        /* kept for the CREP: nothing reads it before */
        desc->flags |= UCT_UD_DESC_FLAG_INLINE | UCT_UD_DESC_FLAG_KEPT;
    }
    if (uct_ud_desc_queue_is_empty(&ep->unacked) &&
        !(ep->flags & UCT_UD_EP_FLAG_CREQ)) {
        /* (while the CREQ is out, ack_time is its time of sending, and
         * the CREP starts the data's wait) */
        ep->ack_time   = UCT_UD_TIME_AT_SWEEP;
        ep->tx.backoff = 0;
        if (ucs_likely(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
            ep->rx_flags |= UCT_UD_EP_TX_TIMED;
        }
        uct_ud_ep_activate(iface, ep);
    }
    uct_ud_desc_queue_push(&ep->unacked, desc);
    ep->tx.psn = (uint16_t)(psn + 1);
    if (ucs_likely(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        ep->tx.resend = ep->tx.psn;
    }
    return UCS_OK;
}

static UCS_F_ALWAYS_INLINE void uct_ud_ep_am_sent(uct_ud_iface_t *iface,
                                                  uint8_t id, const void *data,
                                                  size_t length)
{
    uct_iface_stat_am_tx(&iface->super.super, id, length);
    if (ucs_unlikely(iface->super.super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super.super, UCT_AM_TRACE_TYPE_SEND, id,
                           data, length);
    }
}

/* ------------------------------------------------------------------------
 * Active messages
 */

/* am_short (the 8-byte @a header, then @a length bytes at @a payload)
 * and am_short_iov (@a header NULL: the @a length bytes of the iov) */
static UCS_F_ALWAYS_INLINE ucs_status_t uct_ud_ep_am_short_common(
    uct_ep_h tl_ep, uint8_t id, const char *what, const uint64_t *header,
    const void *payload, const uct_iov_t *iov, size_t iovcnt, size_t length)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    size_t hdr_len        = (header != NULL) ? sizeof(*header) : 0;
    size_t max = ucs_min(iface->config.max_inline, iface->config.seg_size) -
                 sizeof(uct_ud_hdr_t) - sizeof(uint64_t);
    uct_ud_send_desc_t *desc;
    ucs_status_t status;
    uint8_t *data;

    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_iface_check_length(&iface->super.super, what, length, max);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ud_enter(iface);
    desc = uct_ud_ep_tx_desc(iface, ep, &status);
    if (ucs_likely(desc != NULL)) {
        data = (uint8_t *)(uct_ud_desc_hdr(desc) + 1);
        if (header != NULL) {
            memcpy(data, header, hdr_len);
            if (length > 0) { /* a header-only message may pass NULL */
                memcpy(data + hdr_len, payload, length);
            }
        } else {
            uct_iov_to_buffer(iov, iovcnt, data);
        }
        status = uct_ud_ep_send_new(iface, ep, desc, id,
                                    sizeof(uct_ud_hdr_t) + hdr_len + length);
        if (status == UCS_OK) {
            uct_ud_ep_am_sent(iface, id, data, hdr_len + length);
        }
    }
    uct_ud_leave(iface);
    return status;
}

ucs_status_t uct_ud_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length)
{
    return uct_ud_ep_am_short_common(tl_ep, id, "am_short", &header, payload,
                                     NULL, 0, length);
}

ucs_status_t uct_ud_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt)
{
    return uct_ud_ep_am_short_common(tl_ep, id, "am_short_iov", NULL, NULL, iov,
                                     iovcnt, uct_iov_total_length(iov, iovcnt));
}

ssize_t uct_ud_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg,
                           unsigned flags)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    size_t max            = iface->config.seg_size - sizeof(uct_ud_hdr_t);
    uct_ud_send_desc_t *desc;
    ucs_status_t status;
    uint8_t *data;
    size_t length;

    (void)flags;
    status = uct_iface_check_am_id(&iface->super.super, id);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ud_enter(iface);
    desc = uct_ud_ep_tx_desc(iface, ep, &status);
    if (ucs_unlikely(desc == NULL)) {
        uct_ud_leave(iface);
        return status;
    }
    data   = (uint8_t *)(uct_ud_desc_hdr(desc) + 1);
    length = pack_cb(data, arg);
    if (ucs_unlikely(length > max)) {
        ucs_mpool_put(desc);
        uct_ud_leave(iface);
        return uct_iface_invalid_length(&iface->super.super, "am_bcopy", length,
                                        max);
    }
    status =
        uct_ud_ep_send_new(iface, ep, desc, id, sizeof(uct_ud_hdr_t) + length);
    if (status == UCS_OK) {
        uct_ud_ep_am_sent(iface, id, data, length);
    }
    uct_ud_leave(iface);
    return (status == UCS_OK) ? (ssize_t)length : status;
}

ucs_status_t uct_ud_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned flags,
                                uct_completion_t *comp)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    size_t max            = iface->config.seg_size - sizeof(uct_ud_hdr_t);
    uct_ud_send_desc_t *desc;
    size_t total, length;
    ucs_status_t status;
    int n;

    (void)flags;
    status = uct_ib_iface_check_am_zcopy(&iface->super, id, header_length,
                                         iovcnt, iface->config.max_iov - 1,
                                         UCT_UD_MAX_AM_HDR);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    total = header_length + uct_iov_total_length(iov, iovcnt);
    status =
        uct_iface_check_length(&iface->super.super, "am_zcopy", total, max);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ud_enter(iface);
    desc = uct_ud_ep_tx_desc(iface, ep, &status);
    if (ucs_unlikely(desc == NULL)) {
        goto out;
    }
    /* the user buffers are sent in place, and again on a resend: they
     * stay the user's until the completion */
    n = uct_ib_iov_to_sge(iov, iovcnt, desc->iov, iface->config.max_iov - 1,
                          &length);
    if (ucs_unlikely(n < 0)) {
        ucs_mpool_put(desc);
        status = uct_ib_iface_too_many_sges(&iface->super, "am_zcopy",
                                            iface->config.max_iov - 1);
        goto out;
    }
    desc->iovcnt = (uint8_t)n;
    desc->flags  = (n != 0) ? UCT_UD_DESC_FLAG_ZCOPY : 0;
    desc->comp   = comp;
    memcpy(uct_ud_desc_hdr(desc) + 1, header, header_length);
    status = uct_ud_ep_send_new(iface, ep, desc, id,
                                sizeof(uct_ud_hdr_t) + header_length);
    if (status == UCS_OK) {
        uct_iface_stat_am_tx(&iface->super.super, id, total);
        status = UCS_INPROGRESS;
    }
out:
    uct_ud_leave(iface);
    return status;
}

/* ------------------------------------------------------------------------
 * PUT, carried as a message and checked by the receiver's md
 */

static UCS_F_ALWAYS_INLINE uint8_t *
uct_ud_put_fill(uct_ud_send_desc_t *desc, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_ud_put_hdr_t put;

    put.address = remote_addr;
    put.rkey    = uct_ib_md_direct_rkey(rkey);
    memcpy(uct_ud_desc_hdr(desc) + 1, &put, sizeof(put));
    return (uint8_t *)(uct_ud_desc_hdr(desc) + 1) + sizeof(put);
}

ucs_status_t uct_ud_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    size_t hdrs           = sizeof(uct_ud_hdr_t) + sizeof(uct_ud_put_hdr_t);
    uct_ud_send_desc_t *desc;
    ucs_status_t status;

    status = uct_iface_check_length(&iface->super.super, "put_short", length,
                                    iface->config.seg_size - hdrs);
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }

    uct_ud_enter(iface);
    desc = uct_ud_ep_tx_desc(iface, ep, &status);
    if (ucs_likely(desc != NULL)) {
        memcpy(uct_ud_put_fill(desc, remote_addr, rkey), buffer, length);
        status =
            uct_ud_ep_send_new(iface, ep, desc, UCT_UD_PKT_PUT, hdrs + length);
        if (status == UCS_OK) {
            uct_iface_stat_put(&iface->super.super, length);
        }
    }
    uct_ud_leave(iface);
    return status;
}

ssize_t uct_ud_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    size_t hdrs           = sizeof(uct_ud_hdr_t) + sizeof(uct_ud_put_hdr_t);
    size_t max            = iface->config.seg_size - hdrs;
    uct_ud_send_desc_t *desc;
    ucs_status_t status;
    size_t length;

    uct_ud_enter(iface);
    desc = uct_ud_ep_tx_desc(iface, ep, &status);
    if (ucs_unlikely(desc == NULL)) {
        uct_ud_leave(iface);
        return status;
    }
    length = pack_cb(uct_ud_put_fill(desc, remote_addr, rkey), arg);
    if (ucs_unlikely(length > max)) {
        ucs_mpool_put(desc);
        uct_ud_leave(iface);
        return uct_iface_invalid_length(&iface->super.super, "put_bcopy",
                                        length, max);
    }
    status = uct_ud_ep_send_new(iface, ep, desc, UCT_UD_PKT_PUT, hdrs + length);
    if (status == UCS_OK) {
        uct_iface_stat_put(&iface->super.super, length);
    }
    uct_ud_leave(iface);
    return (status == UCS_OK) ? (ssize_t)length : status;
}

/* ------------------------------------------------------------------------
 * Acknowledgements owed
 */

void uct_ud_iface_queue_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    unsigned max;
    uct_ud_ep_t **eps;

    if (ep->flags & UCT_UD_EP_FLAG_ACK_Q) {
        return;
    }
    if (iface->acks.count == iface->acks.max) {
        max = ucs_max(16, iface->acks.max * 2);
        eps = realloc(iface->acks.eps, max * sizeof(*eps));
        if (eps == NULL) {
            return; /* the timer acknowledges it later */
        }
        iface->acks.eps = eps;
        iface->acks.max = max;
    }
    iface->acks.eps[iface->acks.count++] = ep;
    ep->flags |= UCT_UD_EP_FLAG_ACK_Q;
}

void uct_ud_iface_unqueue_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    unsigned i;

    if (!(ep->flags & UCT_UD_EP_FLAG_ACK_Q)) {
        return;
    }
    for (i = iface->acks.count; i-- > 0;) {
        if (iface->acks.eps[i] == ep) {
            iface->acks.eps[i] = iface->acks.eps[--iface->acks.count];
            break;
        }
    }
    ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_ACK_Q;
}

/* Sends the ACKs owed: @a all, or only those the peer waits for; asks
 * for the peer's ACK where completions wait for it: on each such ep when
 * @a all, else on those that sent no packet with a completion since the
 * last pass (a sender in a burst asks when it ends) */
void uct_ud_iface_send_acks(uct_ud_iface_t *iface, int all)
{
    unsigned i = 0;
    uct_ud_ep_t *ep;
    uint16_t waiting;
    int ask;

    while (i < iface->acks.count) {
        ep  = iface->acks.eps[i];
        ask = 0;
        if (ep->flags & UCT_UD_EP_FLAG_COMP_UNASKED) {
            ask = all || !(ep->flags & UCT_UD_EP_FLAG_COMP_RECENT);
            ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_COMP_RECENT;
        }
        waiting = (uint16_t)(ep->rx.expected - 1 - ep->rx.acked);
        /* a NAK waits for the timer: reordered packets fill most gaps
         * before it */
        if (!all && !ask && !(ep->rx_flags & UCT_UD_EP_RX_ACK_NOW) &&
            (waiting < iface->config.ack_thresh)) {
            ++i;
            continue;
        }
        if (uct_ud_ep_send_ack(iface, ep, ask) != UCS_OK) {
            return; /* no send slot: later */
        }
        /* sending removed it from the array (last one moved here), but for
         * completions still to ask for: the next pass asks */
        if ((i < iface->acks.count) && (iface->acks.eps[i] == ep)) {
            if (ep->flags & UCT_UD_EP_FLAG_COMP_UNASKED) {
                ++i;
            } else {
                uct_ud_iface_unqueue_ack(iface, ep);
            }
        }
    }
}
