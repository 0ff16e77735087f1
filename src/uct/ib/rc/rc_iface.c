/*
 * rc_verbs interfaces: configuration, the shared receive queue, progress
 * (receive and send completions, grants, pending), events, flush, query.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "rc.h"

#include <uct/base/uct_vfs.h>
#include <ucs/sys/sys.h>
#include <ucs/time/time.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Configuration: rc_verbs (RC_VERBS_) embeds rc (RC_) embeds ib (IB_)
 */

/* Send work requests of 3 SGEs or 48 bytes inline: on rxe a send slot is
 * its 208-byte header plus max(16 * SGEs, inline) rounded up to a power
 * of two, so these fill a 256-byte slot exactly (64 bytes inline or a
 * fourth SGE would double it) */
static ucs_config_field_t uct_rc_iface_config_table[] = {
    {"IB_", "TX_MIN_INLINE=48;TX_MIN_SGE=3", NULL,
     ucs_offsetof(uct_rc_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"TIMEOUT", "1.0s",
     "Time a send waits for the peer's acknowledgement before it is sent "
     "again (rounded up to 4.096 us * 2^N; under emulation use 1 s or more)",
     ucs_offsetof(uct_rc_iface_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"RETRY_COUNT", "6",
     "Times an unacknowledged send is sent again before the endpoint fails "
     "with UCS_ERR_ENDPOINT_TIMEOUT (0-7; Soft-RoCE takes 7 as for ever, "
     "so a dead peer would never be reported)",
     ucs_offsetof(uct_rc_iface_config_t, retry_count), UCS_CONFIG_TYPE_UINT},

    {"RNR_TIMEOUT", "1ms",
     "Delay the peer asks for when its receive queue is empty",
     ucs_offsetof(uct_rc_iface_config_t, rnr_timeout), UCS_CONFIG_TYPE_TIME},

    {"RNR_RETRY_COUNT", "7",
     "Times a send refused for an empty receive queue is retried (7: for "
     "ever, so a receiver that is slow to refill is waited for)",
     ucs_offsetof(uct_rc_iface_config_t, rnr_retry_count),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_RD_ATOMIC", "4",
     "RDMA reads and atomics in flight per endpoint, each way (capped at "
     "the device's max_qp_rd_atom)",
     ucs_offsetof(uct_rc_iface_config_t, max_rd_atomic), UCS_CONFIG_TYPE_UINT},

    {"FC_WND_SIZE", "64",
     "Active messages an endpoint may send before the peer grants more "
     "(1-32767); the peer grants at half of it",
     ucs_offsetof(uct_rc_iface_config_t, fc_wnd_size), UCS_CONFIG_TYPE_UINT},

    {NULL}};

ucs_config_field_t uct_rc_verbs_iface_config_table[] = {
    {"RC_", "", NULL, ucs_offsetof(uct_rc_verbs_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_rc_iface_config_table)},

    {"TX_CQ_MODERATION", "64",
     "Send requests per signaled completion (capped at a quarter of "
     "TX_QUEUE_LEN); zcopy, GET, atomics and flush are always signaled",
     ucs_offsetof(uct_rc_verbs_iface_config_t, tx_cq_moderation),
     UCS_CONFIG_TYPE_UINT},

    {NULL}};

/* ------------------------------------------------------------------------
 * Descriptors, moderation, credits (the SRQ is filled by ../base/ib_rxq.c)
 */

/* The fields of a receive descriptor before its payload (8 bytes) */
typedef struct uct_rc_rx_desc {
    uct_ib_rx_desc_t super;
    uint32_t reserved;
} uct_rc_rx_desc_t;

static void uct_rc_tx_obj_init(uct_iface_h tl_iface, void *obj, uct_mem_h memh)
{
    ((uct_rc_op_t *)obj)->lkey = ((uct_ib_mem_t *)memh)->lkey;
}

void uct_rc_iface_update_moderation(uct_rc_iface_t *iface)
{
    unsigned budget = iface->super.cq_len[UCT_IB_DIR_TX] / 2;
    unsigned per_ep = budget / ucs_max(1, iface->eps.count);

    iface->config.tx_moderation =
        ucs_max(1, ucs_min(iface->config.tx_moderation_max, per_ep));
}

unsigned uct_rc_iface_tx_rescue(uct_rc_iface_t *iface)
{
    const int floor = -(int)iface->config.tx_cq_reserve;
    unsigned mask   = iface->eps.mask;
    unsigned i      = iface->rescue.cursor & mask;
    unsigned scan, posted = 0;
    uct_rc_ep_t *ep;
    uint8_t fence;

    for (scan = 0; (scan < UCT_RC_RESCUE_SCAN) && (scan <= mask) &&
                   (iface->cq_available > floor);
         ++scan, i = (i + 1) & mask) {
        ep = iface->eps.slots[i];
        /* idle: its last signaled request is done, so what it holds
         * comes back only with a signaled request of its own */
        if ((ep == NULL) || (ep->unsignaled == 0) ||
            (uct_rc_ep_unretired(ep) != ep->unsignaled)) {
            continue;
        }
        if (ep->flags & UCT_RC_EP_FLAG_FAILED) {
            /* failed (or destroyed) without its flush marker */
            posted += (unsigned)uct_rc_ep_post_flush_marker(iface, ep, floor);
        } else if (ep->tx_available > 0) {
            /* a fence the user asked for stays for the user's next
             * request: the marker orders nothing */
            fence = ep->flags & UCT_RC_EP_FLAG_FENCE;
            ep->flags &= (uint8_t)~UCT_RC_EP_FLAG_FENCE;
            if (uct_rc_ep_post_marker(iface, ep, NULL) == UCS_OK) {
                ++posted;
            }
            ep->flags |= fence;
        }
    }
    iface->rescue.cursor = i;
    iface->rescue.markers += posted;
    if (posted != 0) {
        ucs_debug("rc_verbs iface %s: send CQ used up, %u idle eps "
                  "posted a signaled marker",
                  iface->super.super.dev_name, posted);
    }
    return posted;
}

/* A peer's grant or piggybacked credits */
static void uct_rc_ep_add_credits(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                  uint16_t credits)
{
    int total = ep->fc_credits + (int)credits;

    if (ucs_unlikely(total > (int)iface->config.fc_wnd)) {
        ucs_warn_limited(&iface->proto_log,
                         "rc_verbs qp 0x%x: peer granted "
                         "%u credits, more than the window %u; capped",
                         ep->qp->qp_num, credits, iface->config.fc_wnd);
        total = (int)iface->config.fc_wnd;
    }
    if ((ep->fc_credits <= 0) && (total > 0)) {
        uct_rc_ep_schedule(iface, ep);
    }
    ep->fc_credits = (int16_t)total;
}

void uct_rc_iface_queue_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    unsigned max;
    void *eps;

    if (ep->flags & UCT_RC_EP_FLAG_GRANT_Q) {
        return;
    }
    if (iface->grants.count == iface->grants.max) {
        /* one slot per ep at most: this grows with the eps that owe */
        max = ucs_max(16, iface->grants.max * 2);
        eps = realloc(iface->grants.eps, max * sizeof(*iface->grants.eps));
        if (eps == NULL) {
            /* the next delivery on this ep tries again */
            ucs_error_limited(&iface->proto_log,
                              "rc_verbs iface %s: no "
                              "memory for the grant queue (%u eps)",
                              iface->super.super.dev_name, max);
            return;
        }
        iface->grants.eps = eps;
        iface->grants.max = max;
    }
    ep->flags |= UCT_RC_EP_FLAG_GRANT_Q;
    iface->grants.eps[iface->grants.count++] = ep;
}

void uct_rc_iface_unqueue_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    unsigned i;

    if (!(ep->flags & UCT_RC_EP_FLAG_GRANT_Q)) {
        return;
    }
    for (i = 0; i < iface->grants.count; ++i) {
        if (iface->grants.eps[i] == ep) {
            memmove(&iface->grants.eps[i], &iface->grants.eps[i + 1],
                    (iface->grants.count - i - 1) * sizeof(*iface->grants.eps));
            --iface->grants.count;
            break;
        }
    }
    ep->flags &= (uint8_t)~UCT_RC_EP_FLAG_GRANT_Q;
}

