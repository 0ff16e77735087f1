/*
 * rc_verbs endpoints: the QP's life (create, connect, fail, destroy),
 * completion of outstanding operations, flush, fence, check, pending.
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
 * Outstanding operations
 */

void uct_rc_op_release(uct_rc_op_t *op, ucs_status_t status)
{
    (void)status;
    ucs_mpool_put(op);
}

void uct_rc_op_complete(uct_rc_op_t *op, ucs_status_t status)
{
    uct_completion_t *comp = op->comp;

    ucs_mpool_put(op);
    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }
}

void uct_rc_op_get_bcopy_done(uct_rc_op_t *op, ucs_status_t status)
{
    if (status == UCS_OK) {
        op->u.get.cb(op->u.get.arg, uct_rc_desc_buf(op), op->u.get.length);
    }
    uct_rc_op_complete(op, status);
}

void uct_rc_op_atomic_done(uct_rc_op_t *op, ucs_status_t status)
{
    if (status == UCS_OK) {
        memcpy(op->u.atomic.result, uct_rc_desc_buf(op), sizeof(uint64_t));
    }
    uct_rc_op_complete(op, status);
}

void uct_rc_op_iface_flush_done(uct_rc_op_t *op, ucs_status_t status)
{
    uct_rc_iface_flush_t *flush = op->u.iface_flush;

    ucs_mpool_put(op);
    if (status != UCS_OK) {
        flush->status = status;
    }
    if (--flush->remaining == 0) {
        if (flush->comp != NULL) {
            uct_invoke_completion(flush->comp, flush->status);
        }
        free(flush);
    }
}

void uct_rc_ep_retire(uct_rc_iface_t *iface, uct_rc_ep_t *ep, uint16_t sn,
                      ucs_status_t status)
{
    uint16_t count = (uint16_t)(sn + 1 - ep->acked_sn);
    uct_rc_op_t *op;

    if (ucs_unlikely(count > uct_rc_ep_unretired(ep))) {
        /* a completion of a request already retired: nothing to do */
        return;
    }

    ep->acked_sn     = (uint16_t)(sn + 1);
    ep->tx_available = (int16_t)(ep->tx_available + count);
    iface->cq_available += count;
    while (!ucs_queue_is_empty(&ep->outstanding)) {
        op = ucs_container_of(ep->outstanding.head, uct_rc_op_t, queue);
        if (!uct_rc_sn_le(op->sn, sn)) {
            break;
        }
        ucs_queue_pull_non_empty(&ep->outstanding);
        op->handler(op, status);
    }
}

/* ------------------------------------------------------------------------
 * Resources and failure
 */

ucs_status_t uct_rc_ep_tx_busy(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    if (ep->flags & UCT_RC_EP_FLAG_FAILED) {
        return (ucs_status_t)ep->status;
    }
    uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
    return UCS_ERR_NO_RESOURCE;
}

ucs_status_t uct_rc_ep_post_failed(uct_rc_ep_t *ep, int ret)
{
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);

    ucs_error("rc_verbs ep %p (qp 0x%x): ibv_post_send failed: %s; the "
              "endpoint is unusable, destroy it",
              (void *)ep, ep->qp->qp_num, strerror(ret));
    uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_IO_ERROR);
    uct_rc_ep_set_failed(ep, UCS_ERR_IO_ERROR);
    return UCS_ERR_IO_ERROR;
}

/*
 * On a QP just moved to the error state: requests the device had already
 * completed without a signal will never complete again, so post a
 * signaled empty write, which the QP flushes at once; its completion
 * retires them all. Without a slot or a CQ entry, the signaled request
 * already in flight does that, or the send CQ rescue later.
 */
int uct_rc_ep_post_flush_marker(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                int cq_floor)
{
    struct ibv_send_wr wr, *bad_wr;
    int ret;

    if ((ep->unsignaled == 0) || (uct_rc_ep_unretired(ep) == 0) ||
        (ep->tx_available < 0) || (iface->cq_available <= cq_floor)) {
        return 0;
    }

    memset(&wr, 0, sizeof(wr));
    wr.wr_id      = ep->tx_sn;
    wr.opcode     = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    ret           = ibv_post_send(ep->qp, &wr, &bad_wr);
    if (ret != 0) {
        ucs_debug("rc_verbs ep %p: no flush marker on the failed qp 0x%x: "
                  "%s",
                  (void *)ep, ep->qp->qp_num, strerror(ret));
        return 0;
    }
    ep->unsignaled = 0;
    ++ep->tx_sn;
    --ep->tx_available;
    --iface->cq_available;
    return 1;
}

