/*
 * ud_verbs endpoints: life cycle, control packets, acknowledgements,
 * resends, the timer's looks, receive, failure, flush and pending
 * (connection requests and replies: ud_conn.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud.h"

#include <uct/base/uct_vfs.h>
#include <ucs/time/time.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

ucs_status_t uct_ud_ep_alloc(uct_ud_iface_t *iface, uct_ud_ep_t **ep_p)
{
    ucs_status_t status;
    uct_ud_ep_t *ep;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("ud_verbs iface %s: no memory for an endpoint",
                  iface->super.super.dev_name);
        return UCS_ERR_NO_MEMORY;
    }
    ep->super.super.iface = &iface->super.super.super;
    ep->unacked.last      = NULL;
    uct_pending_group_init(&ep->pending);
    ucs_list_head_init(&ep->active);
    ep->dest_id     = UCT_UD_EP_ID_NONE;
    ep->tx.psn      = 1;
    ep->tx.acked    = 0;
    ep->tx.resend   = 1;
    ep->rx.expected = 1;
    ep->rx.acked    = 0;
    status          = uct_ud_iface_add_ep(iface, ep);
    if (status != UCS_OK) {
        free(ep);
        return status;
    }
    uct_base_ep_init(&ep->super, &iface->super.super);
    *ep_p = ep;
    return UCS_OK;
}

void uct_ud_ep_activate(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    /* an ep whose CREQ waits is on the waiting list (by the same link);
     * it becomes active when its CREQ goes out */
    if (!(ep->flags & (UCT_UD_EP_FLAG_ACTIVE | UCT_UD_EP_FLAG_CREQ_WAIT))) {
        ucs_list_add_tail(&iface->active, &ep->active);
        ep->flags |= UCT_UD_EP_FLAG_ACTIVE;
    }
}

void uct_ud_ep_free(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uct_ud_send_desc_t *desc;

    if (ep->flags & UCT_UD_EP_FLAG_PRIVATE) {
        --iface->eps.num_private;
    }
    if (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) {
        --iface->eps.num_zombies; /* its base part went with the user */
    } else {
        uct_base_ep_cleanup(&ep->super);
    }
    uct_ud_ep_creq_end(iface, ep);
    uct_ud_ep_deactivate(ep);
    uct_ud_iface_unqueue_ack(iface, ep);
    uct_ud_iface_conn_remove(iface, ep);
    uct_ud_iface_ooo_drop_ep(iface, ep);
    uct_ud_iface_remove_ep(iface, ep);
    while (!uct_ud_desc_queue_is_empty(&ep->unacked)) {
        desc = uct_ud_desc_queue_pull(&ep->unacked);
        uct_ud_iface_desc_done(iface, desc);
    }
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_pending_group_cleanup(&ep->pending);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Control packets: CREQ, CREP, ACK, NAK
 */

/* Posts a control packet of @a length bytes at @a buf (inline when it
 * fits, else from a descriptor) */
ucs_status_t uct_ud_iface_send_ctl(uct_ud_iface_t *iface, uct_ud_ah_t *ah,
                                   uint32_t qpn, const void *buf, size_t length,
                                   int solicited)
{
    uct_ud_send_desc_t *desc = NULL;
    struct ibv_sge sge;
    ucs_status_t status;

    if (iface->tx.available <= 0) {
        ++iface->stats.tx_no_slot;
        return UCS_ERR_NO_RESOURCE;
    }
    if (length <= iface->config.max_inline) {
        sge.addr = (uintptr_t)buf;
        sge.lkey = 0;
    } else {
        desc = ucs_mpool_get(&iface->tx_mp);
        if (desc == NULL) {
            ++iface->stats.tx_no_slot;
            return UCS_ERR_NO_RESOURCE;
        }
        memcpy(uct_ud_desc_hdr(desc), buf, length);
        desc->flags  = 0;
        desc->wqe_sn = iface->tx.sn;
        sge.addr     = (uintptr_t)uct_ud_desc_hdr(desc);
        sge.lkey     = desc->lkey;
    }
    sge.length = (uint32_t)length;
    status = uct_ud_iface_post(iface, ah, qpn, &sge, 1, desc == NULL, solicited,
                               desc != NULL);
    if (desc != NULL) {
        if (status == UCS_OK) {
            uct_ud_iface_desc_done(iface, desc);
        } else {
            ucs_mpool_put(desc);
        }
    }
    return status;
}

/* Which of the 64 packets after the first missing one are held */
static uint64_t uct_ud_ep_held_map(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uint64_t map = 0;
    unsigned i;

    for (i = 0; (i < 64) && (ep->rx.ooo != 0); ++i) {
        if (uct_ud_iface_ooo_has(iface, ep->id,
                                 (uint16_t)(ep->rx.expected + 1 + i))) {
            map |= UCS_BIT(i);
        }
    }
    return map;
}

ucs_status_t uct_ud_ep_send_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep, int ask)
{
    int nak = (ep->rx_flags & UCT_UD_EP_RX_NAK) && (ep->rx.ooo != 0);
    uint8_t type;
    struct {
        uct_ud_hdr_t hdr;
        uint64_t map;
    } UCS_S_PACKED pkt;
    ucs_status_t status;

    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED) || (ep->ah == NULL)) {
        uct_ud_iface_unqueue_ack(iface, ep);
        return UCS_OK;
    }
    if (iface->tx.available <= 0) {
        ++iface->stats.tx_no_slot;
        return UCS_ERR_NO_RESOURCE;
    }
    if (nak) {
        pkt.map = uct_ud_ep_held_map(iface, ep);
    }
    /* a NAK carries no ACK_REQ (the peer drops it): the request goes
     * with the next pass (the ep stays queued for it) */
    ask  = ask && !nak;
    type = nak ? UCT_UD_PKT_NAK : UCT_UD_PKT_ACK;
    if (ask) {
        type |= UCT_UD_PKT_FLAG_ACK_REQ;
    }
    uct_ud_ep_fill_hdr(iface, ep, &pkt.hdr, type, 0);
    status = uct_ud_iface_send_ctl(iface, ep->ah, ep->dest_qpn, &pkt,
                                   nak ? sizeof(pkt) : sizeof(pkt.hdr), ask);
    if (status == UCS_OK) {
        ep->rx_flags &= (uint8_t) ~(UCT_UD_EP_RX_ACK_NOW | UCT_UD_EP_RX_NAK);
        ++iface->stats.tx_acks;
        if (ask) {
            ++iface->stats.tx_ack_reqs;
            ep->flags &= (uint16_t) ~(UCT_UD_EP_FLAG_COMP_UNASKED |
                                      UCT_UD_EP_FLAG_COMP_RECENT);
            ep->rx_flags |= UCT_UD_EP_TX_ACK_REQ_SENT;
        }
    }
    return status;
}