/* ------------------------------------------------------------------------
 * QP number -> endpoint table (rc.h)
 */

static ucs_status_t uct_rc_ep_table_init(uct_rc_ep_table_t *table,
                                         unsigned size)
{
    table->slots = calloc(size, sizeof(*table->slots));
    if (table->slots == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    table->mask  = size - 1;
    table->count = 0;
    return UCS_OK;
}

static void uct_rc_ep_table_put(uct_rc_ep_table_t *table, uct_rc_ep_t *ep)
{
    unsigned i = uct_rc_ep_table_home(table, ep->qp->qp_num);

    while (table->slots[i] != NULL) {
        i = (i + 1) & table->mask;
    }
    table->slots[i] = ep;
    ++table->count;
}

ucs_status_t uct_rc_ep_table_add(uct_rc_ep_table_t *table, uct_rc_ep_t *ep)
{
    uct_rc_ep_table_t bigger;
    unsigned i;

    if ((table->count + 1) * 4 > (table->mask + 1) * 3) {
        if (uct_rc_ep_table_init(&bigger, (table->mask + 1) * 2) != UCS_OK) {
            return UCS_ERR_NO_MEMORY;
        }
        for (i = 0; i <= table->mask; ++i) {
            if (table->slots[i] != NULL) {
                uct_rc_ep_table_put(&bigger, table->slots[i]);
            }
        }
        free(table->slots);
        *table = bigger;
    }
    uct_rc_ep_table_put(table, ep);
    return UCS_OK;
}

void uct_rc_ep_table_remove(uct_rc_ep_table_t *table, uct_rc_ep_t *ep)
{
    unsigned i = uct_rc_ep_table_home(table, ep->qp->qp_num);
    unsigned j, home;

    while (table->slots[i] != ep) {
        if (table->slots[i] == NULL) {
            return; /* not in the table */
        }
        i = (i + 1) & table->mask;
    }

    /* move back the entries after the hole that may fill it: those whose
     * home is not between the hole and their slot */
    table->slots[i] = NULL;
    for (j = (i + 1) & table->mask; table->slots[j] != NULL;
         j = (j + 1) & table->mask) {
        home = uct_rc_ep_table_home(table, table->slots[j]->qp->qp_num);
        if (((j - home) & table->mask) >= ((j - i) & table->mask)) {
            table->slots[i] = table->slots[j];
            table->slots[j] = NULL;
            i               = j;
        }
    }
    --table->count;
}

/* ------------------------------------------------------------------------
 * First PSNs
 */

ucs_status_t uct_rc_iface_new_psn(uct_rc_iface_t *iface, uint32_t *psn_p)
{
    if (iface->psn.left == 0) {
        if (ucs_sys_random_bytes(iface->psn.pool, sizeof(iface->psn.pool)) !=
            UCS_OK) {
            ucs_error("rc_verbs %s: no random bytes for a first PSN; a "
                      "guessable one would let others inject packets",
                      iface->super.super.dev_name);
            return UCS_ERR_IO_ERROR;
        }
        iface->psn.left = UCT_RC_PSN_BATCH;
    }
    /* each is used once, and the pool keeps no copy of it */
    --iface->psn.left;
    *psn_p = iface->psn.pool[iface->psn.left] & 0xffffff;
    iface->psn.pool[iface->psn.left] = 0;
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Received messages
 */

/* Why a message was dropped (a status of uct_rc_hdr_unpack() or ours) */
static const char *uct_rc_iface_rx_error(ucs_status_t status)
{
    if (status == UCS_ERR_UNSUPPORTED) {
        return "bytes after a credit grant";
    }
    return ucs_status_string(status);
}

/* One received message */
static void uct_rc_iface_rx_one(uct_rc_iface_t *iface, struct ibv_wc *wc)
{
    void *obj = (void *)(uintptr_t)wc->wr_id;
    uct_rc_hdr_t *hdr;
    uct_rc_ep_t *ep;
    ucs_status_t status;
    uint16_t credits;
    uint8_t am_id;
    void *payload;
    unsigned length;

    --iface->rx.posted;
    if (ucs_unlikely(wc->status != IBV_WC_SUCCESS)) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR) {
            uct_ib_iface_log_wc_error(&iface->super, wc, "receive");
            ep = uct_rc_ep_table_find(&iface->eps, wc->qp_num);
            if (ep != NULL) {
                uct_rc_ep_set_failed(ep, UCS_ERR_CONNECTION_RESET);
                uct_rc_ep_check_state(iface, ep);
            }
        }
        ucs_mpool_put(obj);
        return;
    }

    if (ucs_unlikely(wc->wc_flags & IBV_WC_WITH_IMM)) {
        /* a send or an RDMA write with immediate data, which our sends
         * never carry (a write leaves the buffer as it was) */
        ucs_warn_limited(&iface->proto_log,
                         "rc_verbs iface %s: dropped a %u-byte message "
                         "from qp 0x%x: immediate data",
                         iface->super.super.dev_name, wc->byte_len, wc->qp_num);
        ucs_mpool_put(obj);
        return;
    }

    hdr    = uct_rx_desc_recv_buf(&iface->rx_layout, obj);
    status = uct_rc_hdr_unpack(hdr, wc->byte_len, &am_id, &credits);
    ep     = uct_rc_ep_table_find(&iface->eps, wc->qp_num);
    if (ucs_unlikely((status != UCS_OK) || (ep == NULL) ||
                     (ep->flags & UCT_RC_EP_FLAG_ZOMBIE))) {
        if (status != UCS_OK) {
            ucs_warn_limited(&iface->proto_log,
                             "rc_verbs iface %s: dropped "
                             "a %u-byte message from qp 0x%x: %s",
                             iface->super.super.dev_name, wc->byte_len,
                             wc->qp_num, uct_rc_iface_rx_error(status));
        }
        ucs_mpool_put(obj);
        return;
    }

    payload = hdr + 1;
    length  = wc->byte_len - (unsigned)sizeof(*hdr);
    if (credits != 0) {
        uct_rc_ep_add_credits(iface, ep, credits);
    }

    if (am_id == UCT_RC_HDR_GRANT) {
        ucs_mpool_put(obj);
        return;
    }
    /* the credit goes back once the message is handled */
    if (++ep->fc_grant >= ep->grant_thresh) {
        uct_rc_iface_queue_grant(iface, ep);
    }

    if (ucs_unlikely(iface->super.super.am_tracer != NULL)) {
        uct_iface_trace_am(&iface->super.super, UCT_AM_TRACE_TYPE_RECV, am_id,
                           payload, length);
    }
    uct_rx_desc_set_release(&iface->rx_layout, obj, &iface->rx_release.super);
    status = uct_iface_invoke_am(&iface->super.super, am_id, payload, length,
                                 UCT_CB_PARAM_FLAG_DESC);
    if (status != UCS_INPROGRESS) {
        ucs_mpool_put(obj);
    }
}

