/*
 * ud_verbs connections: CREQ pacing and its window, requests and
 * replies, the connection table's matching, CONNECT_TO_EP, and the
 * timer's look at an unanswered CREQ.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud.h"

#include <ucs/time/time.h>

#include <stdlib.h>
#include <string.h>

/* The CREQ retransmission timeout before a reply time was measured */
#define UCT_UD_CREQ_RTO_INIT_SEC 1.0

/* ------------------------------------------------------------------------
 * Pacing: the window of CREQs outstanding
 */

/* Whether the window has room for @a ep's CREQ: the target's share
 * (ep->creq_window), what the answers allow now (creq.cwnd), and a
 * quarter of the send queue left to data and ACKs */
static int uct_ud_iface_creq_room(const uct_ud_iface_t *iface,
                                  const uct_ud_ep_t *ep)
{
    return (iface->creq.outstanding <
            ucs_min(ep->creq_window, iface->creq.cwnd)) &&
           (iface->tx.available > (int)(iface->config.tx_queue_len / 4));
}

/* Sends @a ep's CREQ, which takes a place in the window; false when it
 * found no send slot (the caller keeps it waiting: a CREQ not sent must
 * not count as one unanswered) */
static int uct_ud_ep_creq_send_first(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                     ucs_time_t now)
{
    if (uct_ud_ep_send_creq(iface, ep) != UCS_OK) {
        return 0;
    }
    ++iface->creq.outstanding;
    ep->ack_time = uct_ud_iface_stamp(iface, now);
    ep->resend_time =
        uct_ud_iface_stamp(iface, now + iface->config.resend_timeout);
    uct_ud_ep_activate(iface, ep); /* the timer repeats it */
    return 1;
}

/* Sends the waiting CREQs the window has room for, in creation order;
 * also called when send slots come back */
void uct_ud_iface_creq_next(uct_ud_iface_t *iface)
{
    ucs_time_t now = 0;
    uct_ud_ep_t *ep;

    while (!ucs_list_is_empty(&iface->creq.waiting)) {
        ep = ucs_list_head(&iface->creq.waiting, uct_ud_ep_t, active);
        if (!uct_ud_iface_creq_room(iface, ep)) {
            return;
        }
        if (now == 0) {
            now = ucs_get_time();
        }
        ucs_list_del(&ep->active);
        ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_CREQ_WAIT;
        if (!uct_ud_ep_creq_send_first(iface, ep, now)) {
            ep->flags |= UCT_UD_EP_FLAG_CREQ_WAIT;
            ucs_list_add_head(&iface->creq.waiting, &ep->active);
            return;
        }
    }
}

/* A new ep's CREQ: sent when the window has room and nobody waits before
 * it, else queued */
static void uct_ud_ep_creq_start(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    ep->flags |= UCT_UD_EP_FLAG_CREQ;
    if (ucs_list_is_empty(&iface->creq.waiting) &&
        uct_ud_iface_creq_room(iface, ep) &&
        uct_ud_ep_creq_send_first(iface, ep, ucs_get_time())) {
        return;
    }
    ep->flags |= UCT_UD_EP_FLAG_CREQ_WAIT;
    ep->ack_time = uct_ud_iface_stamp(iface, ucs_get_time());
    ucs_list_add_tail(&iface->creq.waiting, &ep->active);
    ++iface->stats.creq_queued;
}

/* @a ep stops connecting (answered, failed, destroyed): it leaves the
 * queue, or its place in the window goes to the next waiting CREQ */
void uct_ud_ep_creq_end(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    if (ep->flags & UCT_UD_EP_FLAG_CREQ_WAIT) {
        ucs_list_del(&ep->active);
        ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_CREQ_WAIT;
    } else if ((ep->flags & UCT_UD_EP_FLAG_CREQ) &&
               !(ep->rx_flags & UCT_UD_EP_TX_CREQ_RESENT)) {
        /* (one taken for lost left the window then) */
        ucs_assert(iface->creq.outstanding > 0);
        --iface->creq.outstanding;
        uct_ud_iface_creq_next(iface);
    }
    ep->flags &= (uint16_t)~UCT_UD_EP_FLAG_CREQ;
}

/* ------------------------------------------------------------------------
 * Requests and replies
 */

/* The secret of the iface at (ah, qpn), kept with its connection
 * numbers */