/* A DISC (our ep is gone) or its reply, to @a ep's peer ep */
ucs_status_t uct_ud_ep_send_disc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                 uint8_t type)
{
    struct {
        uct_ud_hdr_t hdr;
        uct_ud_disc_t disc;
    } UCS_S_PACKED pkt;

    memset(&pkt.disc, 0, sizeof(pkt.disc));
    uct_ud_ep_fill_hdr(iface, ep, &pkt.hdr, type, 0);
    uct_ud_u24_set(pkt.disc.src_id, ep->id);
    return uct_ud_iface_send_ctl(iface, ep->ah, ep->dest_qpn, &pkt, sizeof(pkt),
                                 0);
}

/* A pure ACK that asks the peer for its own ACK (flush, probe); whether it
 * went out */
static int uct_ud_ep_send_ack_req(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uct_ud_hdr_t hdr;

    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        return 0;
    }
    if (iface->tx.available <= 1) {
        ++iface->stats.tx_no_slot;
        return 0;
    }
    uct_ud_ep_fill_hdr(iface, ep, &hdr,
                       UCT_UD_PKT_ACK | UCT_UD_PKT_FLAG_ACK_REQ, 0);
    return uct_ud_iface_send_ctl(iface, ep->ah, ep->dest_qpn, &hdr, sizeof(hdr),
                                 1) == UCS_OK;
}

/* A DISC: the peer's ep is gone. An ep that a peer's request made goes
 * too; a user's ep stays (sending on it fails after the timeout). A
 * DISC_REP: the peer took our DISC, so this zombie goes. */
static void uct_ud_ep_rx_disc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                              uint8_t type, const void *packet)
{
    const uct_ud_disc_t *disc =
        (const uct_ud_disc_t *)((const uct_ud_hdr_t *)packet + 1);

    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED) ||
        (uct_ud_u24_get(disc->src_id) != ep->dest_id)) {
        ++iface->stats.rx_dropped;
        ucs_warn_limited(&iface->proto_log,
                         "ud_verbs iface %s: dropped a "
                         "disconnect for ep %u from qp 0x%x ep %u, which "
                         "is not its peer",
                         iface->super.super.dev_name, ep->id, ep->dest_qpn,
                         uct_ud_u24_get(disc->src_id));
        return;
    }
    if (type == UCT_UD_PKT_DISC_REP) {
        if (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) {
            uct_ud_ep_free(iface, ep);
        }
        return;
    }
    ++iface->stats.disc_rx;
    /* if the reply is lost, the peer asks again */
    (void)uct_ud_ep_send_disc(iface, ep, UCT_UD_PKT_DISC_REP);
    if (ep->flags & (UCT_UD_EP_FLAG_PRIVATE | UCT_UD_EP_FLAG_ZOMBIE)) {
        /* what it took is delivered without it (dispatch_async_rx) */
        uct_ud_ep_free(iface, ep);
    }
}

/* ------------------------------------------------------------------------
 * Acknowledgements and resends
 */

/* The ACK of packets that went once, the first at ep->ack_time: a sample
 * of the time peers take to acknowledge (as TCP's, RFC 6298). No clock
 * is read here: times are those of the timer's sweeps, which resolve
 * ack_time and set tick_now, so the sample is short by up to a tick on
 * either side, and one TIMER_TICK is added (long rather than short: a
 * short estimate sends again what a loaded peer merely has not
 * acknowledged yet, and loads it more). A fresh sample ends the doubling
 * of the first wait. */
static void uct_ud_iface_data_rtt_sample(uct_ud_iface_t *iface,
                                         const uct_ud_ep_t *ep)
{
    ucs_time_t rtt = iface->config.timer_tick;

    if ((ep->ack_time != UCT_UD_TIME_AT_SWEEP) && (iface->tick_now != 0)) {
        rtt += uct_ud_iface_since(iface, ep->ack_time, iface->tick_now);
    }
    iface->data.backoff = 0;
    uct_ud_rtt_update(&iface->data.srtt, &iface->data.rttvar, rtt);
}

