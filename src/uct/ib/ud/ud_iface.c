/*
 * ud_verbs interfaces: configuration, the UD QP and its receive queue,
 * receive and send completions, the async timer and channel handler,
 * flush, query. The tables (ep ids, address handles, connections, packets
 * held after a gap) are in ud_tables.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ud.h"

#include <uct/base/uct_vfs.h>
#include <uct/base/uct_worker.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Configuration: ud_verbs (UD_VERBS_) embeds ud (UD_) embeds ib (IB_)
 */

static ucs_config_field_t uct_ud_iface_config_table[] = {
    {"IB_", "", NULL, ucs_offsetof(uct_ud_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"TIMEOUT", "30s",
     "Time without any acknowledgement from a peer that has unacknowledged "
     "data before its endpoint fails with UCS_ERR_ENDPOINT_TIMEOUT",
     ucs_offsetof(uct_ud_iface_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"RESEND_TIMEOUT", "20ms",
     "Wait for an acknowledgement before unacknowledged packets are sent "
     "again; it doubles with each resend that gets no answer (up to a "
     "quarter of TIMEOUT)",
     ucs_offsetof(uct_ud_iface_config_t, resend_timeout), UCS_CONFIG_TYPE_TIME},

    {"TIMER_TICK", "10ms",
     "Period of the interface timer that resends, acknowledges and finds "
     "dead peers, also while the process does not call progress",
     ucs_offsetof(uct_ud_iface_config_t, timer_tick), UCS_CONFIG_TYPE_TIME},

    {"MAX_PEER_EPS", "262144",
     "Endpoints that peers' connection requests may create on an interface "
     "(each costs about 150 bytes until the peer disconnects); requests "
     "beyond are refused",
     ucs_offsetof(uct_ud_iface_config_t, max_peer_eps), UCS_CONFIG_TYPE_UINT},

    {"TX_WINDOW", "256",
     "Packets an endpoint may have unacknowledged (1-16384)",
     ucs_offsetof(uct_ud_iface_config_t, tx_window), UCS_CONFIG_TYPE_UINT},

    {"REORDER_BUFS", "auto",
     "Receive buffers an interface keeps with packets that arrived after a "
     "gap, over all its peers, until the gap fills (0 to RX_QUEUE_LEN; 0 "
     "keeps none: such packets are dropped and resent). \"auto\": half of "
     "RX_QUEUE_LEN",
     ucs_offsetof(uct_ud_iface_config_t, reorder_bufs),
     UCS_CONFIG_TYPE_ULUNITS},

    {"PEER_REORDER_BUFS", "auto",
     "Of REORDER_BUFS, the most one peer may hold; a peer is a remote "
     "queue pair, the interface of one or more endpoints. Its packets "
     "past that are dropped (and resent), and when REORDER_BUFS are all "
     "taken, a packet of a peer under its share takes the place of all "
     "those of a peer holding its whole share. \"auto\": a quarter of "
     "REORDER_BUFS (at least 1); \"inf\": REORDER_BUFS",
     ucs_offsetof(uct_ud_iface_config_t, peer_reorder_bufs),
     UCS_CONFIG_TYPE_ULUNITS},

    {NULL}};

ucs_config_field_t uct_ud_verbs_iface_config_table[] = {
    {"UD_", "", NULL, ucs_offsetof(uct_ud_verbs_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ud_iface_config_table)},

    {NULL}};

/* ------------------------------------------------------------------------
 * Pools (the receive queue is filled by ../base/ib_rxq.c)
 */

static void uct_ud_tx_obj_init(uct_iface_h tl_iface, void *obj, uct_mem_h memh)
{
    ((uct_ud_send_desc_t *)obj)->lkey = ((uct_ib_mem_t *)memh)->lkey;
}

/* Most receive buffers posted in one chain (RX_MAX_BATCH is capped) */
#define UCT_UD_RX_BATCH_MAX 64

/* ------------------------------------------------------------------------
 * Posting
 */

ucs_status_t uct_ud_iface_post(uct_ud_iface_t *iface, uct_ud_ah_t *ah,
                               uint32_t qpn, struct ibv_sge *sge, int num_sge,
                               int inl, int solicited, int signal)
{
    struct ibv_send_wr wr, *bad_wr;
    int ret;

    wr.next    = NULL;
    wr.wr_id   = iface->tx.sn;
    wr.sg_list = sge;
    wr.num_sge = num_sge;
    wr.opcode  = IBV_WR_SEND;
    wr.send_flags =
        (inl ? IBV_SEND_INLINE : 0) | (solicited ? IBV_SEND_SOLICITED : 0);
    wr.wr.ud.ah          = ah->ah;
    wr.wr.ud.remote_qpn  = qpn;
    wr.wr.ud.remote_qkey = UCT_UD_QKEY;
    if (signal || (++iface->tx.unsignaled >= iface->config.tx_moderation) ||
        (iface->tx.available <= (int)iface->config.tx_moderation)) {
        wr.send_flags |= IBV_SEND_SIGNALED;
        iface->tx.unsignaled = 0;
    }

    ret = ibv_post_send(iface->qp, &wr, &bad_wr);
    if (ucs_unlikely(ret != 0)) {
        ucs_error("ud_verbs iface %s: ibv_post_send failed: %s",
                  iface->super.super.dev_name, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }
    ++iface->tx.sn;
    --iface->tx.available;
    return UCS_OK;
}

void uct_ud_iface_desc_done(uct_ud_iface_t *iface, uct_ud_send_desc_t *desc)
{
    if ((desc->flags & (UCT_UD_DESC_FLAG_INLINE | UCT_UD_DESC_FLAG_MARKER)) ||
        ((int32_t)(desc->wqe_sn - iface->tx.completed) < 0)) {
        ucs_mpool_put(desc);
        return;
    }
    /* the device may still read it */
    ucs_queue_push(&iface->tx.deferred, &desc->queue);
}

/* Frees deferred descriptors whose last request completed */
static void uct_ud_iface_release_deferred(uct_ud_iface_t *iface)
{
    uct_ud_send_desc_t *desc;
    ucs_queue_iter_t iter;

    ucs_queue_for_each_safe(desc, iter, &iface->tx.deferred, queue) {
        if ((int32_t)(desc->wqe_sn - iface->tx.completed) < 0) {
            ucs_queue_del_iter(&iface->tx.deferred, iter);
            ucs_mpool_put(desc);
        }
    }
}

/* ------------------------------------------------------------------------
 * Receive
 */

/* Why a packet was dropped, once per cause and second */
static void uct_ud_iface_drop(uct_ud_iface_t *iface, const struct ibv_wc *wc,
                              const char *why)
{
    ++iface->stats.rx_dropped;
    ucs_warn_limited(&iface->proto_log,
                     "ud_verbs iface %s: dropped a "
                     "%u-byte packet from qp 0x%x: %s",
                     iface->super.super.dev_name, wc->byte_len, wc->src_qp,
                     why);
}

/* Why uct_ud_pkt_parse() refused a packet */
static const char *uct_ud_iface_parse_error(ucs_status_t status)
{
    if (status == UCS_ERR_UNSUPPORTED) {
        return "a reserved field, a flag its type does not define or bytes "
               "after a control packet are set";
    }
    return ucs_status_string(status);
}

/* A CREQ: check the secret, then connect */
static void uct_ud_iface_rx_creq_check(uct_ud_iface_t *iface,
                                       const struct ibv_wc *wc,
                                       const void *packet, const uint8_t *sgid)
{
    const uct_ud_creq_t *creq =
        (const uct_ud_creq_t *)((const uct_ud_hdr_t *)packet + 1);
    uint64_t secret;

    memcpy(&secret, &creq->secret, sizeof(secret));
    if (secret != iface->secret) {
        ++iface->stats.creq_denied;
        uct_ud_iface_drop(iface, wc,
                          "a connection request without this "
                          "interface's secret");
        return;
    }
    if (!uct_ud_creq_from_source(creq, sgid, wc->slid)) {
        uct_ud_iface_drop(iface, wc,
                          "a connection request whose address "
                          "is not its source");
        return;
    }
    uct_ud_iface_rx_creq(iface, wc, creq, sgid);
}

/* One received datagram; @a async: from the async context */
static void uct_ud_iface_rx_one(uct_ud_iface_t *iface, struct ibv_wc *wc,
                                int async)
{
    void *obj = (void *)(uintptr_t)wc->wr_id;
    uint8_t sgid[16], dgid[16];
    const uint8_t *src_gid = NULL;
    uct_ud_pkt_info_t info;
    ucs_status_t status;
    uct_ud_ep_t *ep;
    uint8_t *grh;
    void *packet;
    unsigned length;

    --iface->rx.posted;
    if (ucs_unlikely(wc->status != IBV_WC_SUCCESS)) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR) {
            uct_ib_iface_log_wc_error(&iface->super, wc, "receive");
        }
        ucs_mpool_put(obj);
        return;
    }

    grh    = uct_rx_desc_recv_buf(&iface->rx_layout, obj);
    packet = grh + UCT_UD_GRH_LEN;
    if (ucs_unlikely(wc->byte_len < UCT_UD_GRH_LEN)) {
        uct_ud_iface_drop(iface, wc, "shorter than the GRH");
        goto out_put;
    }
    length = wc->byte_len - UCT_UD_GRH_LEN;
    if (ucs_unlikely(wc->wc_flags & IBV_WC_WITH_IMM)) {
        /* a field of the datagram that our packets do not have */
        uct_ud_iface_drop(iface, wc, "immediate data");
        goto out_put;
    }

    if (wc->wc_flags & IBV_WC_GRH) {
        if ((uct_ud_grh_gids(grh, iface->config.ipv4, sgid, dgid) != UCS_OK) ||
            memcmp(dgid, iface->super.gid_info.gid.raw, 16)) {
            uct_ud_iface_drop(iface, wc, "not addressed to this GID");
            goto out_put;
        }
        src_gid = sgid;
    } else if (ucs_unlikely(iface->config.roce)) {
        /* without the source GID, the peer is not known (LIDs are 0) */
        uct_ud_iface_drop(iface, wc, "no GRH on RoCE");
        goto out_put;
    }

    status = uct_ud_pkt_parse(packet, length, &info);
    if (ucs_unlikely(status != UCS_OK)) {
        uct_ud_iface_drop(iface, wc, uct_ud_iface_parse_error(status));
        goto out_put;
    }

    if (ucs_unlikely(info.type == UCT_UD_PKT_CREQ)) {
        uct_ud_iface_rx_creq_check(iface, wc, packet, src_gid);
        goto out_put;
    }

    ep = uct_ud_iface_ep(iface, info.dest_id);
    if (ucs_unlikely(ep == NULL)) {
        if (info.dest_id < iface->eps.used) {
            /* a late packet of an ep destroyed here: the peer's resends
             * and acknowledgements stop when it gives up */
            ++iface->stats.rx_dropped;
            ++iface->stats.rx_stale;
        } else {
            uct_ud_iface_drop(iface, wc, "no such endpoint");
        }
        goto out_put;
    }
    /* only the peer the ep is connected to may talk to it */
    if (ucs_unlikely((ep->ah == NULL) || (wc->src_qp != ep->dest_qpn) ||
                     ((src_gid != NULL)
                          ? (memcmp(src_gid, ep->ah->gid, 16) != 0)
                          : (wc->slid != ep->ah->lid)))) {
        uct_ud_iface_drop(iface, wc, "not from the endpoint's peer");
        goto out_put;
    }

    uct_ud_ep_rx(iface, ep, &info, obj, packet, length, async);
    return;

out_put:
    ucs_mpool_put(obj);
}

/* Delivers what the async context took, in order */
static unsigned uct_ud_iface_dispatch_async_rx(uct_ud_iface_t *iface)
{
    unsigned count = 0;
    uct_ud_rx_desc_t *rdesc;
    uct_ud_ep_t *ep;
    void *packet;

    while (!ucs_queue_is_empty(&iface->async_rx)) {
        rdesc  = ucs_queue_pull_elem_non_empty(&iface->async_rx,
                                               uct_ud_rx_desc_t, queue);
        ep     = uct_ud_iface_ep(iface, rdesc->ep_id);
        packet = (uint8_t *)uct_rx_desc_recv_buf(&iface->rx_layout, rdesc) +
                 UCT_UD_GRH_LEN;
        /* an AM taken before its ep went is still delivered (only AMs
         * wait here, and they do not need the ep) */
        if (((ep != NULL) && (ep->flags & UCT_UD_EP_FLAG_FAILED)) ||
            !uct_ud_ep_deliver(iface, ep, rdesc->type, rdesc, packet,
                               rdesc->hdr_len, rdesc->length)) {
            ucs_mpool_put(rdesc);
        }
        ++count;
    }
    return count;
}

/* Send completions: every request up to the signaled one is done */
static unsigned uct_ud_iface_poll_tx(uct_ud_iface_t *iface)
{
    struct ibv_wc wc[16];
    int i, n;

    n = uct_ib_iface_poll_cq(&iface->super, UCT_IB_DIR_TX, wc,
                             (int)ucs_min(iface->super.config.tx_max_poll, 16));
    for (i = 0; i < n; ++i) {
        if (ucs_unlikely(wc[i].status != IBV_WC_SUCCESS)) {
            uct_ib_iface_log_wc_error(&iface->super, &wc[i], "send");
        }
        iface->tx.available +=
            (int)((uint32_t)wc[i].wr_id + 1 - iface->tx.completed);
        iface->tx.completed = (uint32_t)wc[i].wr_id + 1;
    }
    if (n > 0) {
        if (!ucs_queue_is_empty(&iface->tx.deferred)) {
            uct_ud_iface_release_deferred(iface);
        }
        if (ucs_unlikely(!ucs_list_is_empty(&iface->creq.waiting))) {
            uct_ud_iface_creq_next(iface); /* CREQs wait for slots too */
        }
        return (unsigned)n;
    }
    return 0;
}

static unsigned uct_ud_iface_poll_rx(uct_ud_iface_t *iface, int async)
{
    struct ibv_wc wc[32];
    int i, n;

    n = uct_ib_iface_poll_cq(&iface->super, UCT_IB_DIR_RX, wc,
                             (int)ucs_min(iface->super.config.rx_max_poll, 32));
    for (i = 0; i < n; ++i) {
        uct_ud_iface_rx_one(iface, &wc[i], async);
    }
    uct_ib_rxq_refill(&iface->rx);
    return (n > 0) ? (unsigned)n : 0;
}

static ucs_arbiter_cb_result_t
uct_ud_iface_pending_cb(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                        ucs_arbiter_elem_t *elem, void *arg)
{
    uct_ud_iface_t *iface = arg;
    uct_ud_ep_t *ep       = ucs_container_of(group, uct_ud_ep_t, pending.group);

    /* a send needs two slots (one stays for acknowledgements) */
    return uct_ib_iface_pending_dispatch(arbiter, group, elem,
                                         ep->flags & UCT_UD_EP_FLAG_FAILED,
                                         &iface->tx.available, 2);
}

/* The first ep whose peer stopped answering, or NULL */
static uct_ud_ep_t *uct_ud_iface_timed_out_ep(uct_ud_iface_t *iface,
                                              ucs_time_t now)
{
    uct_ud_ep_t *ep;

    ucs_list_for_each(ep, &iface->active, active) {
        if (!(ep->flags & (UCT_UD_EP_FLAG_FAILED | UCT_UD_EP_FLAG_ZOMBIE)) &&
            ((ep->flags & UCT_UD_EP_FLAG_CREQ) ||
             !uct_ud_desc_queue_is_empty(&ep->unacked)) &&
            (ep->ack_time != UCT_UD_TIME_AT_SWEEP) &&
            (uct_ud_iface_since(iface, ep->ack_time, now) >
             iface->config.timeout)) {
            return ep;
        }
    }
    return NULL;
}

/* Fails the eps whose peers stopped answering; a handler may destroy any
 * ep, so the walk starts again after each */
static void uct_ud_iface_check_timeouts(uct_ud_iface_t *iface)
{
    ucs_time_t now = ucs_get_time();
    uct_ud_ep_t *ep;

    iface->timeouts_due = 0;
    while ((ep = uct_ud_iface_timed_out_ep(iface, now)) != NULL) {
        if ((ep->flags & UCT_UD_EP_FLAG_CREQ) &&
            (uct_ud_iface_creq_fail_waiting(iface, ep->ah, ep->dest_qpn) !=
             0)) {
            continue; /* handlers ran: look again */
        }
        uct_ud_ep_set_failed(iface, ep, UCS_ERR_ENDPOINT_TIMEOUT, 0);
    }
}

/* Completions of packets acknowledged in the async context */
static void uct_ud_iface_dispatch_async_comps(uct_ud_iface_t *iface)
{
    uct_ud_send_desc_t *desc;

    while (!ucs_queue_is_empty(&iface->async_comps)) {
        desc = ucs_queue_pull_elem_non_empty(&iface->async_comps,
                                             uct_ud_send_desc_t, queue);
        uct_invoke_completion(desc->comp, (ucs_status_t)desc->status);
        uct_ud_iface_desc_done(iface, desc);
    }
}

/* Continues the resends that stopped for lack of send slots */
static void uct_ud_iface_resume_resends(uct_ud_iface_t *iface)
{
    uct_ud_ep_t *ep;

    iface->resend_blocked = 0;
    ucs_list_for_each(ep, &iface->active, active) {
        if (iface->tx.available <= 1) {
            iface->resend_blocked = 1;
            return;
        }
        if (ep->tx.resend != ep->tx.psn) {
            uct_ud_ep_resend(iface, ep);
        }
    }
}

/* Work of the progress thread only: completions, handlers, failures */
static void uct_ud_iface_progress_slow(uct_ud_iface_t *iface)
{
    uct_ud_ep_t *ep;
    unsigned i;

    if (!ucs_queue_is_empty(&iface->async_comps)) {
        uct_ud_iface_dispatch_async_comps(iface);
    }
    if (iface->async_fatal) {
        iface->async_fatal = 0;
        for (i = 0; i < iface->eps.size; ++i) {
            ep = iface->eps.slots[i];
            if (ep != NULL) {
                uct_ud_ep_set_failed(iface, ep, UCS_ERR_IO_ERROR, 0);
            }
        }
    }
    if (iface->timeouts_due) {
        uct_ud_iface_check_timeouts(iface);
    }
}

unsigned uct_ud_iface_progress(uct_iface_h tl_iface)
{
    uct_ud_iface_t *iface = uct_ud_iface(tl_iface);
    unsigned count        = 0;

    uct_ud_enter(iface);
    iface->progressed = 1;
    if (ucs_unlikely(!ucs_queue_is_empty(&iface->async_rx))) {
        count += uct_ud_iface_dispatch_async_rx(iface);
    }
    count += uct_ud_iface_poll_rx(iface, 0);
    count += uct_ud_iface_poll_tx(iface);
    if (ucs_unlikely(iface->resend_blocked)) {
        uct_ud_iface_resume_resends(iface);
    }
    if (iface->acks.count != 0) {
        uct_ud_iface_send_acks(iface, 0);
    }
    if (!ucs_arbiter_is_empty(&iface->arbiter)) {
        ucs_arbiter_dispatch(&iface->arbiter, 1, uct_ud_iface_pending_cb,
                             iface);
    }
    if (ucs_unlikely(iface->async_fatal || iface->timeouts_due ||
                     !ucs_queue_is_empty(&iface->async_comps))) {
        /* what the async context found: user callbacks run here */
        uct_ud_iface_progress_slow(iface);
    }
    uct_ud_leave(iface);
    ucs_async_check_miss(iface->async);
    return count;
}

/* ------------------------------------------------------------------------
 * Async: the timer and the completion channel
 */

/* The idle sweep (ud.h, silent peers): the endpoint ids it looks at this
 * tick, so that each id is looked at once per TIMEOUT/8. The time since
 * the last tick earns eps.used times as much credit (at most a period's:
 * ticks come late in a loaded process, and a tick-counted sweep then
 * looked at each id once per several periods), and a look costs
 * TIMEOUT/8 of it. */
static unsigned uct_ud_iface_idle_sweep_count(uct_ud_iface_t *iface,
                                              ucs_time_t now)
{
    uint64_t period = ucs_max(iface->config.timeout / UCT_UD_IDLE_LOOKS, 1);
    uint64_t elapsed, count;

    elapsed          = (iface->idle_last == 0) ? iface->config.timer_tick
                                               : (now - iface->idle_last);
    iface->idle_last = now;
    iface->idle_credit += (uint64_t)iface->eps.used * ucs_min(elapsed, period);
    count = ucs_min(iface->idle_credit / period, UCT_UD_IDLE_SWEEP_MAX);
    iface->idle_credit = ucs_min(iface->idle_credit - count * period, period);
    return (unsigned)count;
}

/* Looks at the next ids of the idle sweep: bounded work per tick, and
 * none while no peer's request made an ep */
static void uct_ud_iface_idle_sweep(uct_ud_iface_t *iface, ucs_time_t now)
{
    unsigned count;
    uct_ud_ep_t *ep;

    if (iface->eps.num_private == 0) {
        iface->idle_last = 0;
        return;
    }
    for (count = uct_ud_iface_idle_sweep_count(iface, now); count > 0;
         --count) {
        if (iface->idle_cursor >= iface->eps.used) {
            iface->idle_cursor = 0;
        }
        ep = iface->eps.slots[iface->idle_cursor++];
        if ((ep != NULL) && (ep->flags & UCT_UD_EP_FLAG_PRIVATE)) {
            (void)uct_ud_ep_idle_visit(iface, ep, now);
        }
    }
}

/* The async context's part that needs no polling: resends, the timer's
 * sweeps, acknowledgements owed; never calls user callbacks */
/* Once nothing is outstanding, the memory of a burst goes back: the ACK
 * queue that many eps owed at once, the flush markers' chunks (a flush of
 * every ep) */
static void uct_ud_iface_trim(uct_ud_iface_t *iface)
{
    if (!ucs_list_is_empty(&iface->active) || (iface->acks.count != 0) ||
        !ucs_queue_is_empty(&iface->async_comps)) {
        return;
    }
    if (iface->acks.max > 16) {
        free(iface->acks.eps);
        iface->acks.eps = NULL;
        iface->acks.max = 0;
    }
    (void)ucs_mpool_release_idle(&iface->marker_mp); /* nothing when none */
}

static void uct_ud_iface_async_sweep(uct_ud_iface_t *iface, int timer)
{
    ucs_time_t now;
    uct_ud_ep_t *ep, *tmp;

    if (iface->resend_blocked) {
        uct_ud_iface_resume_resends(iface);
    }
    if (timer) {
        now             = ucs_get_time();
        iface->tick_now = now;
        ucs_list_for_each_safe(ep, tmp, &iface->active, active) {
            uct_ud_ep_timer(iface, ep, now);
        }
        uct_ud_iface_idle_sweep(iface, now);
    }
    if (iface->acks.count != 0) {
        uct_ud_iface_send_acks(iface, timer);
    }
    if (timer) {
        uct_ud_iface_trim(iface);
    }
}

static void uct_ud_iface_async_work(uct_ud_iface_t *iface, int timer)
{
    uct_ud_iface_poll_rx(iface, 1);
    uct_ud_iface_poll_tx(iface);
    uct_ud_iface_async_sweep(iface, timer);
}

/* What the user armed for is waiting: wake the event fd once */
static void uct_ud_iface_check_user_event(uct_ud_iface_t *iface)
{
    uint64_t one = 1;

    if ((iface->armed == 0) ||
        !(((iface->armed & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) &&
           !ucs_queue_is_empty(&iface->async_rx)) ||
          ((iface->armed & UCT_EVENT_SEND_COMP) &&
           !ucs_queue_is_empty(&iface->async_comps)))) {
        return;
    }
    iface->armed = 0;
    if (write(iface->event_fd, &one, sizeof(one)) < 0) {
        ucs_debug("ud_verbs iface %s: writing the event fd failed: %m",
                  iface->super.super.dev_name);
    }
}

/* Arms the receive CQ: any completion while the user waits, else only
 * solicited ones (packets that ask for an acknowledgement) */
static void uct_ud_iface_arm_rx_cq(uct_ud_iface_t *iface)
{
    int ret =
        ibv_req_notify_cq(iface->super.cq[UCT_IB_DIR_RX], iface->armed == 0);

    if (ret != 0) {
        ucs_debug("ud_verbs iface %s: ibv_req_notify_cq failed: %s",
                  iface->super.super.dev_name, strerror(ret));
    }
}

/* Whether the async context should take packets itself: not while the
 * user progresses (packets taken here cost a queue and a second pass,
 * and the thread competes with the user's for the CPU); the timer
 * clears the mark, so a process that stops progressing is served from
 * the next tick on */
static int uct_ud_iface_async_polls(uct_ud_iface_t *iface, int timer)
{
    int progressed = iface->progressed;

    if (timer) {
        iface->progressed = 0;
    }
    return !progressed || (iface->armed != 0);
}

static void uct_ud_iface_timer_cb(int id, ucs_event_set_types_t events,
                                  void *arg)
{
    uct_ud_iface_t *iface = arg;

    if (uct_ud_iface_async_polls(iface, 1)) {
        uct_ud_iface_async_work(iface, 1);
    } else {
        /* The user progressed since the last tick, but what came after
         * its last pass may acknowledge what the sweep would send again:
         * a user thread off its CPU for longer than the resend wait made
         * its eps resend everything the peer had acknowledged. */
        if (!ucs_list_is_empty(&iface->active)) {
            uct_ud_iface_poll_rx(iface, 1);
        }
        uct_ud_iface_async_sweep(iface, 1);
    }
    uct_ud_iface_check_user_event(iface);
}

static void uct_ud_iface_channel_cb(int fd, ucs_event_set_types_t events,
                                    void *arg)
{
    uct_ud_iface_t *iface = arg;
    struct ibv_cq *cq;
    void *cq_context;

    while (ibv_get_cq_event(iface->super.comp_channel, &cq, &cq_context) == 0) {
        ibv_ack_cq_events(cq, 1);
    }
    if (uct_ud_iface_async_polls(iface, 0)) {
        uct_ud_iface_async_work(iface, 0);
    }
    uct_ud_iface_check_user_event(iface);
    uct_ud_iface_arm_rx_cq(iface);
}

static ucs_status_t uct_ud_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    *fd_p = uct_ud_iface(tl_iface)->event_fd;
    return UCS_OK;
}