static uint64_t *uct_ud_ah_peer_secret(uct_ud_ah_t *ah, uint32_t qpn)
{
    unsigned i;

    for (i = 0; i < ah->num_peers; ++i) {
        if (ah->peers[i].qp_num == qpn) {
            /* a peer that a CREQ added has no secret of ours */
            return (i < ah->num_secrets) ? &ah->secrets[i] : NULL;
        }
    }
    return NULL;
}

static ucs_status_t uct_ud_ah_set_secret(uct_ud_ah_t *ah, uint32_t qpn,
                                         uint64_t secret)
{
    uint64_t *secrets;
    unsigned i;

    for (i = 0; i < ah->num_peers; ++i) {
        if (ah->peers[i].qp_num == qpn) {
            break;
        }
    }
    if (i == ah->num_peers) {
        return UCS_ERR_NO_ELEM;
    }
    if (ah->num_secrets < ah->num_peers) {
        secrets = realloc(ah->secrets, ah->num_peers * sizeof(*secrets));
        if (secrets == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        memset(secrets + ah->num_secrets, 0,
               (ah->num_peers - ah->num_secrets) * sizeof(*secrets));
        ah->secrets     = secrets;
        ah->num_secrets = ah->num_peers;
    }
    ah->secrets[i] = secret;
    return UCS_OK;
}

ucs_status_t uct_ud_ep_send_creq(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    struct {
        uct_ud_hdr_t hdr;
        uct_ud_creq_t creq;
    } UCS_S_PACKED pkt;
    uint64_t *secret = uct_ud_ah_peer_secret(ep->ah, ep->dest_qpn);
    uint16_t zero    = 0;

    memset(&pkt, 0, sizeof(pkt));
    uct_ud_u24_set(pkt.hdr.dest_id, UCT_UD_EP_ID_NONE);
    pkt.hdr.type = UCT_UD_PKT_CREQ;
    memcpy(&pkt.hdr.psn, &zero, sizeof(zero));
    memcpy(&pkt.hdr.ack_psn, &zero, sizeof(zero));
    if (secret != NULL) {
        memcpy(&pkt.creq.secret, secret, sizeof(*secret));
    }
    uct_ud_u24_set(pkt.creq.src_id, ep->id);
    memcpy(&pkt.creq.conn_sn, &ep->conn_sn, sizeof(ep->conn_sn));
    (void)uct_ib_iface_get_device_address(
        &iface->super.super.super, (uct_device_addr_t *)&pkt.creq.dev_addr);
    return uct_ud_iface_send_ctl(iface, ep->ah, ep->dest_qpn, &pkt, sizeof(pkt),
                                 1);
}

static ucs_status_t uct_ud_ep_send_crep(uct_ud_iface_t *iface, uct_ud_ep_t *ep)
{
    struct {
        uct_ud_hdr_t hdr;
        uct_ud_crep_t crep;
    } UCS_S_PACKED pkt;
    uint16_t ack_psn = (uint16_t)(ep->rx.expected - 1), zero = 0;

    memset(&pkt, 0, sizeof(pkt));
    uct_ud_u24_set(pkt.hdr.dest_id, ep->dest_id);
    pkt.hdr.type = UCT_UD_PKT_CREP;
    memcpy(&pkt.hdr.psn, &zero, sizeof(zero));
    memcpy(&pkt.hdr.ack_psn, &ack_psn, sizeof(ack_psn));
    uct_ud_u24_set(pkt.crep.src_id, ep->id);
    memcpy(&pkt.crep.conn_sn, &ep->conn_sn, sizeof(ep->conn_sn));
    return uct_ud_iface_send_ctl(iface, ep->ah, ep->dest_qpn, &pkt, sizeof(pkt),
                                 1);
}

/* Secrets live in a parallel array of the ah's peers (same index) */
/* ------------------------------------------------------------------------
 * Connection establishment
 */

/* A CREQ sent once was answered after @a rtt; a window cut by a loss
 * grows back by one per window of such answers (as TCP's congestion
 * avoidance) */
static void uct_ud_iface_creq_rtt_sample(uct_ud_iface_t *iface, ucs_time_t rtt)
{
    iface->creq.backoff = 0;
    uct_ud_rtt_update(&iface->creq.srtt, &iface->creq.rttvar, rtt);
    if ((iface->creq.cwnd < UINT16_MAX) && /* cut once at least */
        (++iface->creq.cwnd_count >= iface->creq.cwnd)) {
        iface->creq.cwnd_count = 0;
        ++iface->creq.cwnd;
    }
}

/* A packet of @a ep, sent at the stamp @a sent, had no answer within its
 * whole wait: the peers are slower to answer than the estimate, most
 * often because more is in flight towards them than they take. New
 * connections are what an iface can hold back, so the CREQ window
 * halves, once per episode: losses of packets sent before the last
 * halving are of the same one. Without it, eps that all resent to a
 * loaded target (each resend more work for it) kept it loaded until
 * they failed. */
void uct_ud_iface_creq_cwnd_cut(uct_ud_iface_t *iface, const uct_ud_ep_t *ep,
                                uint32_t sent, ucs_time_t now)
{
    unsigned window = ucs_min(iface->creq.cwnd, ep->creq_window);

    if ((ep->creq_window == 0) || /* not made by our CREQ */
        ((iface->creq.cut_time != 0) &&
         ((int32_t)(sent - uct_ud_iface_stamp(iface, iface->creq.cut_time)) <
          0))) {
        return;
    }
    iface->creq.cwnd       = ucs_max(window / 2, 1);
    iface->creq.cwnd_count = 0;
    iface->creq.cut_time   = now;
    ++iface->stats.creq_cwnd_cuts;
}

/* How long a CREQ's reply may take before the CREQ is taken for lost:
 * twice the smoothed reply time plus four deviations (a target that
 * stalls for less than a reply time is not taken for lossy), 1 s before
 * the first reply (as TCP's first timeout: a target's first requests
 * cost it the most), doubled for each loss since the last sample, at
 * most TIMEOUT/4 */
static ucs_time_t uct_ud_iface_creq_rto(const uct_ud_iface_t *iface)
{
    ucs_time_t rto = (iface->creq.srtt == 0)
                         ? ucs_time_from_sec(UCT_UD_CREQ_RTO_INIT_SEC)
                         : 2 * iface->creq.srtt + 4 * iface->creq.rttvar;

    return ucs_min(rto << iface->creq.backoff, uct_ud_iface_max_wait(iface));
}

static void uct_ud_ep_set_connected(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                                    uint32_t dest_id)
{
    if ((ep->flags & UCT_UD_EP_FLAG_CREQ) &&
        !(ep->flags & UCT_UD_EP_FLAG_CREQ_WAIT) &&
        !(ep->rx_flags & UCT_UD_EP_TX_CREQ_RESENT) &&
        (ep->ack_time != UCT_UD_TIME_AT_SWEEP)) {
        uct_ud_iface_creq_rtt_sample(
            iface, uct_ud_iface_since(iface, ep->ack_time, ucs_get_time()));
    }
    uct_ud_ep_creq_end(iface, ep);
    ep->dest_id = dest_id;
    ep->flags |= UCT_UD_EP_FLAG_CONNECTED;
    if (ep->tx.resend != ep->tx.psn) {
        /* what was sent while connecting goes out now, and its wait for
         * an acknowledgement starts now (the CREQ's time is past) */
        ep->ack_time   = UCT_UD_TIME_AT_SWEEP;
        ep->tx.backoff = 0;
        ep->rx_flags |= UCT_UD_EP_TX_TIMED; /* their first send */
        uct_ud_ep_resend(iface, ep);
    }
    uct_ud_ep_schedule(iface, ep);
}

ucs_status_t uct_ud_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_ud_iface_t *iface = uct_ud_iface(params->iface);
    const uct_ud_iface_addr_t *iface_addr;
    uct_ud_ep_t *ep, *existing;
    uint32_t qpn, conn_sn;
    uint16_t rx_queue_len;
    ucs_status_t status;
    uint64_t secret;
    uct_ud_ah_t *ah;

    uct_ud_enter(iface);
    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        /* CONNECT_TO_EP: connected by uct_ep_connect_to_ep() */
        status = uct_ud_ep_alloc(iface, &ep);
        if (status == UCS_OK) {
            *ep_p = &ep->super.super;
        }
        goto out;
    }

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) ||
        (params->dev_addr == NULL) || (params->iface_addr == NULL)) {
        ucs_error("ud_verbs iface %s: connecting to an interface needs its "
                  "device and interface addresses",
                  iface->super.super.dev_name);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }
    if (!uct_ib_iface_is_reachable_addr(
            &iface->super, (const uct_ib_device_addr_t *)params->dev_addr)) {
        ucs_error("ud_verbs iface %s: the peer's device address is not "
                  "reachable from here (another fabric or subnet)",
                  iface->super.super.dev_name);
        status = UCS_ERR_UNREACHABLE;
        goto out;
    }
    iface_addr = (const uct_ud_iface_addr_t *)params->iface_addr;
    qpn        = uct_ud_u24_get(iface_addr->qp_num);
    memcpy(&secret, &iface_addr->secret, sizeof(secret));
    if (qpn <= 1) {
        ucs_error("ud_verbs iface %s: the interface address names QP %u, "
                  "which cannot be a ud_verbs QP",
                  iface->super.super.dev_name, qpn);
        status = UCS_ERR_INVALID_PARAM;
        goto out;
    }

    status = uct_ud_iface_get_ah(
        iface, (const uct_ib_device_addr_t *)params->dev_addr, &ah);
    if (status != UCS_OK) {
        goto out;
    }
    status = uct_ud_ah_next_conn_sn(ah, qpn, &conn_sn);
    if (status == UCS_OK) {
        status = uct_ud_ah_set_secret(ah, qpn, secret);
    }
    if (status != UCS_OK) {
        ucs_error("ud_verbs iface %s: no memory for a connection",
                  iface->super.super.dev_name);
        goto out;
    }

    /* the peer may have connected first: its request made the ep */
    existing = uct_ud_iface_conn_find(iface, ah, qpn, conn_sn);
    if ((existing != NULL) && (existing->flags & UCT_UD_EP_FLAG_PRIVATE)) {
        existing->flags &= (uint16_t)~UCT_UD_EP_FLAG_PRIVATE;
        --iface->eps.num_private;
        *ep_p = &existing->super.super;
        goto out;
    }

    status = uct_ud_ep_alloc(iface, &ep);
    if (status != UCS_OK) {
        goto out;
    }
    ep->ah       = ah;
    ep->dest_qpn = qpn;
    ep->conn_sn  = conn_sn;
    memcpy(&rx_queue_len, &iface_addr->rx_queue_len, sizeof(rx_queue_len));
    ep->creq_window = (uint16_t)ucs_max(
        1, ucs_min(le16toh(rx_queue_len), iface->rx.max) / 16);
    uct_ud_iface_conn_add(iface, ep);
    uct_ud_ep_creq_start(iface, ep);
    *ep_p = &ep->super.super;