/* Retires every packet up to @a ack_psn */
static void uct_ud_ep_process_ack(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                  uint16_t ack_psn, int async)
{
    uct_ud_send_desc_t *desc;
    ucs_status_t status;

    /* no news, or an ACK of packets never sent (ignored) */
    if (!uct_ud_psn_lt(ep->tx.acked, ack_psn) ||
        !uct_ud_psn_lt(ack_psn, ep->tx.psn)) {
        return;
    }
    ep->tx.acked = ack_psn;
    if (uct_ud_psn_lt(ep->tx.resend, (uint16_t)(ack_psn + 1))) {
        ep->tx.resend = (uint16_t)(ack_psn + 1);
    }
    ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_ACK_REQ_SENT;
    if (ucs_unlikely(ep->flags & UCT_UD_EP_FLAG_COMP_UNASKED) &&
        ((uint16_t)(ack_psn + 1) == ep->tx.psn)) {
        /* acknowledged without asking: nothing left to ask for */
        ep->flags &= (uint16_t) ~(UCT_UD_EP_FLAG_COMP_UNASKED |
                                  UCT_UD_EP_FLAG_COMP_RECENT);
        if (!(ep->rx_flags & (UCT_UD_EP_RX_ACK_NOW | UCT_UD_EP_RX_NAK)) &&
            (ep->rx.acked == (uint16_t)(ep->rx.expected - 1))) {
            uct_ud_iface_unqueue_ack(iface, ep);
        }
    }
    if (ep->rx_flags & UCT_UD_EP_TX_TIMED) {
        ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_TIMED;
        uct_ud_iface_data_rtt_sample(iface, ep);
    }
    ep->tx.backoff = 0;
    ep->ack_time   = UCT_UD_TIME_AT_SWEEP;

    while (!uct_ud_desc_queue_is_empty(&ep->unacked)) {
        desc = uct_ud_desc_queue_first(&ep->unacked);
        if (!uct_ud_psn_le(desc->psn, ack_psn)) {
            break;
        }
        (void)uct_ud_desc_queue_pull(&ep->unacked);
        if (desc->comp == NULL) {
            uct_ud_iface_desc_done(iface, desc);
            continue;
        }
        status = UCS_OK;
        if ((desc->flags & UCT_UD_DESC_FLAG_MARKER) &&
            (ep->rx_flags & UCT_UD_EP_TX_DENIED)) {
            ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_DENIED;
            status = UCS_ERR_INVALID_ADDR;
        }
        if (async || !ucs_queue_is_empty(&iface->async_comps)) {
            /* completions run from progress, in order after those the
             * async context queued */
            desc->status = (int8_t)status;
            ucs_queue_push(&iface->async_comps, &desc->queue);
        } else {
            uct_invoke_completion(desc->comp, status);
            uct_ud_iface_desc_done(iface, desc);
        }
    }
    uct_ud_ep_schedule(iface, ep);
}

ucs_status_t uct_ud_ep_post_desc(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                 uct_ud_send_desc_t *desc, int resend)
{
    struct ibv_sge sge[UCT_UD_MAX_ZCOPY_IOV + 1];
    uct_ud_hdr_t *hdr = uct_ud_desc_hdr(desc);
    uint16_t ack_psn;
    int inl, n = 1;
    unsigned i;
    uint8_t type;

    uct_ud_u24_set(hdr->dest_id, ep->dest_id); /* unknown before a CREP */
    if (resend) {
        /* fresh acknowledgement, and ask for one back */
        ack_psn = (uint16_t)(ep->rx.expected - 1);
        memcpy(&hdr->ack_psn, &ack_psn, sizeof(ack_psn));
        ep->rx.acked = ack_psn;
        type         = hdr->type | UCT_UD_PKT_FLAG_ACK_REQ;
        hdr->type    = type;
        /* this asks for every completion before it */
        ep->flags &= (uint16_t) ~(UCT_UD_EP_FLAG_COMP_UNASKED |
                                  UCT_UD_EP_FLAG_COMP_RECENT);
        uct_ud_iface_unqueue_ack(iface, ep);
    }
    sge[0].addr   = (uintptr_t)hdr;
    sge[0].length = desc->length;
    sge[0].lkey   = desc->lkey;
    for (i = 0; i < desc->iovcnt; ++i) {
        sge[n++] = desc->iov[i];
    }
    inl = (desc->iovcnt == 0) && (desc->length <= iface->config.max_inline);
    if (inl) {
        desc->flags |= UCT_UD_DESC_FLAG_INLINE;
    } else {
        desc->flags &= (uint8_t)~UCT_UD_DESC_FLAG_INLINE;
        desc->wqe_sn = iface->tx.sn;
    }
    return uct_ud_iface_post(iface, ep->ah, ep->dest_qpn, sge, n, inl,
                             hdr->type & UCT_UD_PKT_FLAG_ACK_REQ, !inl);
}

void uct_ud_ep_resend(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uct_ud_send_desc_t *desc;

    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        return; /* kept until the CREP */
    }

    uct_ud_desc_queue_for_each(desc, &ep->unacked)
    {
        if ((desc->flags & UCT_UD_DESC_FLAG_MARKER) ||
            uct_ud_psn_lt(desc->psn, ep->tx.resend)) {
            continue;
        }
        if ((iface->tx.available <= 1) ||
            (uct_ud_ep_post_desc(iface, ep, desc, 1) != UCS_OK)) {
            /* continued by progress when send slots come back */
            iface->resend_blocked = 1;
            return;
        }
        if (desc->flags & UCT_UD_DESC_FLAG_KEPT) {
            desc->flags &= (uint8_t)~UCT_UD_DESC_FLAG_KEPT; /* first send */
        } else {
            ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_TIMED;
            ++iface->stats.tx_resent;
            uct_iface_stat_tx_retry(&iface->super.super);
        }
        ep->tx.resend = (uint16_t)(desc->psn + 1);
    }
    ep->tx.resend = ep->tx.psn;
    uct_ud_ep_schedule(iface, ep); /* new sends may go again */
}