/*
 * The completion channel belongs to the async handler, so the user's fd
 * is an eventfd that the handler writes when what the user armed for has
 * been taken (a message, or a completion). Arming takes what arrived,
 * and says UCS_ERR_BUSY when something is waiting for progress.
 */
static ucs_status_t uct_ud_iface_event_arm(uct_iface_h tl_iface,
                                           unsigned events)
{
    uct_ud_iface_t *iface = uct_ud_iface(tl_iface);
    ucs_status_t status   = UCS_OK;
    uint64_t value;

    uct_ud_enter(iface);
    while (read(iface->event_fd, &value, sizeof(value)) > 0) {
    }
    uct_ud_iface_async_work(iface, 0);
    if (iface->acks.count != 0) {
        uct_ud_iface_send_acks(iface, 1); /* nobody may wait for them */
    }
    if (!ucs_queue_is_empty(&iface->async_rx) ||
        !ucs_queue_is_empty(&iface->async_comps) || (iface->acks.count != 0) ||
        iface->timeouts_due) {
        status = UCS_ERR_BUSY;
    } else {
        iface->armed = events & (UCT_EVENT_SEND_COMP | UCT_EVENT_RECV |
                                 UCT_EVENT_RECV_SIG);
        uct_ud_iface_arm_rx_cq(iface);
        /* a packet between the poll and the arm raised no event */
        uct_ud_iface_async_work(iface, 0);
        uct_ud_iface_check_user_event(iface);
    }
    uct_ud_leave(iface);
    return status;
}