/* ------------------------------------------------------------------------
 * Send completions
 */

static void uct_rc_iface_tx_one(uct_rc_iface_t *iface, struct ibv_wc *wc)
{
    uint16_t sn = (uint16_t)wc->wr_id;
    ucs_status_t status;
    uct_rc_ep_t *ep;

    ep = uct_rc_ep_table_find(&iface->eps, wc->qp_num);
    if (ucs_unlikely(ep == NULL)) {
        return; /* of an ep already freed */
    }

    if (ucs_likely(wc->status == IBV_WC_SUCCESS)) {
        uct_rc_ep_retire(iface, ep, sn, UCS_OK);
        if (ucs_unlikely(ep->flags &
                         (UCT_RC_EP_FLAG_FAILED | UCT_RC_EP_FLAG_ZOMBIE))) {
            /* its last request may have completed before the QP failed
             * or was flushed */
            uct_rc_ep_check_state(iface, ep);
            return;
        }
        uct_rc_ep_schedule(iface, ep);
        return;
    }

    if (wc->status == IBV_WC_WR_FLUSH_ERR) {
        status = (ep->flags & UCT_RC_EP_FLAG_FAILED) ? (ucs_status_t)ep->status
                                                     : UCS_ERR_CANCELED;
    } else {
        status = uct_ib_wc_status(wc->status);
        if (!(ep->flags & (UCT_RC_EP_FLAG_FAILED | UCT_RC_EP_FLAG_ZOMBIE))) {
            uct_ib_iface_log_wc_error(&iface->super, wc, "send");
        }
        /* the requests before this one were done */
        uct_rc_ep_retire(iface, ep, (uint16_t)(sn - 1), UCS_OK);
        uct_rc_ep_set_failed(ep, status);
        if (ep->flags & UCT_RC_EP_FLAG_ZOMBIE) {
            status = UCS_ERR_CANCELED;
        } else {
            status = (ucs_status_t)ep->status;
        }
    }
    uct_rc_ep_retire(iface, ep, sn, status);
    uct_rc_ep_check_state(iface, ep);
}