/* Moves the QP to the error state, where every request still queued
 * completes with a flush error (and those done without a signal are
 * retired by a marker) */
static ucs_status_t uct_rc_ep_qp_to_err(uct_rc_ep_t *ep)
{
    struct ibv_qp_attr attr;
    ucs_status_t status;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    status        = uct_ib_qp_modify(ep->qp, &attr, IBV_QP_STATE, "ERR");
    if (status == UCS_OK) {
        (void)uct_rc_ep_post_flush_marker(uct_rc_ep_iface(ep), ep, 0);
    }
    return status;
}

void uct_rc_ep_set_failed(uct_rc_ep_t *ep, ucs_status_t status)
{
    if (ep->flags & UCT_RC_EP_FLAG_FAILED) {
        return;
    }
    ep->flags |= UCT_RC_EP_FLAG_FAILED;
    ep->status = (int8_t)status;
    (void)uct_rc_ep_qp_to_err(ep);
}

int uct_rc_ep_check_state(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    if (uct_rc_ep_unretired(ep) != 0) {
        return 0;
    }
    if (ep->flags & UCT_RC_EP_FLAG_ZOMBIE) {
        uct_rc_ep_free(iface, ep);
        return 1;
    }
    if ((ep->flags & UCT_RC_EP_FLAG_FAILED) &&
        !(ep->flags & UCT_RC_EP_FLAG_ERR_SENT)) {
        ep->flags |= UCT_RC_EP_FLAG_ERR_SENT;
        /* the handler may destroy the ep */
        uct_iface_handle_ep_err(&iface->super.super.super, &ep->super.super,
                                (ucs_status_t)ep->status);
        return 1;
    }
    return 0;
}

void uct_rc_ep_free(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    uint16_t unretired = uct_rc_ep_unretired(ep);
    uct_rc_op_t *op;
    int ret;

    uct_rc_ep_table_remove(&iface->eps, ep);
    uct_rc_iface_update_moderation(iface);
    uct_rc_iface_unqueue_grant(iface, ep);

    ret = ibv_destroy_qp(ep->qp);
    if (ret != 0) {
        ucs_warn("rc_verbs ep %p: ibv_destroy_qp failed: %s", (void *)ep,
                 strerror(ret));
    }

    /* the QP is gone: its requests will not complete */
    iface->cq_available += unretired;
    while (!ucs_queue_is_empty(&ep->outstanding)) {
        op = ucs_container_of(ucs_queue_pull_non_empty(&ep->outstanding),
                              uct_rc_op_t, queue);
        op->handler(op, UCS_ERR_CANCELED);
    }
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_pending_group_cleanup(&ep->pending);
    free(ep);
}

/* ------------------------------------------------------------------------
 * Markers and grants
 */

ucs_status_t uct_rc_ep_post_marker(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                   uct_rc_op_t *op)
{
    struct ibv_send_wr wr;

    /* an RDMA write of no bytes checks no key and moves no data; its
     * signaled completion says every earlier request is done */
    wr.sg_list             = NULL;
    wr.num_sge             = 0;
    wr.opcode              = IBV_WR_RDMA_WRITE;
    wr.send_flags          = 0;
    wr.wr.rdma.remote_addr = 0;
    wr.wr.rdma.rkey        = 0;
    return uct_rc_ep_post(iface, ep, &wr, 1, op);
}