/* A NAK: resend the first packet the peer misses, and those of the next
 * 64 its map says it does not hold either */
static void uct_ud_ep_resend_missing(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                     const void *packet)
{
    uint16_t first = (uint16_t)(ep->tx.acked + 1);
    uct_ud_send_desc_t *desc;
    uint16_t offset;
    uint64_t map;

    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED) ||
        (ep->tx.resend != ep->tx.psn)) {
        return; /* a full resend is going on */
    }
    memcpy(&map, (const uct_ud_hdr_t *)packet + 1, sizeof(map));
    uct_ud_desc_queue_for_each(desc, &ep->unacked)
    {
        if (desc->flags & UCT_UD_DESC_FLAG_MARKER) {
            continue;
        }
        offset = (uint16_t)(desc->psn - first);
        if (offset > 64) {
            break;
        }
        if ((offset != 0) && (map & UCS_BIT(offset - 1))) {
            continue; /* the peer holds it */
        }
        if ((iface->tx.available <= 1) ||
            (uct_ud_ep_post_desc(iface, ep, desc, 1) != UCS_OK)) {
            break; /* the timer resends the rest */
        }
        ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_TIMED;
        ++iface->stats.tx_resent;
        uct_iface_stat_tx_retry(&iface->super.super);
    }
}

/* The first wait for an acknowledgement: RESEND_TIMEOUT, or longer when
 * the acknowledgements of data sent once (before any, the replies to
 * this interface's CREQs) show that peers answer slower (a loaded
 * target, a slow fabric): packets are not sent again while their
 * acknowledgement is merely late. Doubled for each ep's first resend
 * since the last sample: when a loaded peer's acknowledgements come late
 * for many eps at once, the later ones wait longer instead of all
 * sending again (what a storm of resends does to a receive queue that
 * many peers share: more drops, more resends). Capped as the resends'
 * wait. */
ucs_time_t uct_ud_iface_data_rto(const uct_ud_iface_t *iface)
{
    ucs_time_t rto = iface->config.resend_timeout;

    if (iface->data.srtt != 0) {
        rto = ucs_max(rto, 2 * iface->data.srtt + 4 * iface->data.rttvar);
    } else if (iface->creq.srtt != 0) {
        rto = ucs_max(rto, 2 * iface->creq.srtt + 4 * iface->creq.rttvar);
    }
    rto <<= iface->data.backoff;
    return ucs_min(rto, uct_ud_iface_max_wait(iface));
}

/* The wait before the next resend, doubled at each one up to a quarter
 * of TIMEOUT */
void uct_ud_ep_backoff(uct_ud_iface_t *iface, uct_ud_ep_t *ep, ucs_time_t now)
{
    ucs_time_t wait;

    wait = uct_ud_iface_data_rto(iface) << ucs_min(ep->tx.backoff, 16);
    wait = ucs_min(wait, uct_ud_iface_max_wait(iface));
    ep->resend_time = uct_ud_iface_stamp(iface, now + wait);
    if (ep->tx.backoff < 16) {
        ++ep->tx.backoff;
    }
}

/* A zombie repeats its DISC (or its CREQ, before the peer answered) until
 * the peer replies, for at most TIMEOUT */
static void uct_ud_ep_zombie_timer(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                   ucs_time_t now)
{
    ucs_status_t status;

    if (uct_ud_iface_since(iface, ep->ack_time, now) > iface->config.timeout) {
        uct_ud_ep_free(iface, ep);
        return;
    }
    if (uct_ud_iface_before(iface, now, ep->resend_time)) {
        return;
    }
    if (ep->flags & UCT_UD_EP_FLAG_CONNECTED) {
        status = uct_ud_ep_send_disc(iface, ep, UCT_UD_PKT_DISC);
    } else {
        status = uct_ud_ep_send_creq(iface, ep);
    }
    if (status == UCS_OK) {
        /* one that found no send slot tries again at the next tick: many
         * eps destroyed at once must not wait out growing waits */
        uct_ud_ep_backoff(iface, ep, now);
    }
}