/* Explicit grants owed to peers, in the order they were owed */
static void uct_rc_iface_send_grants(uct_rc_iface_t *iface)
{
    unsigned done = 0;
    uct_rc_ep_t *ep;

    while (done < iface->grants.count) {
        ep = iface->grants.eps[done];
        if (uct_rc_ep_send_grant(iface, ep) != UCS_OK) {
            break; /* no slot now: again after completions */
        }
        ep->flags &= (uint8_t)~UCT_RC_EP_FLAG_GRANT_Q;
        ++done;
    }
    if (done != 0) {
        memmove(iface->grants.eps, &iface->grants.eps[done],
                (iface->grants.count - done) * sizeof(*iface->grants.eps));
        iface->grants.count -= done;
    }
}

static ucs_arbiter_cb_result_t
uct_rc_iface_pending_cb(ucs_arbiter_t *arbiter, ucs_arbiter_group_t *group,
                        ucs_arbiter_elem_t *elem, void *arg)
{
    uct_rc_iface_t *iface = arg;
    uct_rc_ep_t *ep       = ucs_container_of(group, uct_rc_ep_t, pending.group);

    return uct_ib_iface_pending_dispatch(arbiter, group, elem,
                                         ep->flags & UCT_RC_EP_FLAG_FAILED,
                                         &iface->cq_available, 1);
}

/* Device events seen by the async thread */
static void uct_rc_iface_async_progress(uct_rc_iface_t *iface)
{
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init_attr;
    uct_rc_ep_t *ep;
    unsigned i;

    if (iface->fatal) {
        uct_rc_ep_table_for_each(ep, i, &iface->eps) {
            uct_rc_ep_set_failed(ep, UCS_ERR_IO_ERROR);
        }
    }
    if (iface->async_qp_error) {
        iface->async_qp_error = 0;
        uct_rc_ep_table_for_each(ep, i, &iface->eps) {
            if ((ibv_query_qp(ep->qp, &attr, IBV_QP_STATE, &init_attr) == 0) &&
                (attr.qp_state == IBV_QPS_ERR)) {
                uct_rc_ep_set_failed(ep, UCS_ERR_CONNECTION_RESET);
            }
        }
    }
}

unsigned uct_rc_iface_progress(uct_iface_h tl_iface)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);
    struct ibv_wc wc[32];
    unsigned count = 0;
    int i, n;

    n = uct_ib_iface_poll_cq(&iface->super, UCT_IB_DIR_RX, wc,
                             (int)ucs_min(iface->super.config.rx_max_poll, 32));
    for (i = 0; i < n; ++i) {
        uct_rc_iface_rx_one(iface, &wc[i]);
    }
    count += (n > 0) ? (unsigned)n : 0;
    if (ucs_unlikely(iface->rx.low)) {
        uct_ib_rxq_grow(&iface->rx);
    }
    uct_ib_rxq_refill(&iface->rx);

    n = uct_ib_iface_poll_cq(&iface->super, UCT_IB_DIR_TX, wc,
                             (int)ucs_min(iface->super.config.tx_max_poll, 32));
    for (i = 0; i < n; ++i) {
        uct_rc_iface_tx_one(iface, &wc[i]);
    }
    count += (n > 0) ? (unsigned)n : 0;
    if (ucs_unlikely(iface->cq_available <= 0)) {
        count += uct_rc_iface_tx_rescue(iface);
    }

    if (ucs_unlikely(iface->fatal || iface->async_qp_error)) {
        uct_rc_iface_async_progress(iface);
    }
    if (iface->grants.count != 0) {
        uct_rc_iface_send_grants(iface);
    }
    if (!ucs_arbiter_is_empty(&iface->arbiter)) {
        ucs_arbiter_dispatch(&iface->arbiter, 1, uct_rc_iface_pending_cb,
                             iface);
    }
    return count;
}