out:
    uct_ud_leave(iface);
    return status;
}

void uct_ud_iface_rx_creq(uct_ud_iface_t *iface, const struct ibv_wc *wc,
                          const uct_ud_creq_t *creq, const uint8_t *sgid)
{
    uint32_t src_id = uct_ud_u24_get(creq->src_id);
    uint32_t conn_sn;
    ucs_status_t status;
    uct_ud_ah_t *ah;
    uct_ud_ep_t *ep;

    (void)sgid;
    memcpy(&conn_sn, &creq->conn_sn, sizeof(conn_sn));
    if ((src_id > UCT_UD_EP_ID_MAX) ||
        !uct_ib_iface_is_reachable_addr(&iface->super, &creq->dev_addr)) {
        ucs_warn_limited(&iface->proto_log,
                         "ud_verbs iface %s: dropped a "
                         "malformed connection request from qp 0x%x",
                         iface->super.super.dev_name, wc->src_qp);
        ++iface->stats.rx_dropped;
        return;
    }

    status = uct_ud_iface_get_ah(iface, &creq->dev_addr, &ah);
    if (status != UCS_OK) {
        return;
    }
    ep = uct_ud_iface_conn_find(iface, ah, wc->src_qp, conn_sn);
    if (ep == NULL) {
        if (iface->eps.num_private >= iface->config.max_peer_eps) {
            ++iface->stats.creq_refused;
            ucs_warn_limited(&iface->proto_log,
                             "ud_verbs iface %s: "
                             "refused a connection from qp 0x%x: %u "
                             "peers' endpoints exist already; raise "
                             "UCX_UD_MAX_PEER_EPS",
                             iface->super.super.dev_name, wc->src_qp,
                             iface->eps.num_private);
            return;
        }
        status = uct_ud_ep_alloc(iface, &ep);
        if (status != UCS_OK) {
            return;
        }
        /* the idle sweep's record of the peer interface (without it,
         * each of its eps is probed on its own) */
        (void)uct_ud_ah_peer(ah, wc->src_qp, 1);
        ++iface->eps.num_private;
        ep->flags |= UCT_UD_EP_FLAG_PRIVATE;
        ep->rx_flags |= UCT_UD_EP_RX_SEEN; /* its peer is alive now */
        ep->ah       = ah;
        ep->dest_qpn = wc->src_qp;
        ep->conn_sn  = conn_sn;
        uct_ud_iface_conn_add(iface, ep);
    }
    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        uct_ud_ep_set_connected(iface, ep, src_id);
    } else if (ep->dest_id != src_id) {
        ucs_warn_limited(&iface->proto_log,
                         "ud_verbs iface %s: dropped a "
                         "connection request from qp 0x%x for ep %u, which "
                         "is connected to ep %u",
                         iface->super.super.dev_name, wc->src_qp, src_id,
                         ep->dest_id);
        ++iface->stats.rx_dropped;
        return;
    }
    (void)uct_ud_ep_send_crep(iface, ep); /* lost: the peer asks again */
}