ucs_status_t uct_rc_ep_send_grant(uct_rc_iface_t *iface, uct_rc_ep_t *ep)
{
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    uct_rc_hdr_t hdr;

    if ((ep->fc_grant == 0) ||
        (ep->flags & (UCT_RC_EP_FLAG_FAILED | UCT_RC_EP_FLAG_ZOMBIE))) {
        return UCS_OK;
    }
    /* the grant may take the slot kept for it (tx_available 0) */
    if ((ep->tx_available < 0) || (iface->cq_available <= 0)) {
        return UCS_ERR_NO_RESOURCE;
    }

    uct_rc_ep_fill_hdr(ep, &hdr, UCT_RC_HDR_GRANT);
    sge.addr      = (uintptr_t)&hdr;
    sge.length    = sizeof(hdr);
    sge.lkey      = 0;
    wr.sg_list    = &sge;
    wr.num_sge    = 1;
    wr.opcode     = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_INLINE; /* never solicited: wakes nobody */
    return uct_rc_ep_post(iface, ep, &wr, 0, NULL);
}

/* ------------------------------------------------------------------------
 * Life cycle
 */

ucs_status_t uct_rc_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_rc_iface_t *iface;
    struct ibv_qp_init_attr qp_attr;
    uct_rc_ep_t *ep;
    ucs_status_t status;

    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE)) {
        ucs_error("rc_verbs: uct_ep_create needs UCT_EP_PARAM_FIELD_IFACE");
        return UCS_ERR_INVALID_PARAM;
    }
    iface = uct_rc_iface(params->iface);
    if (params->field_mask &
        (UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("rc_verbs connects endpoint to endpoint: create the ep "
                  "with the iface only, then uct_ep_connect_to_ep()");
        return UCS_ERR_UNSUPPORTED;
    }

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        ucs_error("rc_verbs: failed to allocate an endpoint");
        return UCS_ERR_NO_MEMORY;
    }
    status = uct_rc_iface_new_psn(iface, &ep->psn);
    if (status != UCS_OK) {
        goto err_free;
    }

    memset(&qp_attr, 0, sizeof(qp_attr));
    qp_attr.qp_type          = IBV_QPT_RC;
    qp_attr.srq              = iface->srq;
    qp_attr.cap.max_send_wr  = iface->config.tx_queue_len;
    qp_attr.cap.max_send_sge = iface->config.max_iov;
    qp_attr.sq_sig_all       = 0;
    status = uct_ib_iface_create_qp(&iface->super, &qp_attr, &ep->qp);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = uct_ib_iface_qp_init(
        &iface->super, ep->qp,
        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
            (iface->config.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0),
        0);
    if (status != UCS_OK) {
        goto err_destroy_qp;
    }

    status = uct_rc_ep_table_add(&iface->eps, ep);
    if (status != UCS_OK) {
        ucs_error("rc_verbs: failed to index qp 0x%x", ep->qp->qp_num);
        goto err_destroy_qp;
    }
    uct_rc_iface_update_moderation(iface);

    ep->super.super.iface = params->iface;
    ep->tx_available      = 0; /* until connected */
    ucs_queue_head_init(&ep->outstanding);
    uct_pending_group_init(&ep->pending);
    uct_base_ep_init(&ep->super, &iface->super.super);
    *ep_p = &ep->super.super;
    return UCS_OK;

err_destroy_qp:
    ibv_destroy_qp(ep->qp);
err_free:
    free(ep);
    return status;
}

void uct_rc_ep_destroy(uct_ep_h tl_ep)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    uct_rc_op_t *op;

    uct_base_ep_cleanup(&ep->super);
    uct_pending_group_purge(&iface->arbiter, &ep->pending, NULL, NULL);
    uct_rc_iface_unqueue_grant(iface, ep);

    if (uct_rc_ep_unretired(ep) == 0) {
        uct_rc_ep_free(iface, ep);
        return;
    }

    /* Requests are still with the device: flush them out of the QP and
     * free the ep when the last one completes. Nobody hears of them any
     * more, except an iface flush that counts this ep. */
    ucs_queue_for_each(op, &ep->outstanding, queue) {
        if (op->handler != uct_rc_op_iface_flush_done) {
            op->handler = uct_rc_op_release;
        }
    }
    ep->flags |= UCT_RC_EP_FLAG_ZOMBIE | UCT_RC_EP_FLAG_ERR_SENT;
    if (!(ep->flags & UCT_RC_EP_FLAG_FAILED)) {
        ep->flags |= UCT_RC_EP_FLAG_FAILED;
        ep->status = UCS_ERR_CANCELED;
        if (uct_rc_ep_qp_to_err(ep) != UCS_OK) {
            uct_rc_ep_free(iface, ep);
        }
    }
}