static void uct_rc_iface_async_event(void *arg,
                                     const uct_ib_async_event_t *event)
{
    uct_rc_iface_t *iface = arg;

    switch (event->type) {
    case IBV_EVENT_SRQ_LIMIT_REACHED:
        if (event->srq == iface->srq) {
            iface->rx.low = 1;
        }
        break;
    case IBV_EVENT_DEVICE_FATAL:
        iface->fatal = 1;
        break;
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_SRQ_ERR:
        /* our CQ overflowed or our SRQ broke: nothing of this iface can
         * be trusted any more */
        if ((event->srq == iface->srq) ||
            (event->cq == iface->super.cq[UCT_IB_DIR_TX]) ||
            (event->cq == iface->super.cq[UCT_IB_DIR_RX])) {
            iface->fatal = 1;
        }
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
        /* one QP broke (of this iface or another one): progress finds
         * which by its state */
        iface->async_qp_error = 1;
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------------
 * Interface operations
 */

static ucs_status_t uct_rc_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                       uct_completion_t *comp)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);
    uct_rc_iface_flush_t *flush;
    unsigned i, busy = 0;
    ucs_status_t status;
    uct_rc_op_t *op;
    uct_rc_ep_t *ep;

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        ucs_error("rc_verbs iface %s: UCT_FLUSH_FLAG_CANCEL is supported on "
                  "endpoints only",
                  iface->super.super.dev_name);
        return UCS_ERR_UNSUPPORTED;
    }

    /* every busy ep needs a signaled last request (a slot for a marker
     * when its last one was not signaled) */
    uct_rc_ep_table_for_each(ep, i, &iface->eps) {
        if (uct_rc_ep_unretired(ep) == 0) {
            continue;
        }
        ++busy;
        if ((ep->unsignaled != 0) && !(ep->flags & UCT_RC_EP_FLAG_FAILED) &&
            ((ep->tx_available <= 0) || (iface->cq_available <= (int)busy))) {
            uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
            return UCS_ERR_NO_RESOURCE;
        }
    }
    if (busy == 0) {
        return UCS_OK;
    }

    flush = calloc(1, sizeof(*flush));
    if (flush == NULL) {
        ucs_error("rc_verbs iface %s: failed to allocate a flush request",
                  iface->super.super.dev_name);
        return UCS_ERR_NO_MEMORY;
    }
    flush->comp      = comp;
    flush->remaining = 1; /* dropped below, after every ep has its op */
    flush->status    = UCS_OK;

    uct_rc_ep_table_for_each(ep, i, &iface->eps) {
        if (uct_rc_ep_unretired(ep) == 0) {
            continue;
        }
        op = ucs_mpool_get(&iface->op_mp);
        if (op == NULL) {
            ucs_error("rc_verbs iface %s: out of operation descriptors",
                      iface->super.super.dev_name);
            flush->status = UCS_ERR_NO_MEMORY;
            break;
        }
        op->handler       = uct_rc_op_iface_flush_done;
        op->comp          = NULL;
        op->u.iface_flush = flush;
        ++flush->remaining;
        if ((ep->unsignaled == 0) || (ep->flags & UCT_RC_EP_FLAG_FAILED)) {
            op->sn = (uint16_t)(ep->tx_sn - 1);
            ucs_queue_push(&ep->outstanding, &op->queue);
            continue;
        }
        status = uct_rc_ep_post_marker(iface, ep, op);
        if (status != UCS_OK) {
            --flush->remaining;
            ucs_mpool_put(op);
            flush->status = status;
        }
    }

    if (--flush->remaining == 0) {
        status = flush->status;
        free(flush);
        return status;
    }
    if (comp == NULL) {
        flush->comp = NULL;
    }
    return UCS_INPROGRESS;
}

static ucs_status_t uct_rc_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);
    uct_rc_ep_t *ep;
    unsigned i;

    uct_rc_ep_table_for_each(ep, i, &iface->eps) {
        uct_rc_ep_fence(&ep->super.super, flags);
    }
    return UCS_OK;
}

static ucs_status_t uct_rc_iface_event_arm(uct_iface_h tl_iface,
                                           unsigned events)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);

    /* work of our own waiting (grants, pending requests that can run)
     * counts as an event: the caller must progress before sleeping */
    return uct_ib_iface_arm(&iface->super, events, iface->grants.count != 0);
}

static ucs_status_t uct_rc_iface_get_address(uct_iface_h tl_iface,
                                             uct_iface_addr_t *addr)
{
    (void)tl_iface;
    (void)addr;
    return UCS_OK;
}

static ucs_status_t uct_rc_iface_query(uct_iface_h tl_iface,
                                       uct_iface_attr_t *attr)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);
    size_t max_inline     = iface->config.max_inline;
    size_t seg_size       = iface->config.seg_size;
    size_t mtu            = uct_ib_mtu_bytes(iface->super.path_mtu);
    size_t max_msg = uct_ib_device_port_attr(uct_ib_iface_device(&iface->super),
                                             iface->super.port_num)
                         ->max_msg_sz;
    size_t hdr = sizeof(uct_rc_hdr_t);

    uct_ib_iface_query(&iface->super, 75e-9, attr);

    attr->cap.flags |= UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                       UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                       UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                       UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                       UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CONNECT_TO_EP |
                       UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_EP_CHECK |
                       UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                       UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM |
                       UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF |
                       UCT_IFACE_FLAG_INTER_NODE;

    attr->cap.am.max_short       = max_inline - hdr - sizeof(uint64_t);
    attr->cap.am.max_bcopy       = seg_size;
    attr->cap.am.min_zcopy       = 0;
    attr->cap.am.max_zcopy       = seg_size;
    attr->cap.am.max_hdr         = ucs_min(seg_size, UCT_RC_MAX_AM_HDR);
    attr->cap.am.max_iov         = iface->config.max_iov - 1;
    attr->cap.am.opt_zcopy_align = 64;
    attr->cap.am.align_mtu       = mtu;

    attr->cap.put.max_short       = max_inline;
    attr->cap.put.max_bcopy       = seg_size;
    attr->cap.put.min_zcopy       = 0;
    attr->cap.put.max_zcopy       = max_msg;
    attr->cap.put.max_iov         = iface->config.max_iov;
    attr->cap.put.opt_zcopy_align = 64;
    attr->cap.put.align_mtu       = mtu;

    attr->cap.get           = attr->cap.put; /* the same, but no short */
    attr->cap.get.max_short = 0;

    if (iface->config.atomics) {
        attr->cap.flags |= UCT_IFACE_FLAG_ATOMIC_DEVICE;
        attr->cap.atomic64.op_flags = UCS_BIT(UCT_ATOMIC_OP_ADD);
        attr->cap.atomic64.fop_flags =
            UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    }

    attr->iface_addr_len = 0;
    attr->ep_addr_len    = sizeof(uct_rc_ep_addr_t);
    return UCS_OK;
}