void uct_ud_ep_rx_crep(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                       const void *packet)
{
    const uct_ud_crep_t *crep =
        (const uct_ud_crep_t *)((const uct_ud_hdr_t *)packet + 1);
    uint32_t src_id = uct_ud_u24_get(crep->src_id);
    uint32_t conn_sn;

    memcpy(&conn_sn, &crep->conn_sn, sizeof(conn_sn));
    if (!(ep->flags & UCT_UD_EP_FLAG_IN_CONN) || (conn_sn != ep->conn_sn) ||
        (src_id > UCT_UD_EP_ID_MAX)) {
        ++iface->stats.rx_dropped;
        return;
    }
    if (!(ep->flags & UCT_UD_EP_FLAG_CONNECTED)) {
        uct_ud_ep_set_connected(iface, ep, src_id);
        if (ep->flags & UCT_UD_EP_FLAG_ZOMBIE) {
            /* destroyed while connecting: the peer's ep goes too */
            uct_ud_iface_conn_remove(iface, ep);
            (void)uct_ud_ep_send_disc(iface, ep, UCT_UD_PKT_DISC);
        } else if (uct_ud_desc_queue_is_empty(&ep->unacked)) {
            uct_ud_ep_deactivate(ep);
        }
    }
}

ucs_status_t uct_ud_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_ud_ep_t *ep       = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface = uct_ud_ep_iface(ep);
    uct_ud_ep_addr_t *ud  = (uct_ud_ep_addr_t *)addr;

    uct_ud_u24_set(ud->iface.qp_num, iface->qp->qp_num);
    memcpy(&ud->iface.secret, &iface->secret, sizeof(iface->secret));
    uct_ud_u24_set(ud->ep_id, ep->id);
    return UCS_OK;
}