int uct_ud_ep_idle_visit(uct_ud_iface_t *iface, uct_ud_ep_t *ep, ucs_time_t now)
{
    ucs_time_t period = iface->config.timeout / UCT_UD_IDLE_LOOKS;
    unsigned looks    = uct_ud_ep_idle_probes(ep);
    uct_ud_ah_peer_t *peer;
    ucs_time_t since;

    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        ++iface->stats.peer_reclaimed;
        uct_ud_ep_free(iface, ep);
        return 1;
    }
    peer = (ep->ah != NULL) ? uct_ud_ah_peer(ep->ah, ep->dest_qpn, 0) : NULL;
    if (ep->rx_flags & UCT_UD_EP_RX_SEEN) {
        ep->rx_flags &= (uint8_t)~UCT_UD_EP_RX_SEEN;
        uct_ud_ep_set_idle_probes(ep, 0);
        if (peer != NULL) {
            peer->seen = uct_ud_iface_stamp(iface, now);
        }
        return 0;
    }
    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED) ||
        (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) ||
        !uct_ud_desc_queue_is_empty(&ep->unacked)) {
        return 0; /* the resend timeout watches it */
    }
    if ((peer != NULL) && (peer->seen != 0)) {
        since = uct_ud_iface_since(iface, peer->seen, now) / period;
        if (since < UCT_UD_IDLE_QUIET) {
            /* its peer interface spoke lately, on another of its eps:
             * the process lives, and would have said if this ep went;
             * the ep is as quiet as the peer (so that once the peer is
             * quiet too, its probes start at once) */
            uct_ud_ep_set_idle_probes(ep, (unsigned)since);
            return 0;
        }
        looks = ucs_max(looks, UCT_UD_IDLE_QUIET); /* both quiet */
    }
    if (looks < UCT_UD_IDLE_QUIET) {
        /* quiet, not yet asked */
        uct_ud_ep_set_idle_probes(ep, looks + 1);
        return 0;
    }
    if (looks >= UCT_UD_IDLE_QUIET + UCT_UD_IDLE_PROBES) {
        ++iface->stats.peer_reclaimed;
        uct_ud_ep_free(iface, ep);
        return 1;
    }
    if ((peer != NULL) &&
        (looks + 1 < UCT_UD_IDLE_QUIET + UCT_UD_IDLE_PROBES) &&
        (peer->probed != 0) &&
        (uct_ud_iface_since(iface, peer->probed, now) < period)) {
        /* the peer was probed in this period, on another of its eps:
         * its answer (at that ep's next look) speaks for all */
        uct_ud_ep_set_idle_probes(ep, looks + 1);
        return 0;
    }
    /* only a probe that went out counts: without a send slot, or while
     * data needs half the send queue, the next look tries again (a live
     * peer is never freed unasked, and probes never crowd out data) */
    if ((iface->tx.available > (int)(iface->config.tx_queue_len / 2)) &&
        uct_ud_ep_send_ack_req(iface, ep)) {
        uct_ud_ep_set_idle_probes(ep, looks + 1);
        ++iface->stats.idle_probes;
        if (peer != NULL) {
            peer->probed = uct_ud_iface_stamp(iface, now);
        }
    }
    return 0;
}

void uct_ud_ep_timer(uct_ud_iface_t *iface, uct_ud_ep_t *ep, ucs_time_t now)
{
    if (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) {
        uct_ud_ep_zombie_timer(iface, ep, now);
        return;
    }
    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        uct_ud_ep_deactivate(ep);
        return;
    }
    if (ep->ack_time == UCT_UD_TIME_AT_SWEEP) {
        /* sent to an idle peer, or acknowledged, since the last sweep:
         * the waits start now, so they are never shorter than set */
        ep->ack_time = uct_ud_iface_stamp(iface, now);
        ep->resend_time =
            uct_ud_iface_stamp(iface, now + uct_ud_iface_data_rto(iface));
    }
    if ((ep->flags & UCT_UD_EP_FLAG_CREQ) ||
        !uct_ud_desc_queue_is_empty(&ep->unacked)) {
        if (uct_ud_iface_since(iface, ep->ack_time, now) >
            iface->config.timeout) {
            iface->timeouts_due = 1; /* failed from progress */
            return;
        }
    } else {
        uct_ud_ep_deactivate(ep);
        return;
    }
    if (uct_ud_iface_before(iface, now, ep->resend_time)) {
        return;
    }

    if (ep->flags & UCT_UD_EP_FLAG_CREQ) {
        uct_ud_ep_creq_timer(iface, ep, now);
        return;
    }
    if (ep->tx.backoff == 0) { /* the first resend of this flight */
        if (iface->data.backoff < UCT_UD_DATA_BACKOFF_MAX) {
            ++iface->data.backoff;
        }
        uct_ud_iface_creq_cwnd_cut(iface, ep, ep->ack_time, now);
    }
    ep->tx.resend = (uint16_t)(ep->tx.acked + 1);
    uct_ud_ep_resend(iface, ep);
    uct_ud_ep_backoff(iface, ep, now);
}

/* ------------------------------------------------------------------------
 * Receive
 */

int uct_ud_ep_deliver(uct_ud_iface_t *iface, uct_ud_ep_t *ep, uint8_t type,
                      void *obj, void *packet, unsigned hdr_len,
                      unsigned length)
{
    void *payload     = (uint8_t *)packet + hdr_len;
    unsigned data_len = length - hdr_len;
    uct_ud_put_hdr_t put;
    ucs_status_t status;
    uct_ib_md_t *md;

    if (ucs_likely(type < UCT_AM_ID_MAX)) {
        if (ucs_unlikely(iface->super.super.am_tracer != NULL)) {
            uct_iface_trace_am(&iface->super.super, UCT_AM_TRACE_TYPE_RECV,
                               type, payload, data_len);
        }
        uct_rx_desc_set_release(&iface->rx_layout, obj,
                                &iface->rx_release.super);
        status = uct_iface_invoke_am(&iface->super.super, type, payload,
                                     data_len, UCT_CB_PARAM_FLAG_DESC);
        return status == UCS_INPROGRESS;
    }

    /* a PUT: only into a live region of our md that grants remote writes */
    memcpy(&put, (uct_ud_hdr_t *)packet + 1, sizeof(put));
    md = uct_ib_iface_md(&iface->super);
    if (uct_ib_md_access_begin(md, put.rkey, put.address, data_len,
                               IBV_ACCESS_REMOTE_WRITE) == UCS_OK) {
        memcpy((void *)(uintptr_t)put.address, payload, data_len);
        uct_ib_md_access_end(md);
        return 0;
    }
    ++iface->stats.put_denied;
    ucs_warn_limited(&iface->proto_log,
                     "ud_verbs iface %s: refused a "
                     "%u-byte PUT to 0x%" PRIx64 " with key 0x%x from qp "
                     "0x%x: no such registered region with remote write "
                     "access",
                     iface->super.super.dev_name, data_len, put.address,
                     put.rkey, ep->dest_qpn);
    ep->rx_flags |= UCT_UD_EP_RX_DENIED | UCT_UD_EP_RX_ACK_NOW;
    uct_ud_iface_queue_ack(iface, ep);
    return 0;
}