static void uct_ud_iface_async_event(void *arg,
                                     const uct_ib_async_event_t *event)
{
    uct_ud_iface_t *iface = arg;

    switch (event->type) {
    case IBV_EVENT_DEVICE_FATAL:
        iface->async_fatal = 1;
        break;
    case IBV_EVENT_CQ_ERR:
        if ((event->cq == iface->super.cq[UCT_IB_DIR_TX]) ||
            (event->cq == iface->super.cq[UCT_IB_DIR_RX])) {
            iface->async_fatal = 1;
        }
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
        if ((event->qp_num == iface->qp->qp_num)) {
            iface->async_fatal = 1;
        }
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------------
 * Interface operations
 */

/* An iface flush with a completion: one count per ep that waits */
typedef struct uct_ud_iface_flush {
    uct_completion_t super;
    uct_completion_t *user;
} uct_ud_iface_flush_t;

static void uct_ud_iface_flush_done(uct_completion_t *self)
{
    uct_ud_iface_flush_t *flush =
        ucs_container_of(self, uct_ud_iface_flush_t, super);

    uct_invoke_completion(flush->user, self->status);
    free(flush);
}

/* Flushes @a ep for an iface flush (@a flush NULL: without completion);
 * *ret_p becomes UCS_INPROGRESS or the first error */
static void uct_ud_iface_flush_ep(uct_ud_ep_t *ep, unsigned flags,
                                  uct_ud_iface_flush_t *flush,
                                  ucs_status_t *ret_p)
{
    ucs_status_t status;

    if (uct_ud_desc_queue_is_empty(&ep->unacked)) {
        return;
    }
    if (flush != NULL) {
        ++flush->super.count;
    }
    status = uct_ud_ep_flush(&ep->super.super, flags,
                             (flush != NULL) ? &flush->super : NULL);
    if (status == UCS_INPROGRESS) {
        *ret_p = UCS_INPROGRESS;
        return;
    }
    if (flush != NULL) {
        --flush->super.count;
    }
    if ((status != UCS_OK) && (*ret_p == UCS_OK)) {
        *ret_p = status;
    }
}

static ucs_status_t uct_ud_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                       uct_completion_t *comp)
{
    uct_ud_iface_t *iface       = uct_ud_iface(tl_iface);
    uct_ud_iface_flush_t *flush = NULL;
    ucs_status_t ret            = UCS_OK;
    uct_ud_ep_t *ep;
    unsigned i;

    if (comp != NULL) {
        flush = malloc(sizeof(*flush));
        if (flush == NULL) {
            return UCS_ERR_NO_RESOURCE;
        }
        flush->super.func   = uct_ud_iface_flush_done;
        flush->super.count  = 1; /* dropped at the end */
        flush->super.status = UCS_OK;
        flush->user         = comp;
    }

    uct_ud_enter(iface);
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        /* cancelling fails eps (off the active list) and calls the
         * user's completions, which may destroy eps: walk the ids */
        for (i = 0; i < iface->eps.used; ++i) {
            ep = iface->eps.slots[i];
            if (ep != NULL) {
                uct_ud_iface_flush_ep(ep, flags, flush, &ret);
            }
        }
    } else {
        /* an ep with unacknowledged packets is on the active list
         * (ud_tx.c) or waits to send its CREQ, and flushing it leaves it
         * there: the walk costs what is outstanding, not the number of
         * eps */
        ucs_list_for_each(ep, &iface->active, active) {
            uct_ud_iface_flush_ep(ep, flags, flush, &ret);
        }
        ucs_list_for_each(ep, &iface->creq.waiting, active) {
            uct_ud_iface_flush_ep(ep, flags, flush, &ret);
        }
    }
    if (ret == UCS_OK) {
        if (flush != NULL) {
            ++flush->super.count;
        }
        ret = uct_ud_iface_flush_after_async(
            iface, (flush != NULL) ? &flush->super : NULL, UCS_OK);
        if ((ret != UCS_INPROGRESS) && (flush != NULL)) {
            --flush->super.count;
        }
    }
    uct_ud_leave(iface);

    if (flush != NULL) {
        if (ret == UCS_INPROGRESS) {
            /* the eps' markers finish it */
            uct_invoke_completion(&flush->super, UCS_OK);
        } else {
            free(flush);
        }
    }
    return ret;
}