static uct_rc_ep_t *uct_rc_iface_first_ep(uct_rc_iface_t *iface)
{
    uct_rc_ep_t *ep;
    unsigned i;

    uct_rc_ep_table_for_each(ep, i, &iface->eps) {
        return ep;
    }
    return NULL;
}

static void uct_rc_iface_close(uct_iface_h tl_iface)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);
    uct_rc_ep_t *ep;

    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    /* freeing an ep moves others in the table: take the first left */
    while (iface->eps.count != 0) {
        ep = uct_rc_iface_first_ep(iface);
        if (!(ep->flags & UCT_RC_EP_FLAG_ZOMBIE)) {
            ucs_debug("rc_verbs iface %s: destroying ep %p left open",
                      iface->super.super.dev_name, (void *)ep);
            uct_base_ep_cleanup(&ep->super);
        }
        uct_rc_ep_free(iface, ep);
    }
    if (ibv_destroy_srq(iface->srq) != 0) {
        ucs_warn("rc_verbs iface %s: ibv_destroy_srq failed: %m",
                 iface->super.super.dev_name);
    }
    ucs_log_limit_flush(&iface->proto_log, UCS_LOG_LEVEL_WARN,
                        "rc_verbs: bad messages from peers");
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->eps.slots);
    free(iface->grants.eps);
    ucs_mpool_cleanup(&iface->op_mp, 1);
    ucs_mpool_cleanup(&iface->tx_mp, 1);
    uct_ib_rxq_cleanup(&iface->rx); /* after the SRQ */
    uct_ib_iface_cleanup(&iface->super);
    free(iface);
}

static const uct_iface_ops_t uct_rc_iface_ops = {
    .ep_put_short             = uct_rc_ep_put_short,
    .ep_put_bcopy             = uct_rc_ep_put_bcopy,
    .ep_put_zcopy             = uct_rc_ep_put_zcopy,
    .ep_get_bcopy             = uct_rc_ep_get_bcopy,
    .ep_get_zcopy             = uct_rc_ep_get_zcopy,
    .ep_am_short              = uct_rc_ep_am_short,
    .ep_am_short_iov          = uct_rc_ep_am_short_iov,
    .ep_am_bcopy              = uct_rc_ep_am_bcopy,
    .ep_am_zcopy              = uct_rc_ep_am_zcopy,
    .ep_atomic_cswap64        = uct_rc_ep_atomic_cswap64,
    .ep_atomic64_post         = uct_rc_ep_atomic64_post,
    .ep_atomic64_fetch        = uct_rc_ep_atomic64_fetch,
    .ep_pending_add           = uct_rc_ep_pending_add,
    .ep_pending_purge         = uct_rc_ep_pending_purge,
    .ep_flush                 = uct_rc_ep_flush,
    .ep_fence                 = uct_rc_ep_fence,
    .ep_check                 = uct_rc_ep_check,
    .ep_create                = uct_rc_ep_create,
    .ep_destroy               = uct_rc_ep_destroy,
    .ep_get_address           = uct_rc_ep_get_address,
    .ep_connect_to_ep         = uct_rc_ep_connect_to_ep,
    .iface_flush              = uct_rc_iface_flush,
    .iface_fence              = uct_rc_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_rc_iface_progress,
    .iface_event_fd_get       = uct_ib_iface_event_fd_get,
    .iface_event_arm          = uct_rc_iface_event_arm,
    .iface_close              = uct_rc_iface_close,
    .iface_query              = uct_rc_iface_query,
    .iface_get_device_address = uct_ib_iface_get_device_address,
    .iface_get_address        = uct_rc_iface_get_address,
    .iface_is_reachable       = uct_ib_iface_is_reachable};