void uct_ud_ep_rx(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                  const uct_ud_pkt_info_t *info, void *obj, void *packet,
                  unsigned length, int async)
{
    uct_ud_rx_desc_t *rdesc;
    uint32_t ep_id;

    if (ucs_unlikely(ep->flags &
                     (UCT_UD_EP_FLAG_FAILED | UCT_UD_EP_FLAG_ZOMBIE))) {
        if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
            ucs_mpool_put(obj);
            return;
        }
        /* a zombie takes only the answers it waits for */
        if (info->type == UCT_UD_PKT_CREP) {
            uct_ud_ep_rx_crep(iface, ep, packet);
        } else if ((info->type == UCT_UD_PKT_DISC) ||
                   (info->type == UCT_UD_PKT_DISC_REP)) {
            uct_ud_ep_rx_disc(iface, ep, info->type, packet);
        } else {
            ++iface->stats.rx_dropped;
            ++iface->stats.rx_stale;
        }
        goto out_put;
    }
    ep->rx_flags |= UCT_UD_EP_RX_SEEN;
    if (info->flags & UCT_UD_PKT_FLAG_DENIED) {
        ep->rx_flags |= UCT_UD_EP_TX_DENIED;
    }
    if (ep->flags & UCT_UD_EP_FLAG_CONNECTED) {
        uct_ud_ep_process_ack(iface, ep, info->ack_psn, async);
    }

    switch (info->type) {
    case UCT_UD_PKT_CREP:
        uct_ud_ep_rx_crep(iface, ep, packet);
        goto out_put;
    case UCT_UD_PKT_DISC:
    case UCT_UD_PKT_DISC_REP:
        uct_ud_ep_rx_disc(iface, ep, info->type, packet);
        goto out_put;
    case UCT_UD_PKT_NAK:
        uct_ud_ep_resend_missing(iface, ep, packet);
        /* fall through */
    case UCT_UD_PKT_ACK:
        if (info->flags & UCT_UD_PKT_FLAG_ACK_REQ) {
            ep->rx_flags |= UCT_UD_EP_RX_ACK_NOW;
            uct_ud_iface_queue_ack(iface, ep);
        }
        goto out_put;
    default:
        break;
    }

    if (ucs_unlikely(!(ep->flags & UCT_UD_EP_FLAG_CONNECTED))) {
        /* CONNECT_TO_EP before our side connected: the peer resends */
        ++iface->stats.rx_dropped;
        goto out_put;
    }
    rdesc          = obj;
    rdesc->ep_id   = ep->id;
    rdesc->psn     = info->psn;
    rdesc->type    = info->type;
    rdesc->hdr_len = (uint8_t)info->hdr_len;
    rdesc->length  = length;
    if (info->flags & UCT_UD_PKT_FLAG_ACK_REQ) {
        ep->rx_flags |= UCT_UD_EP_RX_ACK_NOW;
    }

    if (ucs_unlikely(info->psn != ep->rx.expected)) {
        if (uct_ud_psn_lt(info->psn, ep->rx.expected)) {
            ++iface->stats.rx_dup;
            ep->rx_flags |= UCT_UD_EP_RX_ACK_NOW;
        } else if (((uint16_t)(info->psn - ep->rx.expected) <
                    UCT_UD_TX_WINDOW_MAX) &&
                   (uct_ud_iface_ooo_add(iface, ep, rdesc) == UCS_OK)) {
            /* held until the gap before it fills */
            ++iface->stats.rx_ooo;
            ep->rx_flags |= UCT_UD_EP_RX_NAK;
            uct_ud_iface_queue_ack(iface, ep);
            return;
        } else {
            /* held already, its peer holds its share, or no room */
            ++iface->stats.rx_dropped;
        }
        uct_ud_iface_queue_ack(iface, ep);
        goto out_put;
    }

    uct_ud_iface_queue_ack(iface, ep);
    ep_id = ep->id;
    for (;;) {
        ++ep->rx.expected;
        if (async && (rdesc->type < UCT_AM_ID_MAX)) {
            /* the handler runs from progress; a PUT is applied here,
             * before the acknowledgement that covers it says it landed */
            ucs_queue_push(&iface->async_rx, &rdesc->queue);
        } else if (!uct_ud_ep_deliver(iface, ep, rdesc->type, rdesc,
                                      (uint8_t *)uct_rx_desc_recv_buf(
                                          &iface->rx_layout, rdesc) +
                                          UCT_UD_GRH_LEN,
                                      rdesc->hdr_len, rdesc->length)) {
            ucs_mpool_put(rdesc);
        }
        /* the handler may have destroyed the ep: look it up again */
        if (uct_ud_iface_ep(iface, ep_id) != ep) {
            return;
        }
        if (ep->rx.ooo == 0) {
            break;
        }
        rdesc = uct_ud_iface_ooo_take(iface, ep, ep->rx.expected);
        if (rdesc == NULL) {
            break;
        }
    }
    if (ep->rx.ooo == 0) {
        ep->rx_flags &= (uint8_t)~UCT_UD_EP_RX_NAK;
    }
    return;