static ucs_status_t uct_ud_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    (void)tl_iface;
    (void)flags;
    return UCS_OK; /* packets of an ep are applied in order */
}

static ucs_status_t uct_ud_iface_get_address(uct_iface_h tl_iface,
                                             uct_iface_addr_t *addr)
{
    uct_ud_iface_t *iface        = uct_ud_iface(tl_iface);
    uct_ud_iface_addr_t *ud_addr = (uct_ud_iface_addr_t *)addr;

    uint16_t rx_queue_len = htole16((uint16_t)iface->rx.max);

    uct_ud_u24_set(ud_addr->qp_num, iface->qp->qp_num);
    memcpy(&ud_addr->secret, &iface->secret, sizeof(iface->secret));
    memcpy(&ud_addr->rx_queue_len, &rx_queue_len, sizeof(rx_queue_len));
    return UCS_OK;
}

static ucs_status_t uct_ud_iface_query(uct_iface_h tl_iface,
                                       uct_iface_attr_t *attr)
{
    uct_ud_iface_t *iface = uct_ud_iface(tl_iface);
    size_t hdr            = sizeof(uct_ud_hdr_t);
    size_t seg            = iface->config.seg_size;
    size_t mtu            = uct_ib_mtu_bytes(iface->super.path_mtu);

    uct_ib_iface_query(&iface->super, 200e-9, attr);

    attr->cap.flags |=
        UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
        UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
        UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PENDING |
        UCT_IFACE_FLAG_CONNECT_TO_EP | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
        UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
        UCT_IFACE_FLAG_INTER_NODE;

    attr->cap.am.max_short =
        ucs_min(iface->config.max_inline, seg) - hdr - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = seg - hdr;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = seg - hdr;
    attr->cap.am.max_hdr         = ucs_min(seg - hdr, UCT_UD_MAX_AM_HDR);
    attr->cap.am.max_iov         = iface->config.max_iov - 1;
    attr->cap.am.opt_zcopy_align = 64;
    attr->cap.am.align_mtu       = mtu;

    attr->cap.put.max_short = seg - hdr - sizeof(uct_ud_put_hdr_t);
    attr->cap.put.max_bcopy = seg - hdr - sizeof(uct_ud_put_hdr_t);
    attr->cap.put.align_mtu = mtu;

    attr->iface_addr_len = sizeof(uct_ud_iface_addr_t);
    attr->ep_addr_len    = sizeof(uct_ud_ep_addr_t);
    return UCS_OK;
}