/* Checks the configuration against the device; fills iface->config */
static ucs_status_t
uct_rc_iface_config_init(uct_rc_iface_t *iface,
                         const uct_rc_verbs_iface_config_t *config)
{
    const uct_rc_iface_config_t *rc = &config->super;
    const struct ibv_device_attr *dev_attr =
        &uct_ib_iface_device(&iface->super)->dev_attr;
    const char *dev    = iface->super.super.dev_name;
    unsigned queue_len = iface->super.config.tx_queue_len;

    if ((rc->fc_wnd_size == 0) || (rc->fc_wnd_size > UCT_RC_FC_WND_MAX)) {
        ucs_error("UCX_RC_FC_WND_SIZE=%u is out of range; use 1-%u",
                  rc->fc_wnd_size, UCT_RC_FC_WND_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (rc->retry_count > 7) {
        ucs_error("UCX_RC_RETRY_COUNT=%u is out of range; use 0-7",
                  rc->retry_count);
        return UCS_ERR_INVALID_PARAM;
    }
    if (rc->rnr_retry_count > 7) {
        ucs_error("UCX_RC_RNR_RETRY_COUNT=%u is out of range; use 0-7 (7: "
                  "for ever)",
                  rc->rnr_retry_count);
        return UCS_ERR_INVALID_PARAM;
    }
    if (uct_ib_iface_check_tx_queue_len(dev, queue_len, 4, dev_attr,
                                        " (2^k-1 sizes use the least "
                                        "memory)") != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (iface->super.max_inline < sizeof(uct_rc_hdr_t) + sizeof(uint64_t)) {
        ucs_error("rc_verbs %s: inline data of %zu bytes is too small for "
                  "short messages; raise UCX_IB_TX_MIN_INLINE",
                  dev, iface->super.max_inline);
        return UCS_ERR_INVALID_PARAM;
    }

    /* what the device granted, which may be more than asked */
    iface->config.max_inline = iface->super.max_inline;
    iface->config.max_iov  = ucs_min(iface->super.max_send_sge, UCT_RC_MAX_IOV);
    iface->config.seg_size = iface->super.config.seg_size;
    iface->config.tx_queue_len = queue_len;
    iface->config.tx_moderation_max =
        ucs_max(1, ucs_min(config->tx_cq_moderation, queue_len / 4));
    iface->config.tx_moderation = iface->config.tx_moderation_max;
    iface->config.max_rd_atomic = ucs_min(ucs_max(rc->max_rd_atomic, 1),
                                          (unsigned)dev_attr->max_qp_rd_atom);
    iface->config.fc_wnd        = rc->fc_wnd_size;
    iface->config.timeout       = uct_ib_timeout_exp(rc->timeout);
    iface->config.retry_count   = (uint8_t)rc->retry_count;
    iface->config.rnr_timer     = uct_ib_rnr_timer_code(rc->rnr_timeout);
    iface->config.rnr_retry     = (uint8_t)rc->rnr_retry_count;
    iface->config.atomics       = (dev_attr->atomic_cap != IBV_ATOMIC_NONE) &&
                            (dev_attr->max_qp_rd_atom > 0);
    return UCS_OK;
}

static ucs_status_t uct_rc_iface_open(uct_md_h md, uct_worker_h worker,
                                      const uct_iface_params_t *params,
                                      const uct_iface_config_t *tl_config,
                                      uct_iface_h *iface_p)
{
    const uct_rc_verbs_iface_config_t *config =
        (const uct_rc_verbs_iface_config_t *)tl_config;
    const uct_ib_iface_config_t *ib_config = &config->super.super;
    const struct ibv_device_attr *dev_attr;
    uct_iface_mpool_params_t mp_params;
    uct_ib_iface_init_attr_t init_attr;
    struct ibv_srq_init_attr srq_attr;
    uct_ib_rxq_params_t rxq_params;
    ucs_mpool_params_t op_params;
    uct_rc_iface_t *iface;
    ucs_status_t status;

    iface = calloc(1, sizeof(*iface));
    if (iface == NULL) {
        ucs_error("rc_verbs: failed to allocate an interface");
        return UCS_ERR_NO_MEMORY;
    }

    /* SGEs of a send: an AM zcopy's header and at least one iov entry */
    dev_attr = &uct_ib_md_from(md)->dev.dev_attr;
    memset(&init_attr, 0, sizeof(init_attr));
    init_attr.tx_max_sge =
        ucs_min(ucs_max(ib_config->tx.min_sge, 2),
                ucs_min((unsigned)dev_attr->max_sge, UCT_RC_MAX_IOV));
    init_attr.tx_cq_len      = ib_config->tx.cq_len;
    init_attr.rx_cq_len      = ib_config->rx.queue_len;
    init_attr.qp_type        = IBV_QPT_RC;
    init_attr.async_event_cb = uct_rc_iface_async_event;
    status = uct_ib_iface_init(&iface->super, &uct_rc_iface_ops, md, worker,
                               params, ib_config, &init_attr);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_rc_iface_config_init(iface, config);
    if (status != UCS_OK) {
        goto err_ib_cleanup;
    }
    if (!iface->config.atomics) {
        iface->super.super.super.ops.ep_atomic_cswap64 = NULL;
        iface->super.super.super.ops.ep_atomic64_post  = NULL;
        iface->super.super.super.ops.ep_atomic64_fetch = NULL;
    }
    /* the reserve is out of cq_available: only rescue markers take it */
    iface->config.tx_cq_reserve =
        ucs_max(1, ucs_min(UCT_RC_TX_CQ_RESERVE_MAX,
                           iface->super.cq_len[UCT_IB_DIR_TX] / 16));
    iface->cq_available = (int)iface->super.cq_len[UCT_IB_DIR_TX] - 1 -
                          (int)iface->config.tx_cq_reserve;
    if (iface->cq_available <= 0) {
        ucs_error("rc_verbs %s: a send CQ of %u entries is too small; "
                  "set UCX_IB_TX_CQ_LEN to at least %u",
                  iface->super.super.dev_name,
                  iface->super.cq_len[UCT_IB_DIR_TX],
                  iface->config.tx_cq_reserve + 2);
        status = UCS_ERR_INVALID_PARAM;
        goto err_ib_cleanup;
    }

    /* receive descriptors: [lkey][... user headroom | rc header][payload] */
    memset(&rxq_params, 0, sizeof(rxq_params));
    rxq_params.name      = UCT_RC_VERBS_NAME;
    rxq_params.mp_name   = "rc_recv_desc";
    rxq_params.priv_size = sizeof(uct_rc_rx_desc_t);
    rxq_params.hdr_len   = sizeof(uct_rc_hdr_t);
    rxq_params.seg_size  = iface->config.seg_size;
    rxq_params.mp        = &iface->rx_mp;
    rxq_params.layout    = &iface->rx_layout;
    rxq_params.release   = &iface->rx_release;
    rxq_params.max_batch = UCT_RC_RX_BATCH_MAX;
    rxq_params.init_fill = UCT_RC_RX_INIT_FILL;
    status = uct_ib_rxq_init(&iface->rx, &iface->super, &rxq_params);
    if (status != UCS_OK) {
        goto err_ib_cleanup;
    }

    /* send descriptors: [op][rc header][data] */
    memset(&mp_params, 0, sizeof(mp_params));
    mp_params.elem_size =
        sizeof(uct_rc_op_t) + sizeof(uct_rc_hdr_t) + iface->config.seg_size;
    mp_params.alignment       = 64;
    mp_params.align_offset    = sizeof(uct_rc_op_t);
    mp_params.elems_per_chunk = 64;
    mp_params.max_elems       = iface->super.cq_len[UCT_IB_DIR_TX];
    mp_params.obj_init        = uct_rc_tx_obj_init;
    mp_params.name            = "rc_send_desc";
    status =
        uct_iface_mpool_init(&iface->super.super, &iface->tx_mp, &mp_params);
    if (status != UCS_OK) {
        goto err_rxq;
    }

    ucs_mpool_params_reset(&op_params);
    op_params.elem_size       = sizeof(uct_rc_op_t);
    op_params.elems_per_chunk = 128;
    op_params.max_elems       = 4 * iface->super.cq_len[UCT_IB_DIR_TX];
    op_params.name            = "rc_op";
    status                    = ucs_mpool_init(&iface->op_mp, &op_params);
    if (status != UCS_OK) {
        goto err_tx_mp;
    }

    status = uct_rc_ep_table_init(&iface->eps, 64);
    if (status != UCS_OK) {
        goto err_op_mp;
    }
    ucs_arbiter_init(&iface->arbiter);
    ucs_log_limit_init(&iface->proto_log);

    memset(&srq_attr, 0, sizeof(srq_attr));
    srq_attr.attr.max_wr  = iface->super.config.rx_queue_len;
    srq_attr.attr.max_sge = 1;
    iface->srq = ibv_create_srq(uct_ib_iface_md(&iface->super)->pd, &srq_attr);
    if (iface->srq == NULL) {
        ucs_error("rc_verbs %s: ibv_create_srq(%u entries) failed: %m%s",
                  iface->super.super.dev_name, srq_attr.attr.max_wr,
                  (errno == ENOMEM) ? "; raise ulimit -l or lower "
                                      "UCX_IB_RX_QUEUE_LEN"
                                    : "");
        status = UCS_ERR_NO_RESOURCE;
        goto err_hash;
    }

    status = uct_ib_rxq_start(&iface->rx, NULL, iface->srq);
    if (status != UCS_OK) {
        goto err_srq;
    }

    *iface_p = &iface->super.super.super;
    return UCS_OK;

err_srq:
    ibv_destroy_srq(iface->srq);
err_hash:
    ucs_arbiter_cleanup(&iface->arbiter);
    free(iface->eps.slots);
err_op_mp:
    ucs_mpool_cleanup(&iface->op_mp, 0);
err_tx_mp:
    ucs_mpool_cleanup(&iface->tx_mp, 0);
err_rxq:
    uct_ib_rxq_cleanup(&iface->rx);
err_ib_cleanup:
    uct_ib_iface_cleanup(&iface->super);
err_free:
    free(iface);
    return status;
}

/* Object tree files of the interface */
static void uct_rc_iface_vfs_init(uct_iface_h tl_iface)
{
    uct_rc_iface_t *iface = uct_rc_iface(tl_iface);

    uct_vfs_add_uint(iface, &iface->rx.posted, sizeof(iface->rx.posted),
                     "rx_posted");
    uct_vfs_add_uint(iface, &iface->rx.target, sizeof(iface->rx.target),
                     "rx_target");
    uct_vfs_add_uint(iface, &iface->cq_available, sizeof(iface->cq_available),
                     "tx_cq_available");
    uct_vfs_add_value(iface, iface->config.tx_cq_reserve, "tx_cq_reserve");
    uct_vfs_add_uint(iface, &iface->rescue.markers,
                     sizeof(iface->rescue.markers), "tx_rescue_markers");
    uct_vfs_add_value(iface, iface->config.max_inline, "max_inline");
    uct_vfs_add_value(iface, iface->config.tx_queue_len, "tx_queue_len");
    uct_vfs_add_value(iface, iface->config.fc_wnd, "fc_wnd");
    uct_vfs_add_uint(iface, &iface->config.tx_moderation,
                     sizeof(iface->config.tx_moderation), "tx_moderation");
}

uct_tl_t uct_rc_verbs_tl = {
    .name           = UCT_RC_VERBS_NAME,
    .query_devices  = uct_ib_iface_query_devices,
    .iface_open     = uct_rc_iface_open,
    .config         = {.name   = "RC verbs transport",
                       .prefix = "RC_VERBS_",
                       .table  = uct_rc_verbs_iface_config_table,
                       .size   = sizeof(uct_rc_verbs_iface_config_t)},
    .iface_vfs_init = uct_rc_iface_vfs_init,
    .ep_vfs_init    = uct_rc_ep_vfs_init};