out_put:
    ucs_mpool_put(obj);
}

/* ------------------------------------------------------------------------
 * Failure, flush, pending
 */

void uct_ud_ep_set_failed(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                          ucs_status_t status, int silent)
{
    uct_ud_send_desc_t *desc;

    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        return;
    }
    if (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) {
        uct_ud_ep_free(iface, ep); /* nobody waits for it */
        return;
    }
    ep->flags |= UCT_UD_EP_FLAG_FAILED;
    uct_ud_ep_creq_end(iface, ep);
    ep->status = (int8_t)status;
    uct_ud_ep_deactivate(ep);
    uct_ud_iface_unqueue_ack(iface, ep);
    uct_ud_iface_ooo_drop_ep(iface, ep);
    while (!uct_ud_desc_queue_is_empty(&ep->unacked)) {
        desc = uct_ud_desc_queue_pull(&ep->unacked);
        if (desc->comp != NULL) {
            uct_invoke_completion(desc->comp, status);
        }
        uct_ud_iface_desc_done(iface, desc);
    }
    if (silent || (ep->flags & UCT_UD_EP_FLAG_PRIVATE)) {
        ep->flags |= UCT_UD_EP_FLAG_ERR_SENT;
        return;
    }
    ep->flags |= UCT_UD_EP_FLAG_ERR_SENT;
    /* the handler may destroy the ep */
    uct_iface_handle_ep_err(&iface->super.super.super, &ep->super.super,
                            status);
}

/* A destroyed ep that the peer may know stays as a zombie: it sends DISC
 * so that an ep the peer made for it goes too (else every peer that
 * connects and leaves would cost the target an ep for ever). What it had
 * not sent or not seen acknowledged is dropped, as uct_ep_destroy says. */
static int uct_ud_ep_make_zombie(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    uct_ud_send_desc_t *desc;
    ucs_time_t now;

    if ((ep->flags & (UCT_UD_EP_FLAG_FAILED | UCT_UD_EP_FLAG_CREQ_WAIT)) ||
        !(ep->flags & (UCT_UD_EP_FLAG_CONNECTED | UCT_UD_EP_FLAG_CREQ))) {
        return 0; /* the peer does not know it */
    }
    uct_base_ep_cleanup(&ep->super);
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_ud_iface_ooo_drop_ep(iface, ep);
    if (ep->flags & UCT_UD_EP_FLAG_CONNECTED) {
        /* a later request from the peer makes a new ep (a zombie that
         * still waits for its CREP stays findable by it) */
        uct_ud_iface_conn_remove(iface, ep);
    }
    while (!uct_ud_desc_queue_is_empty(&ep->unacked)) {
        desc = uct_ud_desc_queue_pull(&ep->unacked);
        uct_ud_iface_desc_done(iface, desc);
    }
    ep->flags |= UCT_UD_EP_FLAG_ZOMBIE; /* a user's: not private */
    ++iface->eps.num_zombies;
    ep->tx.resend   = ep->tx.psn;
    ep->tx.backoff  = 0;
    now             = ucs_get_time();
    ep->ack_time    = uct_ud_iface_stamp(iface, now);
    ep->resend_time = ep->ack_time;
    if ((ep->flags & UCT_UD_EP_FLAG_CONNECTED) &&
        (uct_ud_ep_send_disc(iface, ep, UCT_UD_PKT_DISC) == UCS_OK)) {
        uct_ud_ep_backoff(iface, ep, now);
    }
    uct_ud_ep_activate(iface, ep); /* the timer repeats it */
    return 1;
}

void uct_ud_ep_destroy(uct_ep_h tl_ep)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);

    uct_ud_enter(iface);
    if (!uct_ud_ep_make_zombie(iface, ep)) {
        uct_ud_ep_free(iface, ep);
    }
    uct_ud_leave(iface);
}

/* UCS_ERR_INVALID_ADDR once after the peer refused a PUT, else UCS_OK */
static ucs_status_t uct_ud_ep_take_denied(uct_ud_ep_t *ep)
{
    if (!(ep->rx_flags & UCT_UD_EP_TX_DENIED)) {
        return UCS_OK;
    }
    ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_DENIED;
    return UCS_ERR_INVALID_ADDR;
}

ucs_status_t uct_ud_iface_flush_after_async(uct_ud_iface_t *iface,
                                            uct_completion_t *comp,
                                            ucs_status_t status)
{
    uct_ud_send_desc_t *marker;

    if (ucs_queue_is_empty(&iface->async_comps)) {
        return status;
    }
    if (comp == NULL) {
        return UCS_INPROGRESS; /* the caller progresses and asks again */
    }
    marker = ucs_mpool_get(&iface->marker_mp);
    if (marker == NULL) {
        return UCS_ERR_NO_RESOURCE;
    }
    marker->flags  = UCT_UD_DESC_FLAG_MARKER;
    marker->comp   = comp;
    marker->status = (int8_t)status;
    marker->iovcnt = 0;
    ucs_queue_push(&iface->async_comps, &marker->queue);
    return UCS_INPROGRESS;
}