static void uct_ud_iface_close(uct_iface_h tl_iface)
{
    uct_ud_iface_t *iface = uct_ud_iface(tl_iface);
    uct_ud_send_desc_t *desc;
    uct_ud_ep_t *ep;
    unsigned i;

    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    if (iface->timer_id >= 0) {
        ucs_async_remove_handler(iface->timer_id, 1);
    }
    if (iface->channel_handler) {
        ucs_async_remove_handler(iface->super.comp_channel->fd, 1);
    }

    uct_ud_enter(iface);
    /* eps that never sent their CREQ: freeing the others must not send
     * theirs */
    while (!ucs_list_is_empty(&iface->creq.waiting)) {
        ep = ucs_list_head(&iface->creq.waiting, uct_ud_ep_t, active);
        ucs_list_del(&ep->active);
        ep->flags &=
            (uint16_t) ~(UCT_UD_EP_FLAG_CREQ_WAIT | UCT_UD_EP_FLAG_CREQ);
    }
    for (i = 0; i < iface->eps.size; ++i) {
        ep = iface->eps.slots[i];
        if (ep == NULL) {
            continue;
        }
        if (!(ep->flags & (UCT_UD_EP_FLAG_PRIVATE | UCT_UD_EP_FLAG_ZOMBIE))) {
            ucs_debug("ud_verbs iface %s: destroying ep %p left open",
                      iface->super.super.dev_name, (void *)ep);
        }
        uct_ud_ep_free(iface, ep);
    }
    while (!ucs_queue_is_empty(&iface->async_rx)) {
        ucs_mpool_put(ucs_queue_pull_elem_non_empty(&iface->async_rx,
                                                    uct_ud_rx_desc_t, queue));
    }
    uct_ud_leave(iface);

    if (ibv_destroy_qp(iface->qp) != 0) {
        ucs_warn("ud_verbs iface %s: ibv_destroy_qp failed: %m",
                 iface->super.super.dev_name);
    }
    /* the QP is gone: nothing reads the descriptors any more */
    while (!ucs_queue_is_empty(&iface->tx.deferred)) {
        desc = ucs_queue_pull_elem_non_empty(&iface->tx.deferred,
                                             uct_ud_send_desc_t, queue);
        ucs_mpool_put(desc);
    }
    ucs_log_limit_flush(&iface->proto_log, UCS_LOG_LEVEL_WARN,
                        "ud_verbs: bad packets from peers");
    uct_ud_iface_ahs_cleanup(iface);
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->eps.slots);
    free(iface->conns.buckets);
    free(iface->acks.eps);
    free(iface->ooo.slots);
    free(iface->ooo.peers);
    ucs_mpool_cleanup(&iface->marker_mp, 1);
    ucs_mpool_cleanup(&iface->tx_mp, 1);
    uct_ib_rxq_cleanup(&iface->rx); /* after the QP */
    uct_ib_iface_cleanup(&iface->super);
    if (iface->own_async != NULL) {
        ucs_async_context_destroy(iface->own_async);
    }
    close(iface->event_fd);
    free(iface);
}