ucs_status_t uct_rc_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_rc_ep_t *ep           = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface     = uct_rc_ep_iface(ep);
    uct_rc_ep_addr_t *rc_addr = (uct_rc_ep_addr_t *)addr;
    uint32_t qpn              = ep->qp->qp_num;
    uint32_t psn              = ep->psn;

    rc_addr->qp_num[0] = (uint8_t)qpn;
    rc_addr->qp_num[1] = (uint8_t)(qpn >> 8);
    rc_addr->qp_num[2] = (uint8_t)(qpn >> 16);
    rc_addr->psn[0]    = (uint8_t)psn;
    rc_addr->psn[1]    = (uint8_t)(psn >> 8);
    rc_addr->psn[2]    = (uint8_t)(psn >> 16);
    rc_addr->fc_wnd    = (uint16_t)iface->config.fc_wnd;
    return UCS_OK;
}

ucs_status_t uct_rc_ep_connect_to_ep(uct_ep_h tl_ep,
                                     const uct_device_addr_t *dev_addr,
                                     const uct_ep_addr_t *ep_addr)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    const uct_ib_device_addr_t *ib_addr =
        (const uct_ib_device_addr_t *)dev_addr;
    const uct_rc_ep_addr_t *rc_addr = (const uct_rc_ep_addr_t *)ep_addr;
    struct ibv_qp_attr attr;
    ucs_status_t status;
    uint32_t dest_qpn, rq_psn;
    uint16_t peer_wnd;
    char buf[128];

    if ((dev_addr == NULL) || (ep_addr == NULL)) {
        ucs_error("rc_verbs ep %p: connect_to_ep needs a device and an "
                  "endpoint address",
                  (void *)ep);
        return UCS_ERR_INVALID_PARAM;
    }
    if (ep->flags & (UCT_RC_EP_FLAG_CONNECTED | UCT_RC_EP_FLAG_FAILED)) {
        ucs_error("rc_verbs ep %p: already connected (or failed); create a "
                  "new endpoint",
                  (void *)ep);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_rc_ep_addr_unpack(rc_addr, &dest_qpn, &rq_psn, &peer_wnd);
    if (status != UCS_OK) {
        ucs_error("rc_verbs ep %p: invalid endpoint address; pass what "
                  "uct_ep_get_address() of an rc_verbs ep returned",
                  (void *)ep);
        return status;
    }
    if (!uct_ib_iface_is_reachable_addr(&iface->super, ib_addr)) {
        ucs_error("rc_verbs ep %p: %s is not reachable from %s (another "
                  "fabric, link layer or subnet)",
                  (void *)ep, uct_ib_device_addr_str(ib_addr, buf, sizeof(buf)),
                  iface->super.super.dev_name);
        return UCS_ERR_UNREACHABLE;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state           = IBV_QPS_RTR;
    attr.path_mtu           = uct_ib_iface_peer_mtu(&iface->super, ib_addr);
    attr.dest_qp_num        = dest_qpn;
    attr.rq_psn             = rq_psn;
    attr.max_dest_rd_atomic = (uint8_t)iface->config.max_rd_atomic;
    attr.min_rnr_timer      = iface->config.rnr_timer;
    uct_ib_iface_fill_ah_attr(&iface->super, ib_addr, &attr.ah_attr);
    status = uct_ib_qp_modify(
        ep->qp, &attr,
        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
        "RTR");
    if (status != UCS_OK) {
        return status;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state      = IBV_QPS_RTS;
    attr.sq_psn        = ep->psn;
    attr.timeout       = iface->config.timeout;
    attr.retry_cnt     = iface->config.retry_count;
    attr.rnr_retry     = iface->config.rnr_retry;
    attr.max_rd_atomic = (uint8_t)iface->config.max_rd_atomic;
    status             = uct_ib_qp_modify(ep->qp, &attr,
                                          IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                                              IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                              IBV_QP_MAX_QP_RD_ATOMIC,
                                          "RTS");
    if (status != UCS_OK) {
        return status;
    }

    ep->tx_available = (int16_t)(iface->config.tx_queue_len - 1);
    ep->fc_credits   = (int16_t)iface->config.fc_wnd;
    ep->grant_thresh = (uint16_t)ucs_max(peer_wnd / 2, 1);
    ep->flags |= UCT_RC_EP_FLAG_CONNECTED;
    ucs_debug("rc_verbs ep %p: qp 0x%x connected to qp 0x%x at %s", (void *)ep,
              ep->qp->qp_num, dest_qpn,
              uct_ib_device_addr_str(ib_addr, buf, sizeof(buf)));
    return UCS_OK;
}

/* ------------------------------------------------------------------------
 * Flush, fence, check
 */

/* Queues @a op to run when the last request posted so far is done,
 * posting a signaled marker when that request was not signaled. */
static ucs_status_t uct_rc_ep_flush_op(uct_rc_iface_t *iface, uct_rc_ep_t *ep,
                                       uct_rc_op_t *op)
{
    ucs_status_t status;

    if ((ep->unsignaled == 0) || (ep->flags & UCT_RC_EP_FLAG_FAILED)) {
        /* the last request is signaled, or (a failed QP) every request
         * completes: attach to it */
        if (op != NULL) {
            op->sn = (uint16_t)(ep->tx_sn - 1);
            ucs_queue_push(&ep->outstanding, &op->queue);
        }
        return UCS_OK;
    }
    status = uct_rc_ep_tx_check(iface, ep);
    if (status != UCS_OK) {
        return status;
    }
    return uct_rc_ep_post_marker(iface, ep, op);
}

ucs_status_t uct_rc_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    ucs_status_t status;
    uct_rc_op_t *op;

    if (ep->flags & UCT_RC_EP_FLAG_FAILED) {
        /* its requests complete (or completed) with this status */
        return (ucs_status_t)ep->status;
    }
    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        /* everything still queued completes with UCS_ERR_CANCELED; the
         * ep cannot send any more (no error handler call) */
        ep->flags |= UCT_RC_EP_FLAG_FAILED | UCT_RC_EP_FLAG_ERR_SENT;
        ep->status = UCS_ERR_CANCELED;
        (void)uct_rc_ep_qp_to_err(ep);
    }

    if (uct_rc_ep_unretired(ep) == 0) {
        return UCS_OK;
    }

    if (comp == NULL) {
        status = uct_rc_ep_flush_op(iface, ep, NULL);
        return (status == UCS_OK) ? UCS_INPROGRESS : status;
    }

    op = ucs_mpool_get(&iface->op_mp);
    if (op == NULL) {
        uct_iface_stat_tx_error(&iface->super.super, UCS_ERR_NO_RESOURCE);
        return UCS_ERR_NO_RESOURCE;
    }
    op->handler = uct_rc_op_complete;
    op->comp    = comp;
    status      = uct_rc_ep_flush_op(iface, ep, op);
    if (status != UCS_OK) {
        ucs_mpool_put(op);
        return status;
    }
    return UCS_INPROGRESS;
}