ucs_status_t uct_ud_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    uct_ud_send_desc_t *marker;
    ucs_status_t status;

    uct_ud_enter(iface);
    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        /* what it had completed with this status already */
        status = (ucs_status_t)ep->status;
        goto out;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        /* everything unacknowledged completes with UCS_ERR_CANCELED; the
         * ep cannot send any more (no error handler call) */
        uct_ud_ep_set_failed(iface, ep, UCS_ERR_CANCELED, 1);
    }
    if (uct_ud_desc_queue_is_empty(&ep->unacked)) {
        if (!ucs_queue_is_empty(&iface->async_comps)) {
            /* completions the async context took still wait for
             * progress: this flush completes after them */
            status = uct_ud_iface_flush_after_async(iface, comp,
                                                    uct_ud_ep_take_denied(ep));
            goto out;
        }
        status = UCS_OK;
        if (ep->rx_flags & UCT_UD_EP_TX_DENIED) {
            ep->rx_flags &= (uint8_t)~UCT_UD_EP_TX_DENIED;
            status = UCS_ERR_INVALID_ADDR;
        }
        goto out;
    }
    if (ucs_unlikely(ep->tx.resend != ep->tx.psn)) {
        uct_ud_ep_resend(iface, ep);
    }
    if (comp != NULL) {
        marker = ucs_mpool_get(&iface->marker_mp);
        if (marker == NULL) {
            status = UCS_ERR_NO_RESOURCE;
            goto out;
        }
        marker->flags  = UCT_UD_DESC_FLAG_MARKER;
        marker->comp   = comp;
        marker->psn    = (uint16_t)(ep->tx.psn - 1);
        marker->iovcnt = 0;
        uct_ud_desc_queue_push(&ep->unacked, marker);
    }
    if (!uct_ud_ep_send_ack_req(iface, ep) &&
        (ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        /* no send slot (a flush of more eps than the send queue holds):
         * the pass over the ACKs owed asks once slots come back, rather
         * than the resend wait */
        ep->flags |= UCT_UD_EP_FLAG_COMP_UNASKED;
        ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_COMP_RECENT;
        uct_ud_iface_queue_ack(iface, ep);
    }
    status = UCS_INPROGRESS;
out:
    uct_ud_leave(iface);
    return status;
}

ucs_status_t uct_ud_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    (void)tl_ep;
    (void)flags;
    return UCS_OK; /* the peer applies packets in order */
}

ucs_status_t uct_ud_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned flags)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    ucs_status_t status;

    (void)flags;
    uct_ud_enter(iface);
    if (uct_ud_ep_can_send(iface, ep) &&
        ucs_arbiter_group_is_empty(&ep->pending.group)) {
        status = UCS_ERR_BUSY;
    } else {
        uct_pending_group_push(&iface->arbiter, &ep->pending, req);
        status = UCS_OK;
    }
    uct_ud_leave(iface);
    return status;
}

void uct_ud_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);

    uct_ud_enter(iface);
    uct_pending_group_purge(&iface->arbiter, &ep->pending, cb, arg);
    uct_ud_leave(iface);
}

/* ------------------------------------------------------------------------
 * Object tree
 */

static void uct_ud_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    uct_ud_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    if (ep->flags & UCT_UD_EP_FLAG_FAILED) {
        ucs_string_buffer_appendf(strb, "failed\n");
    } else if (ep->flags & UCT_UD_EP_FLAG_CONNECTED) {
        ucs_string_buffer_appendf(strb, "connected\n");
    } else if (ep->flags & UCT_UD_EP_FLAG_CREQ_WAIT) {
        ucs_string_buffer_appendf(strb, "waiting to connect\n");
    } else if (ep->flags & UCT_UD_EP_FLAG_CREQ) {
        ucs_string_buffer_appendf(strb, "connecting\n");
    } else {
        ucs_string_buffer_appendf(strb, "created\n");
    }
}

static void uct_ud_ep_vfs_show_last_error(void *obj, ucs_string_buffer_t *strb,
                                          void *arg_ptr, uint64_t arg_u64)
{
    uct_ud_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    uct_vfs_append_status(strb, (ep->flags & UCT_UD_EP_FLAG_FAILED)
                                    ? (ucs_status_t)ep->status
                                    : UCS_OK);
}

static void uct_ud_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                    void *arg_ptr, uint64_t arg_u64)
{
    uct_ud_ep_t *ep = obj;
    union ibv_gid gid;
    char str[64];

    (void)arg_ptr;
    (void)arg_u64;
    if (ep->ah == NULL) {
        ucs_string_buffer_appendf(strb, "none\n");
        return;
    }
    memcpy(gid.raw, ep->ah->gid, sizeof(gid.raw));
    ucs_string_buffer_appendf(strb, "qp 0x%x ep %u gid %s\n", ep->dest_qpn,
                              ep->dest_id,
                              uct_ib_gid_str(&gid, str, sizeof(str)));
}

static void uct_ud_ep_vfs_show_tx_queue(void *obj, ucs_string_buffer_t *strb,
                                        void *arg_ptr, uint64_t arg_u64)
{
    uct_ud_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    ucs_string_buffer_appendf(strb, "unacked %u\nto_resend %u\n",
                              (uint16_t)(ep->tx.psn - ep->tx.acked - 1),
                              (uint16_t)(ep->tx.psn - ep->tx.resend));
}

void uct_ud_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_ud_ep_t *ep = uct_ud_ep(tl_ep);

    uct_vfs_add_value(ep, ep->id, "ep_id");
    uct_vfs_add_file(ep, uct_ud_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_ud_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_file(ep, uct_ud_ep_vfs_show_tx_queue, NULL, 0, "tx_queue");
    uct_vfs_add_uint(ep, &ep->pending.count, sizeof(ep->pending.count),
                     "pending");
    uct_vfs_add_file(ep, uct_ud_ep_vfs_show_last_error, NULL, 0, "last_error");
}