ucs_status_t uct_ud_ep_connect_to_ep(uct_ep_h tl_ep,
                                     const uct_device_addr_t *dev_addr,
                                     const uct_ep_addr_t *ep_addr)
{
    uct_ud_ep_t *ep            = uct_ud_ep(tl_ep);
    uct_ud_iface_t *iface      = uct_ud_ep_iface(ep);
    const uct_ud_ep_addr_t *ud = (const uct_ud_ep_addr_t *)ep_addr;
    uint32_t qpn, dest_id;
    ucs_status_t status;
    uct_ud_ah_t *ah;

    if ((dev_addr == NULL) || (ep_addr == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }
    qpn     = uct_ud_u24_get(ud->iface.qp_num);
    dest_id = uct_ud_u24_get(ud->ep_id);
    if ((qpn <= 1) || (dest_id > UCT_UD_EP_ID_MAX)) {
        ucs_error("ud_verbs iface %s: invalid endpoint address (QP %u, "
                  "ep %u)",
                  iface->super.super.dev_name, qpn, dest_id);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!uct_ib_iface_is_reachable_addr(
            &iface->super, (const uct_ib_device_addr_t *)dev_addr)) {
        ucs_error("ud_verbs iface %s: the peer's device address is not "
                  "reachable from here (another fabric or subnet)",
                  iface->super.super.dev_name);
        return UCS_ERR_UNREACHABLE;
    }

    uct_ud_enter(iface);
    if (ep->flags & (UCT_UD_EP_FLAG_CONNECTED | UCT_UD_EP_FLAG_CREQ)) {
        ucs_error("ud_verbs iface %s: ep %u is already connected",
                  iface->super.super.dev_name, ep->id);
        status = UCS_ERR_ALREADY_EXISTS;
        goto out;
    }
    status =
        uct_ud_iface_get_ah(iface, (const uct_ib_device_addr_t *)dev_addr, &ah);
    if (status != UCS_OK) {
        goto out;
    }
    ep->ah       = ah;
    ep->dest_qpn = qpn;
    uct_ud_ep_set_connected(iface, ep, dest_id);
out:
    uct_ud_leave(iface);
    return status;
}

/* ------------------------------------------------------------------------
 * Unanswered requests
 */

/* A CREQ whose reply is late, later than the interface's retransmission
 * timeout, is taken for lost: it leaves the window (as TCP's lost
 * segments leave the flight), so that the requests of a dead target hold
 * the window for one timeout, not until they fail after TIMEOUT while
 * every other target's requests wait. The first loss of an episode
 * doubles that timeout for all (until a reply to a request sent once
 * brings a new sample), halves the window and is sent again at once. The
 * requests sent before that doubling are of the same episode: each is
 * lost after the timeout it was sent with, and its place in the window
 * goes to a waiting request then, but it is sent again only after the
 * doubled timeout (a target that only stalled answers meanwhile, and a
 * stall does not make all its requests go twice). Later resends wait the
 * ep's own backoff, and at least the timeout. */
void uct_ud_ep_creq_timer(uct_ud_iface_t *iface, uct_ud_ep_t *ep,
                          ucs_time_t now)
{
    ucs_time_t rto = uct_ud_iface_creq_rto(iface);
    uint32_t deadline;
    int of_episode, lost = 0;

    if (!(ep->rx_flags & UCT_UD_EP_TX_CREQ_RESENT)) {
        of_episode =
            (iface->creq.backoff > 0) &&
            ((int32_t)(ep->ack_time -
                       uct_ud_iface_stamp(iface, iface->creq.backoff_time)) <
             0);
        if (uct_ud_iface_since(iface, ep->ack_time, now) <
            (of_episode ? (rto >> 1) : rto)) {
            return; /* replies take longer now: not lost yet */
        }
        ep->rx_flags |= UCT_UD_EP_TX_CREQ_RESENT;
        ucs_assert(iface->creq.outstanding > 0);
        --iface->creq.outstanding;
        uct_ud_iface_creq_cwnd_cut(iface, ep, ep->ack_time, now);
        if (of_episode) {
            ep->resend_time = uct_ud_iface_stamp(iface, now + rto);
            uct_ud_iface_creq_next(iface);
            return;
        }
        if (iface->creq.backoff < UCT_UD_CREQ_BACKOFF_MAX) {
            ++iface->creq.backoff;
        }
        iface->creq.backoff_time = now;
        lost                     = 1;
    }
    ++iface->stats.creq_resent;
    (void)uct_ud_ep_send_creq(iface, ep);
    uct_ud_ep_backoff(iface, ep, now);
    deadline = uct_ud_iface_stamp(iface, now + rto);
    if ((int32_t)(deadline - ep->resend_time) > 0) {
        ep->resend_time = deadline;
    }
    if (lost) {
        uct_ud_iface_creq_next(iface); /* its place in the window */
    }
}

unsigned uct_ud_iface_creq_fail_waiting(uct_ud_iface_t *iface,
                                        const uct_ud_ah_t *ah, uint32_t qp_num)
{
    unsigned count = 0;
    uct_ud_ep_t *ep;
    int found;

    /* a handler may destroy any ep: the search starts again after each */
    do {
        found = 0;
        ucs_list_for_each(ep, &iface->creq.waiting, active) {
            if ((ep->ah == ah) && (ep->dest_qpn == qp_num)) {
                found = 1;
                break;
            }
        }
        if (found) {
            uct_ud_ep_set_failed(iface, ep, UCS_ERR_ENDPOINT_TIMEOUT, 0);
            ++count;
        }
    } while (found);
    return count;
}