ucs_status_t uct_rc_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    uct_rc_ep_t *ep = uct_rc_ep(tl_ep);

    (void)flags;
    if (uct_rc_ep_unretired(ep) != 0) {
        ep->flags |= UCT_RC_EP_FLAG_FENCE;
    }
    return UCS_OK;
}

ucs_status_t uct_rc_ep_check(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);
    ucs_status_t status;

    (void)flags;
    (void)comp;
    if ((ep->flags & UCT_RC_EP_FLAG_FAILED) ||
        !(ep->flags & UCT_RC_EP_FLAG_CONNECTED) ||
        ((uct_rc_ep_unretired(ep) != 0) && (ep->unsignaled == 0))) {
        /* failed already, or a signaled request in flight will find out
         * (unsignaled ones may all be done, and then nothing would) */
        return UCS_OK;
    }
    /* a signaled empty write: a dead peer makes it fail (retry exceeded)
     * and the error handler runs */
    status = uct_rc_ep_tx_check(iface, ep);
    if (status != UCS_OK) {
        return (status == UCS_ERR_NO_RESOURCE) ? UCS_OK : status;
    }
    return uct_rc_ep_post_marker(iface, ep, NULL);
}

/* ------------------------------------------------------------------------
 * Pending queue
 */

ucs_status_t uct_rc_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned flags)
{
    uct_rc_ep_t *ep       = uct_rc_ep(tl_ep);
    uct_rc_iface_t *iface = uct_rc_ep_iface(ep);

    (void)flags;
    if (!(ep->flags & UCT_RC_EP_FLAG_FAILED) && (ep->tx_available > 0) &&
        (iface->cq_available > 0) && (ep->fc_credits > 0)) {
        return UCS_ERR_BUSY;
    }
    uct_pending_group_push(&iface->arbiter, &ep->pending, req);
    return UCS_OK;
}

