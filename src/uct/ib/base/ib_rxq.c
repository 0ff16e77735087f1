/*
 * Receive queues of the verbs transports (ib_rxq.h): posting in chains,
 * the first fill, the SRQ limit event and the growing target.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ib_rxq.h"

#include <ucs/debug/log.h>

#include <string.h>

static void uct_ib_rx_desc_obj_init(uct_iface_h tl_iface, void *obj,
                                    uct_mem_h memh)
{
    ((uct_ib_rx_desc_t *)obj)->lkey = ((uct_ib_mem_t *)memh)->lkey;
}

/* One chain of work requests to the QP or the SRQ */
static int uct_ib_rxq_post_chain(uct_ib_rxq_t *rxq, struct ibv_recv_wr *wr,
                                 struct ibv_recv_wr **bad_wr_p)
{
    if (rxq->srq != NULL) {
        return ibv_post_srq_recv(rxq->srq, wr, bad_wr_p);
    }
    return ibv_post_recv(rxq->qp, wr, bad_wr_p);
}

/* The device refused @a bad_wr and the ones after it: their descriptors
 * go back to the pool; returns how many */
static unsigned uct_ib_rxq_put_back(struct ibv_recv_wr *bad_wr)
{
    unsigned count = 0;

    for (; bad_wr != NULL; bad_wr = bad_wr->next) {
        ucs_mpool_put((void *)(uintptr_t)bad_wr->wr_id);
        ++count;
    }
    return count;
}

unsigned uct_ib_rxq_post(uct_ib_rxq_t *rxq)
{
    uint32_t length = (uint32_t)(rxq->layout->hdr_len + rxq->layout->seg_size);
    struct ibv_recv_wr wr[UCT_IB_RX_BATCH_MAX], *bad_wr;
    struct ibv_sge sge[UCT_IB_RX_BATCH_MAX];
    unsigned count, total = 0;
    void *obj;
    int ret;

    while (rxq->posted < rxq->target) {
        count = 0;
        while ((count < rxq->batch) && (rxq->posted + count < rxq->target)) {
            obj = ucs_mpool_get(rxq->mp);
            if (obj == NULL) {
                break;
            }
            sge[count].addr = (uintptr_t)uct_rx_desc_recv_buf(rxq->layout, obj);
            sge[count].length = length;
            sge[count].lkey   = ((uct_ib_rx_desc_t *)obj)->lkey;
            wr[count].wr_id   = (uintptr_t)obj;
            wr[count].sg_list = &sge[count];
            wr[count].num_sge = 1;
            wr[count].next    = &wr[count + 1];
            ++count;
        }
        if (count == 0) {
            break;
        }
        wr[count - 1].next = NULL;
        ret                = uct_ib_rxq_post_chain(rxq, wr, &bad_wr);
        if (ret != 0) {
            ucs_error("%s iface %s: %s failed: %s", rxq->name, rxq->dev_name,
                      (rxq->srq != NULL) ? "ibv_post_srq_recv"
                                         : "ibv_post_recv",
                      strerror(ret));
            count -= uct_ib_rxq_put_back(bad_wr);
            rxq->posted += count;
            total += count;
            break;
        }
        rxq->posted += count;
        total += count;
        if (count < rxq->batch) {
            break;
        }
    }
    return total;
}

/* The SRQ limit event at a quarter of the target (a QP has none) */
static void uct_ib_rxq_arm_limit(uct_ib_rxq_t *rxq)
{
    struct ibv_srq_attr attr;
    int ret;

    if (rxq->srq == NULL) {
        return;
    }
    memset(&attr, 0, sizeof(attr));
    attr.srq_limit = rxq->target / 4;
    ret            = ibv_modify_srq(rxq->srq, &attr, IBV_SRQ_LIMIT);
    if (ret != 0) {
        ucs_debug("%s iface %s: no SRQ limit event (ibv_modify_srq(limit %u) "
                  "failed: %s); the receive queue stays at %u buffers",
                  rxq->name, rxq->dev_name, attr.srq_limit, strerror(ret),
                  rxq->target);
    }
}

/* The descriptors: layout, release callback, registered pool */
static ucs_status_t uct_ib_rxq_mpool_init(uct_ib_iface_t *iface,
                                          const uct_ib_rxq_params_t *params)
{
    uct_iface_mpool_params_t mp_params;

    uct_rx_desc_layout_init(&iface->super, params->priv_size, params->hdr_len,
                            params->seg_size, params->layout);
    uct_rx_desc_release_init(params->release, params->layout);
    memset(&mp_params, 0, sizeof(mp_params));
    uct_rx_desc_mpool_params(params->layout, &mp_params);
    mp_params.elems_per_chunk = 128;
    mp_params.max_elems       = 2 * iface->config.rx_queue_len;
    mp_params.obj_init        = uct_ib_rx_desc_obj_init;
    mp_params.name            = params->mp_name;
    return uct_iface_mpool_init(&iface->super, params->mp, &mp_params);
}

ucs_status_t uct_ib_rxq_init(uct_ib_rxq_t *rxq, uct_ib_iface_t *iface,
                             const uct_ib_rxq_params_t *params)
{
    unsigned max_batch = ucs_min(params->max_batch, UCT_IB_RX_BATCH_MAX);

    rxq->posted   = 0;
    rxq->max      = iface->config.rx_queue_len;
    rxq->target   = ucs_min(params->init_fill, rxq->max);
    rxq->low      = 0;
    rxq->batch    = ucs_max(1, ucs_min(iface->config.rx_max_batch, max_batch));
    rxq->qp       = NULL;
    rxq->srq      = NULL;
    rxq->mp       = params->mp;
    rxq->layout   = params->layout;
    rxq->name     = params->name;
    rxq->dev_name = iface->super.dev_name;
    return uct_ib_rxq_mpool_init(iface, params);
}

ucs_status_t uct_ib_rxq_start(uct_ib_rxq_t *rxq, struct ibv_qp *qp,
                              struct ibv_srq *srq)
{
    rxq->qp  = qp;
    rxq->srq = (qp == NULL) ? srq : NULL;
    if (uct_ib_rxq_post(rxq) == 0) {
        ucs_error("%s %s: could not post any receive buffer", rxq->name,
                  rxq->dev_name);
        return UCS_ERR_NO_MEMORY;
    }
    uct_ib_rxq_arm_limit(rxq);
    return UCS_OK;
}

void uct_ib_rxq_cleanup(uct_ib_rxq_t *rxq)
{
    ucs_mpool_cleanup(rxq->mp, 0);
}

void uct_ib_rxq_grow(uct_ib_rxq_t *rxq)
{
    rxq->low    = 0;
    rxq->target = ucs_min(rxq->target * 2, rxq->max);
    uct_ib_rxq_post(rxq);
    uct_ib_rxq_arm_limit(rxq);
}