static const uct_iface_ops_t uct_ud_iface_ops = {
    .ep_put_short             = uct_ud_ep_put_short,
    .ep_put_bcopy             = uct_ud_ep_put_bcopy,
    .ep_am_short              = uct_ud_ep_am_short,
    .ep_am_short_iov          = uct_ud_ep_am_short_iov,
    .ep_am_bcopy              = uct_ud_ep_am_bcopy,
    .ep_am_zcopy              = uct_ud_ep_am_zcopy,
    .ep_pending_add           = uct_ud_ep_pending_add,
    .ep_pending_purge         = uct_ud_ep_pending_purge,
    .ep_flush                 = uct_ud_ep_flush,
    .ep_fence                 = uct_ud_ep_fence,
    .ep_create                = uct_ud_ep_create,
    .ep_destroy               = uct_ud_ep_destroy,
    .ep_get_address           = uct_ud_ep_get_address,
    .ep_connect_to_ep         = uct_ud_ep_connect_to_ep,
    .iface_flush              = uct_ud_iface_flush,
    .iface_fence              = uct_ud_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_ud_iface_progress,
    .iface_event_fd_get       = uct_ud_iface_event_fd_get,
    .iface_event_arm          = uct_ud_iface_event_arm,
    .iface_close              = uct_ud_iface_close,
    .iface_query              = uct_ud_iface_query,
    .iface_get_device_address = uct_ib_iface_get_device_address,
    .iface_get_address        = uct_ud_iface_get_address,
    .iface_is_reachable       = uct_ib_iface_is_reachable};

/* Checks the configuration against the device; fills iface->config */
static ucs_status_t
uct_ud_iface_config_init(uct_ud_iface_t *iface,
                         const uct_ud_iface_config_t *config)
{
    const struct ibv_device_attr *dev_attr =
        &uct_ib_iface_device(&iface->super)->dev_attr;
    const char *dev    = iface->super.super.dev_name;
    unsigned queue_len = iface->super.config.tx_queue_len;
    size_t mtu         = uct_ib_mtu_bytes(iface->super.path_mtu);

    if ((config->tx_window == 0) ||
        (config->tx_window > UCT_UD_TX_WINDOW_MAX)) {
        ucs_error("UCX_UD_TX_WINDOW=%u is out of range; use 1-%u",
                  config->tx_window, UCT_UD_TX_WINDOW_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (uct_ib_iface_check_tx_queue_len(dev, queue_len, 16, dev_attr, "") !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->timeout > 0) || !(config->resend_timeout > 0) ||
        !(config->timer_tick > 0)) {
        ucs_error("ud_verbs %s: UCX_UD_TIMEOUT, RESEND_TIMEOUT and "
                  "TIMER_TICK must be positive times",
                  dev);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->reorder_bufs != UCS_ULUNITS_AUTO) &&
        (config->reorder_bufs > iface->super.config.rx_queue_len)) {
        if (config->reorder_bufs == UCS_ULUNITS_INF) {
            ucs_error("UCX_UD_REORDER_BUFS=inf is out of range; use 0 to "
                      "UCX_IB_RX_QUEUE_LEN (%u) or auto",
                      iface->super.config.rx_queue_len);
        } else {
            ucs_error("UCX_UD_REORDER_BUFS=%lu is out of range; use 0 to "
                      "UCX_IB_RX_QUEUE_LEN (%u) or auto",
                      config->reorder_bufs, iface->super.config.rx_queue_len);
        }
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->peer_reorder_bufs == 0) {
        ucs_error("UCX_UD_PEER_REORDER_BUFS=0: a peer needs at least one "
                  "buffer; use 1 or more, auto or inf (set "
                  "UCX_UD_REORDER_BUFS=0 to keep no packet after a gap)");
        return UCS_ERR_INVALID_PARAM;
    }
    if (iface->super.max_inline < sizeof(uct_ud_hdr_t) + sizeof(uint64_t)) {
        ucs_error("ud_verbs %s: inline data of %zu bytes is too small for "
                  "short messages; raise UCX_IB_TX_MIN_INLINE",
                  dev, iface->super.max_inline);
        return UCS_ERR_INVALID_PARAM;
    }

    /* a datagram carries at most one MTU */
    iface->config.seg_size       = ucs_min(iface->super.config.seg_size, mtu);
    iface->config.max_inline     = iface->super.max_inline;
    iface->config.tx_queue_len   = queue_len;
    iface->config.tx_moderation  = ucs_max(1, ucs_min(64, queue_len / 4));
    iface->config.tx_window      = config->tx_window;
    iface->config.max_peer_eps   = config->max_peer_eps;
    iface->config.ack_thresh     = ucs_max(1, config->tx_window / 4);
    iface->config.timeout        = ucs_time_from_sec(config->timeout);
    iface->config.resend_timeout = ucs_time_from_sec(config->resend_timeout);
    iface->config.timer_tick     = ucs_time_from_sec(config->timer_tick);

    /* an ep's stamps: units of 1-2 us, longer when TIMEOUT needs it */
    iface->time.base  = ucs_get_time();
    iface->time.shift = 0;
    while ((UCS_BIT(iface->time.shift)) < ucs_time_from_usec(1)) {
        ++iface->time.shift;
    }
    while ((iface->config.timeout >> iface->time.shift) >
           UCT_UD_TIME_MAX_UNITS) {
        ++iface->time.shift;
    }
    iface->config.max_iov =
        ucs_min(UCT_UD_MAX_ZCOPY_IOV + 1, (unsigned)dev_attr->max_sge);
    iface->config.ipv4 =
        (iface->super.gid_info.roce_version == UCT_IB_ROCE_V2) &&
        (iface->super.gid_info.af == AF_INET);
    iface->config.roce = uct_ib_device_is_port_roce(
        uct_ib_iface_device(&iface->super), iface->super.port_num);

    /* the reorder table and the share of one peer */
    iface->ooo.max = (config->reorder_bufs == UCS_ULUNITS_AUTO)
                         ? iface->super.config.rx_queue_len / 2
                         : (unsigned)config->reorder_bufs;
    if (config->peer_reorder_bufs == UCS_ULUNITS_AUTO) {
        iface->ooo.share = ucs_max(1, iface->ooo.max / 4);
    } else if (config->peer_reorder_bufs == UCS_ULUNITS_INF) {
        iface->ooo.share = ucs_max(1, iface->ooo.max);
    } else {
        iface->ooo.share = (unsigned)ucs_min(config->peer_reorder_bufs,
                                             ucs_max(1, iface->ooo.max));
    }
    return UCS_OK;
}