void uct_rc_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg)
{
    uct_rc_ep_t *ep = uct_rc_ep(tl_ep);

    uct_pending_group_purge(&uct_rc_ep_iface(ep)->arbiter, &ep->pending, cb,
                            arg);
}

/* ------------------------------------------------------------------------
 * Object tree
 */

static void uct_rc_ep_vfs_show_state(void *obj, ucs_string_buffer_t *strb,
                                     void *arg_ptr, uint64_t arg_u64)
{
    uct_rc_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    if (ep->flags & UCT_RC_EP_FLAG_FAILED) {
        ucs_string_buffer_appendf(strb, "failed\n");
    } else if (ep->flags & UCT_RC_EP_FLAG_CONNECTED) {
        ucs_string_buffer_appendf(strb, "connected\n");
    } else {
        ucs_string_buffer_appendf(strb, "created\n");
    }
}

static void uct_rc_ep_vfs_show_last_error(void *obj, ucs_string_buffer_t *strb,
                                          void *arg_ptr, uint64_t arg_u64)
{
    uct_rc_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    uct_vfs_append_status(strb, (ep->flags & UCT_RC_EP_FLAG_FAILED)
                                    ? (ucs_status_t)ep->status
                                    : UCS_OK);
}

/* The peer as the QP knows it (read from the device: nothing is kept in
 * the ep for it) */
static void uct_rc_ep_vfs_show_peer(void *obj, ucs_string_buffer_t *strb,
                                    void *arg_ptr, uint64_t arg_u64)
{
    uct_rc_ep_t *ep = obj;
    struct ibv_qp_init_attr init_attr;
    struct ibv_qp_attr attr;
    char gid[64];

    (void)arg_ptr;
    (void)arg_u64;
    if (!(ep->flags & UCT_RC_EP_FLAG_CONNECTED) ||
        (ibv_query_qp(ep->qp, &attr, IBV_QP_DEST_QPN | IBV_QP_AV, &init_attr) !=
         0)) {
        ucs_string_buffer_appendf(strb, "none\n");
        return;
    }
    ucs_string_buffer_appendf(
        strb, "qp 0x%x gid %s\n", attr.dest_qp_num,
        uct_ib_gid_str(&attr.ah_attr.grh.dgid, gid, sizeof(gid)));
}

static void uct_rc_ep_vfs_show_tx_queue(void *obj, ucs_string_buffer_t *strb,
                                        void *arg_ptr, uint64_t arg_u64)
{
    uct_rc_ep_t *ep = obj;

    (void)arg_ptr;
    (void)arg_u64;
    ucs_string_buffer_appendf(strb, "requests %u\nunsignaled %u\n",
                              uct_rc_ep_unretired(ep), ep->unsignaled);
}

void uct_rc_ep_vfs_init(uct_ep_h tl_ep)
{
    uct_rc_ep_t *ep = uct_rc_ep(tl_ep);

    uct_vfs_add_value(ep, ep->qp->qp_num, "qp_num");
    uct_vfs_add_file(ep, uct_rc_ep_vfs_show_peer, NULL, 0, "peer");
    uct_vfs_add_file(ep, uct_rc_ep_vfs_show_state, NULL, 0, "state");
    uct_vfs_add_file(ep, uct_rc_ep_vfs_show_tx_queue, NULL, 0, "tx_queue");
    uct_vfs_add_uint(ep, &ep->pending.count, sizeof(ep->pending.count),
                     "pending");
    uct_vfs_add_file(ep, uct_rc_ep_vfs_show_last_error, NULL, 0, "last_error");
    uct_vfs_add_uint(ep, &ep->fc_credits, sizeof(ep->fc_credits), "fc_credits");
}