/* The UD QP, moved to RTS */
static ucs_status_t uct_ud_iface_create_qp(uct_ud_iface_t *iface)
{
    struct ibv_qp_init_attr qp_attr;
    struct ibv_qp_attr attr;
    ucs_status_t status;

    memset(&qp_attr, 0, sizeof(qp_attr));
    qp_attr.qp_type          = IBV_QPT_UD;
    qp_attr.send_cq          = iface->super.cq[UCT_IB_DIR_TX];
    qp_attr.recv_cq          = iface->super.cq[UCT_IB_DIR_RX];
    qp_attr.cap.max_send_wr  = iface->config.tx_queue_len;
    qp_attr.cap.max_recv_wr  = iface->super.config.rx_queue_len;
    qp_attr.cap.max_send_sge = iface->config.max_iov;
    qp_attr.cap.max_recv_sge = 1;
    qp_attr.sq_sig_all       = 0;
    status = uct_ib_iface_create_qp(&iface->super, &qp_attr, &iface->qp);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_iface_qp_init(&iface->super, iface->qp, 0, UCT_UD_QKEY);
    if (status != UCS_OK) {
        goto err;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    status        = uct_ib_qp_modify(iface->qp, &attr, IBV_QP_STATE, "RTR");
    if (status != UCS_OK) {
        goto err;
    }
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn   = 0;
    status =
        uct_ib_qp_modify(iface->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
    if (status != UCS_OK) {
        goto err;
    }
    return UCS_OK;

err:
    ibv_destroy_qp(iface->qp);
    return status;
}

/* The timer and the channel handler on the worker's async context */
static ucs_status_t uct_ud_iface_async_init(uct_ud_iface_t *iface,
                                            uct_worker_h worker)
{
    ucs_async_context_t *async = uct_worker_priv(worker)->async;
    ucs_status_t status;
    int ret;

    if (async == NULL) {
        status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                          &iface->own_async);
        if (status != UCS_OK) {
            return status;
        }
        async = iface->own_async;
    }
    iface->async = async;

    status = ucs_async_add_timer(async->mode, iface->config.timer_tick,
                                 uct_ud_iface_timer_cb, iface, async,
                                 &iface->timer_id);
    if (status != UCS_OK) {
        ucs_error("ud_verbs %s: could not add the interface timer: %s",
                  iface->super.super.dev_name, ucs_status_string(status));
        iface->timer_id = -1;
        return status;
    }

    ret = ibv_req_notify_cq(iface->super.cq[UCT_IB_DIR_RX], 1);
    if (ret != 0) {
        ucs_error("ud_verbs %s: ibv_req_notify_cq failed: %s",
                  iface->super.super.dev_name, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }
    status = ucs_async_set_event_handler(
        async->mode, iface->super.comp_channel->fd, UCS_EVENT_SET_EVREAD,
        uct_ud_iface_channel_cb, iface, async);
    if (status != UCS_OK) {
        ucs_error("ud_verbs %s: could not watch the completion channel: "
                  "%s",
                  iface->super.super.dev_name, ucs_status_string(status));
        return status;
    }
    iface->channel_handler = 1;
    return UCS_OK;
}

static ucs_status_t uct_ud_iface_open(uct_md_h md, uct_worker_h worker,
                                      const uct_iface_params_t *params,
                                      const uct_iface_config_t *tl_config,
                                      uct_iface_h *iface_p)
{
    const uct_ud_verbs_iface_config_t *config =
        (const uct_ud_verbs_iface_config_t *)tl_config;
    const uct_ib_iface_config_t *ib_config = &config->super.super;
    uct_iface_mpool_params_t mp_params;
    uct_ib_iface_init_attr_t init_attr;
    uct_ib_rxq_params_t rxq_params;
    ucs_mpool_params_t marker_params;
    uct_ud_iface_t *iface;
    ucs_status_t status;

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("ud_verbs: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }
    iface->timer_id = -1;
    iface->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (iface->event_fd < 0) {
        ucs_error("ud_verbs: eventfd() failed: %m; raise ulimit -n");
        free(iface);
        return UCS_ERR_IO_ERROR;
    }

    memset(&init_attr, 0, sizeof(init_attr));
    init_attr.tx_cq_len      = ib_config->tx.queue_len;
    init_attr.rx_cq_len      = ib_config->rx.queue_len;
    init_attr.qp_type        = IBV_QPT_UD;
    init_attr.async_event_cb = uct_ud_iface_async_event;
    status = uct_ib_iface_init(&iface->super, &uct_ud_iface_ops, md, worker,
                               params, ib_config, &init_attr);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_ud_iface_config_init(iface, &config->super);
    if (status != UCS_OK) {
        goto err_ib_cleanup;
    }
    iface->tx.available = (int)ucs_min(iface->config.tx_queue_len,
                                       iface->super.cq_len[UCT_IB_DIR_TX]) -
                          1;

    /* receive: [rx desc ... headroom | GRH area | ud header][payload] */
    memset(&rxq_params, 0, sizeof(rxq_params));
    rxq_params.name      = UCT_UD_VERBS_NAME;
    rxq_params.mp_name   = "ud_recv_desc";
    rxq_params.priv_size = sizeof(uct_ud_rx_desc_t);
    rxq_params.hdr_len   = UCT_UD_GRH_LEN + sizeof(uct_ud_hdr_t);
    rxq_params.seg_size  = iface->config.seg_size - sizeof(uct_ud_hdr_t);
    rxq_params.mp        = &iface->rx_mp;
    rxq_params.layout    = &iface->rx_layout;
    rxq_params.release   = &iface->rx_release;
    rxq_params.max_batch = UCT_UD_RX_BATCH_MAX;
    rxq_params.init_fill = iface->super.config.rx_queue_len;
    status = uct_ib_rxq_init(&iface->rx, &iface->super, &rxq_params);
    if (status != UCS_OK) {
        goto err_ib_cleanup;
    }

    /* send: [desc][ud header][data] */
    memset(&mp_params, 0, sizeof(mp_params));
    mp_params.elem_size = sizeof(uct_ud_send_desc_t) + iface->config.seg_size;
    mp_params.alignment = 64;
    mp_params.align_offset    = sizeof(uct_ud_send_desc_t);
    mp_params.elems_per_chunk = 128;
    mp_params.max_elems       = UINT_MAX;
    mp_params.obj_init        = uct_ud_tx_obj_init;
    mp_params.name            = "ud_send_desc";
    status =
        uct_iface_mpool_init(&iface->super.super, &iface->tx_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_rxq;
    }

    ucs_mpool_params_reset(&marker_params);
    marker_params.elem_size       = sizeof(uct_ud_send_desc_t);
    marker_params.elems_per_chunk = 64;
    marker_params.name            = "ud_flush_marker";
    status = ucs_mpool_init(&iface->marker_mp, &marker_params);
    if (status != UCS_OK) {
        goto err_tx_mp;
    }

    iface->ahs.buckets   = calloc(16, sizeof(*iface->ahs.buckets));
    iface->conns.buckets = malloc(64 * sizeof(*iface->conns.buckets));
    if ((iface->ahs.buckets == NULL) || (iface->conns.buckets == NULL)) {
        ucs_error("ud_verbs %s: no memory for the interface tables",
                  iface->super.super.dev_name);
        status = UCS_ERR_NO_MEMORY;
        goto err_tables;
    }
    memset(iface->conns.buckets, 0xff, 64 * sizeof(*iface->conns.buckets));
    iface->ahs.mask   = 15;
    iface->conns.mask = 63;
    iface->ooo.mask   = 1;
    while (iface->ooo.mask < 2 * iface->ooo.max + 1) {
        iface->ooo.mask = (iface->ooo.mask << 1) | 1; /* at most half full */
    }
    iface->ooo.peers_mask = iface->ooo.mask; /* a holder holds one at least */
    iface->ooo.slots = calloc(iface->ooo.mask + 1, sizeof(*iface->ooo.slots));
    iface->ooo.peers =
        calloc(iface->ooo.peers_mask + 1, sizeof(*iface->ooo.peers));
    if ((iface->ooo.slots == NULL) || (iface->ooo.peers == NULL)) {
        ucs_error("ud_verbs %s: no memory for the reorder table",
                  iface->super.super.dev_name);
        status = UCS_ERR_NO_MEMORY;
        goto err_tables;
    }
    ucs_list_head_init(&iface->active);
    ucs_list_head_init(&iface->creq.waiting);
    iface->creq.cwnd = UINT16_MAX; /* an ep's creq_window limits first */
    ucs_queue_head_init(&iface->async_rx);
    ucs_queue_head_init(&iface->async_comps);
    ucs_queue_head_init(&iface->tx.deferred);
    ucs_arbiter_init(&iface->arbiter);
    ucs_log_limit_init(&iface->proto_log);
    if (ucs_sys_random_bytes(&iface->secret, sizeof(iface->secret)) != UCS_OK) {
        ucs_error("ud_verbs %s: no random bytes for the interface secret",
                  iface->super.super.dev_name);
        status = UCS_ERR_IO_ERROR;
        goto err_tables;
    }

    status = uct_ud_iface_create_qp(iface);
    if (status != UCS_OK) {
        goto err_tables;
    }

    status = uct_ib_rxq_start(&iface->rx, iface->qp, NULL);
    if (status != UCS_OK) {
        goto err_qp;
    }

    status = uct_ud_iface_async_init(iface, worker);
    if (status != UCS_OK) {
        goto err_async;
    }

    *iface_p = &iface->super.super.super;
    return UCS_OK;

err_async:
    if (iface->channel_handler) {
        ucs_async_remove_handler(iface->super.comp_channel->fd, 1);
    }
    if (iface->timer_id >= 0) {
        ucs_async_remove_handler(iface->timer_id, 1);
    }
    if (iface->own_async != NULL) {
        ucs_async_context_destroy(iface->own_async);
    }
err_qp:
    ibv_destroy_qp(iface->qp);
err_tables:
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->ooo.slots);
    free(iface->ooo.peers);
    free(iface->ahs.buckets);
    free(iface->conns.buckets);
    ucs_mpool_cleanup(&iface->marker_mp, 0);
err_tx_mp:
    ucs_mpool_cleanup(&iface->tx_mp, 0);
err_rxq:
    uct_ib_rxq_cleanup(&iface->rx);
err_ib_cleanup:
    uct_ib_iface_cleanup(&iface->super);
err_free:
    close(iface->event_fd);
    free(iface);
    return status;
}

/* Where an unsigned field of the interface is, and its size */
#define UCT_UD_IFACE_FIELD(_field)        \
    ucs_offsetof(uct_ud_iface_t, _field), \
        sizeof(((uct_ud_iface_t *)NULL)->_field)

/* The unsigned fields shown in the interface's object tree */
static const struct {
    const char *name;
    size_t offset;
    size_t size;
} uct_ud_iface_vfs_uints[] = {
    {"rx_posted", UCT_UD_IFACE_FIELD(rx.posted)},
    {"endpoints", UCT_UD_IFACE_FIELD(eps.count)},
    {"address_handles", UCT_UD_IFACE_FIELD(ahs.count)},
    {"peer_endpoints", UCT_UD_IFACE_FIELD(eps.num_private)},
    {"closing_endpoints", UCT_UD_IFACE_FIELD(eps.num_zombies)},
    {"peer_disconnects", UCT_UD_IFACE_FIELD(stats.disc_rx)},
    {"creq_refused", UCT_UD_IFACE_FIELD(stats.creq_refused)},
    {"rx_dropped", UCT_UD_IFACE_FIELD(stats.rx_dropped)},
    {"rx_stale", UCT_UD_IFACE_FIELD(stats.rx_stale)},
    {"rx_duplicates", UCT_UD_IFACE_FIELD(stats.rx_dup)},
    {"rx_out_of_order", UCT_UD_IFACE_FIELD(stats.rx_ooo)},
    {"rx_held_after_gap", UCT_UD_IFACE_FIELD(ooo.count)},
    {"rx_peers_holding", UCT_UD_IFACE_FIELD(ooo.num_peers)},
    {"rx_over_share", UCT_UD_IFACE_FIELD(stats.rx_over_share)},
    {"rx_evicted", UCT_UD_IFACE_FIELD(stats.rx_evicted)},
    {"rx_reorder_full", UCT_UD_IFACE_FIELD(stats.rx_ooo_full)},
    {"tx_resent", UCT_UD_IFACE_FIELD(stats.tx_resent)},
    {"tx_acks", UCT_UD_IFACE_FIELD(stats.tx_acks)},
    {"tx_ack_requests", UCT_UD_IFACE_FIELD(stats.tx_ack_reqs)},
    {"tx_no_slot", UCT_UD_IFACE_FIELD(stats.tx_no_slot)},
    {"put_denied", UCT_UD_IFACE_FIELD(stats.put_denied)},
    {"creq_denied", UCT_UD_IFACE_FIELD(stats.creq_denied)},
    {"creq_outstanding", UCT_UD_IFACE_FIELD(creq.outstanding)},
    {"creq_queued", UCT_UD_IFACE_FIELD(stats.creq_queued)},
    {"creq_resent", UCT_UD_IFACE_FIELD(stats.creq_resent)},
    {"creq_cwnd", UCT_UD_IFACE_FIELD(creq.cwnd)},
    {"creq_cwnd_cuts", UCT_UD_IFACE_FIELD(stats.creq_cwnd_cuts)},
    {"idle_probes", UCT_UD_IFACE_FIELD(stats.idle_probes)},
    {"peer_reclaimed", UCT_UD_IFACE_FIELD(stats.peer_reclaimed)}};

/* Object tree files of the interface */
static void uct_ud_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_ud_iface_t *iface = uct_ud_iface(tl_iface);
    size_t i;

    for (i = 0; i < ucs_static_array_size(uct_ud_iface_vfs_uints); ++i) {
        uct_vfs_add_uint(
            iface, (char *)iface + uct_ud_iface_vfs_uints[i].offset,
            uct_ud_iface_vfs_uints[i].size, uct_ud_iface_vfs_uints[i].name);
    }
    uct_vfs_add_value(iface, iface->ooo.max, "reorder_bufs");
    uct_vfs_add_value(iface, iface->ooo.share, "peer_reorder_bufs");
    uct_vfs_add_value(iface, iface->config.max_inline, "max_inline");
    uct_vfs_add_value(iface, iface->config.tx_window, "tx_window");
}

uct_tl_t uct_ud_verbs_tl = {
    .name           = UCT_UD_VERBS_NAME,
    .query_devices  = uct_ib_iface_query_devices,
    .iface_open     = uct_ud_iface_open,
    .config         = {.name   = "UD verbs transport",
                       .prefix = "UD_VERBS_",
                       .table  = uct_ud_verbs_iface_config_table,
                       .size   = sizeof(uct_ud_verbs_iface_config_t)},
    .iface_vfs_init = uct_ud_iface_vfs_init,
    .ep_vfs_init    = uct_ud_ep_vfs_init};
